"""ImageLocality, with the cases of upstream's ``plugins/imagelocality/image_locality_test.go``
(``TestImageLocalityPriority``, ``TestNormalizedImageName``)."""

from __future__ import annotations

from typing import Any

import pytest

from observatory.scheduling import PodInfo, Snapshot, schedule_one
from observatory.scheduling.imagelocality import calculate_priority, image_locality_scores, normalized_image_name

from .objects import node, pod

MB = 1024 * 1024


def imaged(name: str, *images: tuple[list[str], int]) -> dict[str, Any]:
    out = node(name)
    out["status"]["images"] = [{"names": names, "sizeBytes": size * MB} for names, size in images]
    return out


def node_403002000(name: str) -> dict[str, Any]:
    return imaged(name, (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
                  (["gcr.io/300:latest", "gcr.io/300:v1"], 300), (["gcr.io/2000:latest"], 2000))


def node_25010(name: str) -> dict[str, Any]:
    return imaged(name, (["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10))


def node_60040900(name: str) -> dict[str, Any]:
    return imaged(name, (["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900))


def node_300600900(name: str) -> dict[str, Any]:
    return imaged(name, (["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900))


def node_400030(name: str) -> dict[str, Any]:
    return imaged(name, (["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30))


def node_203040(name: str) -> dict[str, Any]:
    return imaged(name, (["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40))


def with_images(*images: str, init: tuple[str, ...] = ()) -> dict[str, Any]:
    out = pod("p")
    out["spec"]["containers"] = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    if init:
        out["spec"]["initContainers"] = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    return out


def scores(the_pod: dict, nodes: list[dict]) -> list[int]:
    snap = Snapshot(nodes, [])
    return image_locality_scores(PodInfo.from_pod(the_pod), list(snap), snap)


@pytest.mark.parametrize(("images", "init", "nodes", "want"), [
    # image 40 on 1 of 2 nodes: 20 MB, below 23 MB -> 0; image 250: 125 MB -> 100 * (125 - 23) / (2000 - 23) = 5
    (("gcr.io/40", "gcr.io/250"), (), [node_403002000, node_25010], [0, 5]),
    # 40 / 2 + 300 / 2 = 170 MB -> 7
    (("gcr.io/40", "gcr.io/300"), (), [node_403002000, node_25010], [7, 0]),
    # 4000 / 2 is clamped to the 2000 MB maximum of two containers -> 100; 10 / 2 -> 0
    (("gcr.io/10", "gcr.io/4000"), (), [node_400030, node_25010], [100, 0]),
    # three containers (maximum 3000 MB): 600 * 2/3 + 900 * 2/3 = 1000 -> 32; + 300 / 3 = 1100 -> 36
    (("gcr.io/300", "gcr.io/600", "gcr.io/900"), (), [node_60040900, node_300600900, node_400030], [32, 36, 0]),
    # 30 on both nodes (30) + 40 on one (20) = 50 -> 1; 30 alone -> 0
    (("gcr.io/30", "gcr.io/40"), (), [node_203040, node_400030], [1, 0]),
    # init containers count: 300 on 1 of 3 nodes = 100 MB of 2 containers' 2000 -> 3
    (("gcr.io/30",), ("gcr.io/300",), [node_403002000, node_203040, node_400030], [3, 0, 0]),
])
def test_image_locality_priority(images, init, nodes, want):
    built = [make(f"machine{i}") for i, make in enumerate(nodes, 1)]
    assert scores(with_images(*images, init=init), built) == want


@pytest.mark.parametrize(("image", "want"), [
    ("root", "root:latest"), ("root:tag", "root:tag"), ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("root@sha256:" + "a" * 64, "root@sha256:" + "a" * 64),
])
def test_normalized_image_name(image, want):
    assert normalized_image_name(image) == want


def test_thresholds():
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 2) == 100
    assert calculate_priority(0, 0) == 0


def test_names_must_match_exactly_as_the_runtime_reports_them():
    """containerd reports ``docker.io/library/nginx:1.25``; a pod asking for ``nginx:1.25`` does not match it
    (upstream's ``normalizedImageName`` TODO), the fully qualified reference does."""
    nodes = [imaged("a", (["docker.io/library/nginx:1.25"], 600)), node("b")]
    assert scores(with_images("nginx:1.25"), nodes) == [0, 0]
    assert scores(with_images("docker.io/library/nginx:1.25"), nodes) == [28, 0]  # 300 MB: 100 * 277 // 977


def test_image_locality_changes_the_chosen_node():
    """Node b is busier (LeastAllocated prefers a), but holds the pod's 900 MB image on 2 of 3 nodes."""
    nodes = [node("a"), imaged("b", (["gcr.io/big:latest"], 900)), imaged("c", (["gcr.io/big:latest"], 900))]
    busy = [pod("x", node_name="b", requests={"cpu": "200m", "memory": "256Mi"}, uid="x"),
            pod("y", node_name="c", requests={"cpu": "400m", "memory": "512Mi"}, uid="y")]
    assert schedule_one(with_images("registry.k8s.io/pause:3.9"), nodes, busy).node == "a"
    decision = schedule_one(with_images("gcr.io/big"), nodes, busy)
    assert decision.node == "b"
    assert decision.scores["b"].by_plugin["ImageLocality"] == 59  # 600 MB: 100 * 577 // 977
