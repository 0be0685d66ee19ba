"""The ImageLocality score plugin: prefer nodes that already hold the pod's images, weighed by how far they spread.

Reproduces ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go`` of kube-scheduler v1.34.1 and the
cache's ``ImageStates`` (``pkg/scheduler/backend/cache``):

* a node's images are its ``status.images``: every name of every entry counts, with the entry's ``sizeBytes``;
  the snapshot counts, per name, how many nodes report it (``ImageStateSummary.NumNodes``);
* each init container's and container's ``image`` is normalised (``normalizedImageName``: ``:latest`` is added
  when the last ``:`` does not come after the last ``/``) and looked up by exact name: ``nginx`` becomes
  ``nginx:latest``, which does not match the ``docker.io/library/nginx:latest`` containerd reports, as upstream;
* an image found scores ``int(size * numNodes / totalNodes)`` (``scaledImageScore``; totalNodes is every node in
  the snapshot, not only the feasible ones), summed over the containers;
* ``calculatePriority``: the sum is clamped to ``[23 MiB, 1000 MiB * containers]`` (``minThreshold``,
  ``maxContainerThreshold``) and scaled to ``100 * (sum - min) // (max - min)``; no NormalizeScore, weight 1.

Upstream's summary keeps the size reported by the first node the cache saw with that name; here each node's own
``sizeBytes`` is used (the same figure wherever a registry serves the same image).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._json import listed

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo, Snapshot

__all__ = ["IMAGE_LOCALITY", "MAX_CONTAINER_THRESHOLD", "MIN_THRESHOLD", "calculate_priority",
           "image_locality_scores", "node_images", "normalized_image_name"]

IMAGE_LOCALITY = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: ``name:latest`` when ``name`` carries no tag (``parsers.DefaultImageTag``)."""
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def node_images(node: Mapping[str, Any]) -> dict[str, int]:
    """A Node's ``status.images`` as name -> ``sizeBytes`` (every name of every entry; the first entry naming it
    wins)."""
    status = node.get("status") if isinstance(node, Mapping) else None
    images = status.get("images") if isinstance(status, Mapping) else None
    if not images:
        return {}
    out: dict[str, int] = {}
    for image in listed(images):
        if not isinstance(image, Mapping):
            continue
        size = image.get("sizeBytes")
        size = size if isinstance(size, int) and not isinstance(size, bool) else 0
        for name in listed(image.get("names")):
            if isinstance(name, str):
                out.setdefault(name, size)
    return out


def calculate_priority(sum_scores: int, containers: int) -> int:
    """``calculatePriority``: the summed scaled sizes as a 0-100 score for a pod with ``containers`` containers
    (init containers included)."""
    if containers <= 0:
        return 0
    high = MAX_CONTAINER_THRESHOLD * containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), high)
    return 100 * (clamped - MIN_THRESHOLD) // (high - MIN_THRESHOLD)


def image_locality_scores(pod: PodInfo, nodes: Sequence[NodeInfo], snapshot: Snapshot) -> list[int]:
    """ImageLocality's Score for each of ``nodes``, in order."""
    names = [normalized_image_name(image) for image in pod.images]
    spread = {name: count for name in set(names) if (count := snapshot.image_nodes.get(name, 0)) > 0}
    if not spread:  # no node holds any of them: every sum is 0, below the threshold
        return [0] * len(nodes)
    total = len(snapshot)
    ratios = {name: count / total for name, count in spread.items()}
    wanted = [name for name in names if name in ratios]
    out = []
    for node in nodes:
        images = node.images
        total_score = 0
        for name in wanted:
            size = images.get(name)
            if size is not None:
                total_score += int(size * ratios[name])
        out.append(calculate_priority(total_score, len(names)))
    return out
