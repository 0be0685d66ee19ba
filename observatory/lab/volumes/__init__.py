"""Storage in the lab: PersistentVolumeClaims, PersistentVolumes and StorageClasses served the way a kind cluster
serves them.

* :mod:`.strategy`: defaulting, the DefaultStorageClass admission plugin, create-time status and validation;
* :mod:`.printing`: the server-side table columns and cells of ``kubectl get pvc|pv|sc``;
* :mod:`.helpers`: upstream's storage helpers (classes, access modes, volume matching);
* :mod:`.quantity` and :mod:`.godiff`: ``Quantity.String()`` and the diff validation.go appends to its errors.

The PV controller and the local-path provisioner that act on these objects are simulated components under
:mod:`observatory.lab.simulation`.
"""

from __future__ import annotations

from typing import Any

KIND_DEFAULT_CLASS: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {
        "name": "standard",
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": (
                '{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"annotations":'
                '{"storageclass.kubernetes.io/is-default-class":"true"},"name":"standard"},'
                '"provisioner":"rancher.io/local-path","reclaimPolicy":"Delete",'
                '"volumeBindingMode":"WaitForFirstConsumer"}\n'),
            "storageclass.kubernetes.io/is-default-class": "true",
        },
    },
    "provisioner": "rancher.io/local-path",
    "reclaimPolicy": "Delete",
    "volumeBindingMode": "WaitForFirstConsumer",
}
"""The ``standard`` class a kind node image ships in ``/kind/manifests/default-storage.yaml`` and kind applies with
``kubectl apply`` at cluster creation (kind ``pkg/cluster/internal/create/actions/installstorage/storage.go``):
the default class, provisioned by rancher's local-path-provisioner, reclaim policy Delete, binding delayed until a
pod using the claim is scheduled."""
