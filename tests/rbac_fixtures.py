"""The RBAC lab the lab, scheduler and UI tests share: a policy with four users, a scenario with two team
namespaces, and the ``rbac_files`` and ``rbac_lab`` fixtures (registered for every test by tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings
from tests.conftest import API_ONLY

POLICY = """
users:
- name: alice                 # may read pods and events of team-a, nothing else
  token: alice-token-1111
  namespaces: [team-a]
  rules:
  - verbs: [get, list, watch]
    resources: [pods, events]
- name: binder                # alice's rights, plus binding in team-a and reading nodes
  token: binder-token-2222
  namespaces: [team-a]
  rules:
  - verbs: [get, list, watch]
    resources: [pods, events]
  - verbs: [create]
    resources: [pods/binding]
  - verbs: [get, list, watch]
    resources: [nodes]
    namespaces: ["*"]
- name: carol                 # may bind in team-a but not read nodes
  token: carol-token-4444
  namespaces: [team-a]
  rules:
  - verbs: [get, list, watch]
    resources: [pods, events]
  - verbs: [create]
    resources: [pods/binding]
- name: admin
  token: admin-token-3333
  namespaces: ["*"]
  rules:
  - verbs: ["*"]
    resources: ["*"]
"""

SCENARIO = """
kind: Scenario
description: >-
  pair, plus team-a (web bound to pair-worker and not started; waiting for a scheduler nobody runs) and team-b.
extends: pair
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team-a}
spec:
  nodeName: pair-worker
  containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: team-a}
spec:
  schedulerName: nobody-at-all
  containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: team-b}
spec:
  schedulerName: nobody-at-all
  containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
"""

TOKENS = {"alice": "alice-token-1111", "binder": "binder-token-2222", "carol": "carol-token-4444",
          "admin": "admin-token-3333"}


@pytest.fixture
def rbac_files(tmp_path) -> tuple[Path, Path]:
    policy, scenario = tmp_path / "rbac.yaml", tmp_path / "teams.yaml"
    policy.write_text(POLICY)
    scenario.write_text(SCENARIO)
    return policy, scenario


@pytest.fixture
async def rbac_lab(tmp_path, rbac_files):
    policy, scenario = rbac_files
    lab = EmbeddedLab(LabSettings(rbac=policy, bookmark_interval=0.2, **API_ONLY), scenario=str(scenario),
                    kubeconfig_path=tmp_path / "kc" / "kubeconfig")
    await lab.start()
    try:
        yield lab
    finally:
        await lab.stop()
