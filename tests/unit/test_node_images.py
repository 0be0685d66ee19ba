"""The lab kubelet's ``status.images``: the kubelet's ``nodestatus.Images`` setter over containerd's names."""

from __future__ import annotations

from observatory.lab.simulation.images import (
    NODE_STATUS_MAX_IMAGES,
    image_ref,
    image_size,
    node_status_images,
    repo_digest,
)
from observatory.scheduling import PodInfo, Snapshot
from observatory.scheduling.imagelocality import image_locality_scores


def test_names_are_digest_then_tag_fully_qualified_largest_first():
    images = node_status_images(["nginx:1.27", "registry.k8s.io/pause:3.9", "nginx:1.27", "busybox"])
    assert [i["names"][1] for i in images] == sorted(
        ["docker.io/library/nginx:1.27", "registry.k8s.io/pause:3.9", "docker.io/library/busybox:latest"],
        key=lambda ref: -next(i["sizeBytes"] for i in images if i["names"][1] == ref))
    sizes = [i["sizeBytes"] for i in images]
    assert sizes == sorted(sizes, reverse=True) and all(10_000_000 <= s < 180_000_000 for s in sizes)
    nginx = next(i for i in images if i["names"][1] == "docker.io/library/nginx:1.27")
    assert nginx == {"names": [repo_digest("docker.io/library/nginx:1.27"), "docker.io/library/nginx:1.27"],
                     "sizeBytes": image_size("nginx:1.27")}
    assert nginx["names"][0].startswith("docker.io/library/nginx@sha256:") and len(nginx["names"][0]) == 95


def test_references_as_containerd_names_them():
    assert image_ref("nginx") == "docker.io/library/nginx:latest"
    assert image_ref("bitnami/redis:7") == "docker.io/bitnami/redis:7"
    assert image_ref("localhost:5000/app") == "localhost:5000/app:latest"
    assert image_ref("quay.io/x/y:1") == "quay.io/x/y:1"


def test_at_most_fifty_images():
    assert len(node_status_images(f"img{i}:1" for i in range(80))) == NODE_STATUS_MAX_IMAGES


def test_image_locality_reads_what_the_kubelet_reports():
    node = {"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                                  "images": node_status_images(["quay.io/big/app:1"] * 1)}}
    snap = Snapshot([node, {"metadata": {"name": "b"}, "status": {"allocatable": {"pods": "110"}}}], [])
    pod = PodInfo.from_pod({"metadata": {"name": "p", "namespace": "d"},
                            "spec": {"containers": [{"name": "c", "image": "quay.io/big/app:1"}]}})
    size = image_size("quay.io/big/app:1")
    expected = 0 if size // 2 < 23 * 1024 * 1024 else 100 * (size // 2 - 23 * 1024 * 1024) // (977 * 1024 * 1024)
    assert image_locality_scores(pod, list(snap), snap) == [expected, 0]
