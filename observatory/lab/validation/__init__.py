"""kube-apiserver's validation and option parsing, on the plain JSON dicts the lab stores.

Field errors and the 422 they make (:mod:`.field`), name formats (:mod:`.names`), ObjectMeta (:mod:`.meta`), pods
(:mod:`.pod`, :mod:`.scheduling`, :mod:`.podupdate`), nodes (:mod:`.node`), quantities as messages print them
(:mod:`.quantity`), the decoder's group/version/kind checks and ``checkName`` (:mod:`.kinds`) and ListOptions
(:mod:`.listoptions`). Each module names the upstream file it follows and quotes the texts it reproduces.
"""
