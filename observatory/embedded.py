"""The embedded lab as a cluster: the lab's API server with its simulated control plane.

:class:`EmbeddedLab` is what ``observatory --lab``, ``observatory lab serve``, ``why`` and ``schedule`` without a
kubeconfig, the tests and the benchmarks start. It is a :class:`~observatory.lab.server.LabServer` (the API server,
kubelets, pod GC and node lifecycle) whose default-scheduler is observatory's own scheduler.
"""

from __future__ import annotations

from observatory.lab.server import LabServer

__all__ = ["EmbeddedLab"]


class EmbeddedLab(LabServer):
    """One running lab cluster. ``await start()``, read :attr:`url` and :attr:`kubeconfig_path`, ``await stop()``."""
