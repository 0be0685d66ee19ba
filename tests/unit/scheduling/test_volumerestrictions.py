"""VolumeRestrictions: ReadWriteOncePod claims in use anywhere in the cluster and in-tree disk conflicts on the node
(``volume_restrictions_test.go``: ``TestAccessModeConflicts``, ``TestGCEDiskConflicts``), and the FitError and
preemption text a conflict gives."""

from __future__ import annotations

from observatory.scheduling import PodInfo, schedule_one
from observatory.scheduling.volumerestrictions import ERR_DISK_CONFLICT, ERR_READ_WRITE_ONCE_POD, prefilter

from .volume_objects import node, pod, pv, pvc, snapshot

RWOP = ("ReadWriteOncePod",)


def rwop_snapshot(holder_priority: int = 0):
    return snapshot([node("node-a"), node("node-b")],
                    pods=[pod("holder", "data", on="node-a", priority=holder_priority)],
                    claims=[pvc("data", "wait-sc", bound_to="pv-1", modes=RWOP)],
                    volumes=[pv("pv-1", "wait-sc", claim="data", phase="Bound", modes=RWOP)])


def test_read_write_once_pod_claim_in_use_rejects_every_node():
    decision = schedule_one(pod("second", "data"), rwop_snapshot())
    assert {n: (v.plugin, v.code, v.reasons) for n, v in decision.verdicts.items()} == {
        n: ("VolumeRestrictions", "Unschedulable", (ERR_READ_WRITE_ONCE_POD,)) for n in ("node-a", "node-b")}
    assert decision.message == (
        "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No "
        "preemption victims found for incoming pod.")


def test_preemption_of_the_claims_holder_would_help_only_on_its_node():
    """RemovePod takes the holder's reference out of the count, so the dry run finds it a victim on node-a."""
    decision = schedule_one(pod("second", "data", priority=100), rwop_snapshot(holder_priority=0))
    assert decision.preemption_candidates == ("node-a",)
    assert decision.preemption["node-a"].victims == ("default/holder",)


def test_unused_or_other_mode_claims_do_not_conflict():
    """A ReadWriteOncePod claim no placed pod mounts, or the same claim once it is ReadWriteOnce: Skip."""
    snap = rwop_snapshot()
    snap.volumes.set_claim(pvc("free", "wait-sc", bound_to="pv-2", modes=RWOP))
    assert prefilter(PodInfo.from_pod(pod("second", "free")), snap.volumes, snap) is None
    info = PodInfo.from_pod(pod("second", "data"))
    state = prefilter(info, snap.volumes, snap)
    assert state is not None and not isinstance(state, str) and state.conflicts == 1
    snap.volumes.set_claim(pvc("data", "wait-sc", bound_to="pv-1", modes=("ReadWriteOnce",)))
    assert prefilter(info, snap.volumes, snap) is None


def test_missing_claim_rejects_at_prefilter():
    snap = snapshot([node("node-a")])
    assert prefilter(PodInfo.from_pod(pod("p", "nope")), snap.volumes, snap) == \
        'persistentvolumeclaim "nope" not found'


def gce(pd: str, read_only: bool = False):
    return [{"name": "disk", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}]


def test_gce_disk_conflicts():
    existing = pod("old", on="node-a", volumes=gce("foo"))
    snap = snapshot([node("node-a")], pods=[existing])
    verdict = schedule_one(pod("new", volumes=gce("foo")), snap).verdicts["node-a"]
    assert (verdict.plugin, verdict.code, verdict.reasons) == ("VolumeRestrictions", "Unschedulable",
                                                               (ERR_DISK_CONFLICT,))
    assert schedule_one(pod("new", volumes=gce("bar")), snap).node == "node-a"
    both_ro = snapshot([node("node-a")], pods=[pod("old", on="node-a", volumes=gce("foo", True))])
    assert schedule_one(pod("new", volumes=gce("foo", True)), both_ro).node == "node-a"
