"""read_lease and ClusterSource.read_lease: kube-scheduler's Lease as the lab's simulated scheduler holds it, and
every way it can fail to be read (404, 403, another HTTP error, no answer) as data, never as an exception."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from observatory.kube.connect import connect
from observatory.kube.lease import lease_path, read_lease
from observatory.kube.source import ClusterSource
from observatory.lab.kubeconfig import write_kubeconfig
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.kube.helpers import closed_port, until


def test_lease_path():
    assert lease_path("kube-system", "kube-scheduler") == \
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"


@pytest.mark.parametrize("lab_settings", [LabSettings(**{**API_ONLY, "scheduler": True})])
async def test_the_simulated_scheduler_holds_the_kube_scheduler_lease(lab, conn):
    # observatory/embedded.py: the lab's default-scheduler is leader-elected on kube-system/kube-scheduler, identity
    # "<control-plane node>_<uuid>", leaseDurationSeconds 15, renewed every 2 s.
    await until(lambda: lab.store.get("leases", "kube-system", "kube-scheduler"), "the scheduler's Lease")
    lease = await ClusterSource(conn).read_lease("kube-system", "kube-scheduler")
    assert (lease.key, lease.problem, lease.duration_seconds) == ("kube-system/kube-scheduler", "", 15)
    assert lease.holder.startswith("pair-control-plane_")
    now = datetime.now(UTC)
    assert lease.renewed is not None and now - timedelta(seconds=15) <= lease.renewed <= now + timedelta(seconds=1)
    assert lease.live(now)


async def test_a_missing_lease_is_not_found(lab, conn):  # the default lab_settings run no scheduler
    lease = await read_lease(conn.api, "kube-system", "kube-scheduler")
    assert (lease.key, lease.holder, lease.renewed, lease.problem) == ("kube-system/kube-scheduler", "", None,
                                                                       "not found")
    assert not lease.live(datetime.now(UTC))


FORBIDDEN = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": 'leases.coordination.k8s.io "kube-scheduler" is forbidden: User "system:serviceaccount:team:"'
                        'viewer" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace '
                        '"kube-system"',
             "reason": "Forbidden", "details": {"name": "kube-scheduler", "group": "coordination.k8s.io",
                                                "kind": "leases"}, "code": 403}


async def test_forbidden_carries_the_servers_message(fake):
    api, conn = fake
    api.list_script.append((403, {"Content-Type": "application/json"}, FORBIDDEN))
    lease = await read_lease(conn.api, "kube-system", "kube-scheduler")
    assert lease.problem == "forbidden: " + FORBIDDEN["message"]
    assert api.requests == [("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler")]


async def test_other_http_errors_name_the_code(fake):
    api, conn = fake
    api.list_script.append((500, {}, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                      "message": "etcdserver: request timed out", "code": 500}))
    api.list_script.append((502, {}, b"Bad Gateway"))
    first = await read_lease(conn.api, "kube-system", "kube-scheduler")
    second = await read_lease(conn.api, "kube-system", "kube-scheduler")
    assert (first.problem, second.problem) == ("HTTP 500: etcdserver: request timed out", "HTTP 502: Bad Gateway")


async def test_no_answer_is_unreachable(tmp_path):
    conn = await connect(str(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{closed_port()}")))
    try:
        lease = await read_lease(conn.api, "kube-system", "kube-scheduler", timeout=5)
    finally:
        await conn.close()
    assert lease.problem == "unreachable: connection refused"
