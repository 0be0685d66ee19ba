"""The embedded Kubernetes-API-compatible lab server.

It serves the core/v1 subset a scheduling lesson touches (namespaces, nodes, pods with status and binding, events),
with kube-apiserver's semantics and exact strings as pinned in the project's API reference (v1.34.1 wording).
Clients reach it only over HTTP, exactly as they reach a real cluster.
"""
