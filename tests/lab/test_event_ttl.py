"""Events expire ``event_ttl`` after their last write, through either API group, and watchers see DELETED, as
etcd's lease deletes them under kube-apiserver (``--event-ttl``; ``lab/eventttl.py``). One lab with a 1 s TTL;
waits are on the watch stream, with deadlines, never fixed sleeps."""

from __future__ import annotations

import asyncio
import json

import pytest

from observatory.settings import LabSettings
from tests.conftest import API_ONLY

NS = "default"


@pytest.fixture
def lab_settings() -> LabSettings:
    return LabSettings(event_ttl=1, **API_ONLY)


async def test_events_of_both_groups_expire_and_watchers_see_deleted(http, lab):
    core = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "core.1", "namespace": NS},
            "involvedObject": {"kind": "Pod", "namespace": NS, "name": "p", "apiVersion": "v1"},
            "reason": "Pulled", "message": "pulled", "source": {"component": "kubelet"}, "type": "Normal",
            "count": 1, "firstTimestamp": "2026-11-29T09:12:07Z", "lastTimestamp": "2026-11-29T09:12:07Z"}
    v1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "v1.1", "namespace": NS},
          "eventTime": "2026-11-29T09:12:07.123456Z", "reportingController": "my-scheduler",
          "reportingInstance": "my-scheduler-host1", "action": "Binding", "reason": "Scheduled",
          "regarding": {"kind": "Pod", "namespace": NS, "name": "p", "apiVersion": "v1"}, "note": "n",
          "type": "Normal"}
    rv = str(lab.store.resource_version)
    async with http.get(f"/api/v1/namespaces/{NS}/events?watch=1&resourceVersion={rv}&timeoutSeconds=30") as watch:
        async with http.post(f"/api/v1/namespaces/{NS}/events", json=core) as resp:
            assert resp.status == 201, await resp.text()
        async with http.post(f"/apis/events.k8s.io/v1/namespaces/{NS}/events", json=v1) as resp:
            assert resp.status == 201, await resp.text()
        seen = []
        async with asyncio.timeout(20):
            while len(seen) < 4:
                line = await watch.content.readline()
                assert line, f"the watch ended after {seen}"
                doc = json.loads(line)
                seen.append((doc["type"], doc["object"]["metadata"]["name"]))
    assert sorted(seen) == [("ADDED", "core.1"), ("ADDED", "v1.1"), ("DELETED", "core.1"), ("DELETED", "v1.1")]
    assert seen[:2] == [("ADDED", "core.1"), ("ADDED", "v1.1")]
    for path in (f"/api/v1/namespaces/{NS}/events/core.1", f"/apis/events.k8s.io/v1/namespaces/{NS}/events/v1.1"):
        async with http.get(path) as resp:
            assert resp.status == 404
