"""What a node's container runtime reports about the images it pulled: names, digests, sizes, ``status.images``.

Reproduces the kubelet's ``nodestatus.Images`` setter (``pkg/kubelet/nodestatus/setters.go``) over containerd's
image list: images sorted by size, largest first, at most ``nodeStatusMaxImages`` (50, the kubelet default), each
``{"names": [repo digests..., repo tags...], "sizeBytes": N}`` with at most ``MaxNamesPerImageInNodeStatus`` (5)
names. containerd names images fully qualified: ``nginx`` is ``docker.io/library/nginx:latest`` and its digest
``docker.io/library/nginx@sha256:…`` (the lab's digests and sizes are made up from the name, the same on every node).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

__all__ = ["MAX_NAMES_PER_IMAGE", "NODE_STATUS_MAX_IMAGES", "image_ref", "image_size", "node_status_images",
           "repo_digest"]

NODE_STATUS_MAX_IMAGES = 50
MAX_NAMES_PER_IMAGE = 5


def image_ref(image: str) -> str:
    """The fully qualified image name the runtime reports (``docker.io/library/nginx:latest``)."""
    name = image.split("@")[0]
    first, slash, _ = name.partition("/")
    if not slash or ("." not in first and ":" not in first and first != "localhost"):  # no registry host
        name = "docker.io/" + ("" if slash else "library/") + name
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else name + ":latest"


def repo_digest(ref: str) -> str:
    """``repository@sha256:…`` for a fully qualified ``ref`` (the lab's digest is the sha256 of the name)."""
    return f"{ref.rsplit(':', 1)[0]}@sha256:{hashlib.sha256(ref.encode()).hexdigest()}"


def image_size(image: str) -> int:
    """The compressed size, in bytes, the lab's registry serves for ``image``: 10 MB to about 178 MB."""
    return 10_000_000 + int.from_bytes(hashlib.sha256(image.encode()).digest()[:3], "big") * 10


def node_status_images(images: Iterable[str]) -> list[dict[str, Any]]:
    """``status.images`` for the images a node pulled (as written in pod specs; the same reference twice is one
    image)."""
    by_ref: dict[str, int] = {}
    for image in images:
        by_ref.setdefault(image_ref(image), image_size(image))
    ordered = sorted(by_ref.items(), key=lambda item: (-item[1], item[0]))[:NODE_STATUS_MAX_IMAGES]
    return [{"names": [repo_digest(ref), ref][:MAX_NAMES_PER_IMAGE], "sizeBytes": size} for ref, size in ordered]
