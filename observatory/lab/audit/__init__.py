"""kube-apiserver's auditing in the lab: policy, events, the log and webhook backends, and who each requester is.

The contract between the parts is :mod:`.types`: whoever serves a request (the HTTP routes, or a simulated component
writing through the registry in-process) describes it as an :class:`~.types.AuditedRequest` with its
:class:`~.types.Requester`, asks the :class:`~.types.Auditor` to :meth:`~.types.Auditor.begin` it, and
:meth:`~.types.AuditHandle.finish`-es the handle with the answer.
"""
