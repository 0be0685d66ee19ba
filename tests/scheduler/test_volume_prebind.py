"""VolumeBinding's PreBind (:mod:`observatory.scheduler.volumebinder`) and the scheduler cache's volume watches,
without a server: the PUTs go to a stand-in that answers as kube-apiserver would and plays the PV controller
by feeding the cache the versions its watch would show."""

from __future__ import annotations

import pytest

from observatory.kube.fetch import ApiError
from observatory.model.deltas import Deleted, Relisted, Upserted
from observatory.scheduler import volumebinder
from observatory.scheduler.cache import ClusterCache
from observatory.scheduling import PodInfo
from observatory.scheduling.volumeplugins import reserve_volumes
from observatory.scheduling.volumes import ANN_BIND_COMPLETED, ANN_SELECTED_NODE
from tests.unit.scheduling.volume_objects import PROVISIONING, WAIT, node, pod, pv, pvc

PVCS, PVS, CLASSES = "persistentvolumeclaims", "persistentvolumes", "storageclasses"


def cache_with(claims, volumes=(), classes=(WAIT, PROVISIONING)) -> ClusterCache:
    cache = ClusterCache()
    cache.apply_node(Relisted("nodes", (node("node-a"), node("node-b")), "1"))
    cache.apply_volume(PVCS, Relisted(PVCS, tuple(claims), "1"))
    cache.apply_volume(PVS, Relisted(PVS, tuple(volumes), "1"))
    cache.apply_volume(CLASSES, Relisted(CLASSES, tuple(classes), "1"))
    return cache


def test_the_cache_keeps_its_catalog_across_a_relist_and_follows_the_watches():
    cache = cache_with([pvc("data", "provisioning-sc")])
    cache.apply_bound(Relisted("pods", (), "2"))  # rebuilds the Snapshot
    assert cache.snapshot.volumes is cache.volumes
    assert cache.apply_volume(PVCS, Upserted(PVCS, pvc("more", "wait-sc")))
    assert cache.volumes.claim("default", "more") is not None
    cache.apply_volume(PVCS, Deleted(PVCS, pvc("more")))
    assert cache.volumes.claim("default", "more") is None
    cache.volumes_forbidden(PVS)
    assert not cache.volumes.usable


class Server:
    """Answers PUTs with a new resourceVersion and, when ``provision`` is set, plays the PV controller."""

    def __init__(self, cache: ClusterCache, provision: str = "", fail: ApiError | None = None) -> None:
        self.cache, self.provision, self.fail = cache, provision, fail
        self.puts: list[tuple[str, dict]] = []

    async def send_json(self, api, method, path, body, **_kw):
        assert method == "PUT"
        if self.fail is not None:
            raise self.fail
        self.puts.append((path, body))
        answer = {**body, "metadata": {**body["metadata"], "resourceVersion": "20"}}
        if self.provision == "bind":
            claim = pvc("data", "provisioning-sc", rv="21",
                        annotations={ANN_SELECTED_NODE: "node-b", ANN_BIND_COMPLETED: "yes"})
            claim["spec"]["volumeName"] = "pvc-123"
            self.cache.apply_volume(PVS, Upserted(PVS, pv("pvc-123", "provisioning-sc", claim="data", phase="Bound")))
            self.cache.apply_volume(PVCS, Upserted(PVCS, claim))
        elif self.provision == "reject":  # the provisioner gave up and took its selected-node annotation away
            self.cache.apply_volume(PVCS, Upserted(PVCS, pvc("data", "provisioning-sc", rv="21", annotations={
                "volume.kubernetes.io/storage-provisioner": "csi.example.com"})))
        return answer


@pytest.fixture
def plan_for():
    def make(cache: ClusterCache):
        plan = reserve_volumes(PodInfo.from_pod(pod("web", "data")), cache.snapshot, "node-b")
        assert plan is not None
        return plan
    return make


async def test_prebind_writes_the_selected_node_and_waits_for_the_claim_to_be_bound(monkeypatch, plan_for):
    cache = cache_with([pvc("data", "provisioning-sc")])
    server = Server(cache, provision="bind")
    monkeypatch.setattr(volumebinder, "send_json", server.send_json)
    failed = await volumebinder.bind_pod_volumes(None, cache, plan_for(cache), lambda: True, "web", poll=0)
    assert failed is None
    ((path, body),) = server.puts
    assert path == "/api/v1/namespaces/default/persistentvolumeclaims/data"
    assert body["kind"] == "PersistentVolumeClaim"
    assert body["metadata"]["annotations"][ANN_SELECTED_NODE] == "node-b"


@pytest.mark.parametrize(("provision", "fail", "gone", "want"), [
    ("reject", None, False, 'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC '
                            '"data"'),
    ("", ApiError(409, "Conflict", 'Operation cannot be fulfilled on persistentvolumeclaims "data": the object has '
                  'been modified; please apply your changes to the latest version and try again'), False,
     'running PreBind plugin "VolumeBinding": Operation cannot be fulfilled on persistentvolumeclaims "data": the '
     'object has been modified; please apply your changes to the latest version and try again'),
    ("", None, True, 'running PreBind plugin "VolumeBinding": binding volumes: pod does not exist any more: pod "web" '
                     'not found'),
    ("", None, False, 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'),
])
async def test_prebind_failures_carry_upstreams_text(monkeypatch, plan_for, provision, fail, gone, want):
    cache = cache_with([pvc("data", "provisioning-sc")])
    monkeypatch.setattr(volumebinder, "send_json", Server(cache, provision, fail).send_json)
    failed = await volumebinder.bind_pod_volumes(None, cache, plan_for(cache), lambda: not gone, "web", poll=0,
                                                 timeout=0.05 if not (provision or fail or gone) else 60)
    assert failed == want
