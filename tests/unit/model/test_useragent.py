"""client-go's User-Agent format (``staging/src/k8s.io/client-go/rest/config.go``) and the agents the lab's writers
and observatory send."""

from __future__ import annotations

from observatory.kube.connect import observatory_agent
from observatory.lab.audit import identity
from observatory.model.audit import short_agent
from observatory.model.useragent import adjust_commit, adjust_version, go_platform, user_agent


def test_adjust_version_and_commit_as_client_go():
    # adjustVersion: SplitN(v, "-", 2)[0]; adjustCommit: c[:7]; both "unknown" when empty
    assert adjust_version("v1.34.1-rc.1+abc") == "v1.34.1"
    assert adjust_version("v0.0.0-master+$Format:%H$") == "v0.0.0"
    assert adjust_version("") == "unknown"
    assert adjust_commit("93248f9ae092f571eb870b7664c534bfc7d00f03") == "93248f9"
    assert adjust_commit("$Format:%H$") == "$Format"
    assert adjust_commit("abc") == "abc"
    assert adjust_commit("") == "unknown"


def test_default_agent_and_add_user_agent_suffix():
    # buildUserAgent: "%s/%s (%s/%s) kubernetes/%s"; AddUserAgent: DefaultKubernetesUserAgent() + "/" + name
    assert user_agent("kube-scheduler", "v1.34.1", "93248f9ae0", suffix="scheduler") == \
        "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/93248f9/scheduler"
    assert user_agent("kubelet", "v1.34.1", "93248f9ae0", goos="linux", goarch="arm64") == \
        "kubelet/v1.34.1 (linux/arm64) kubernetes/93248f9"
    assert user_agent("", "", "") == "unknown/unknown (linux/amd64) kubernetes/unknown"


def test_go_platform_names():
    assert go_platform("linux", "x86_64") == ("linux", "amd64")
    assert go_platform("darwin", "arm64") == ("darwin", "arm64")
    assert go_platform("win32", "AMD64") == ("windows", "amd64")
    assert go_platform("linux", "aarch64") == ("linux", "arm64")


def test_the_lab_components_agents_carry_the_labs_version_and_commit():
    # /version: gitVersion v1.34.1, gitCommit observatory-lab-<version> -> adjustCommit keeps "observa"
    assert identity.KUBELET_AGENT == "kubelet/v1.34.1 (linux/amd64) kubernetes/observa"
    assert identity.SCHEDULER_AGENT == "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/observa/scheduler"
    assert identity.SCHEDULER_LEADER_ELECTION_AGENT == \
        "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/observa/leader-election"
    assert identity.controller_agent("node-controller") == ("kube-controller-manager/v1.34.1 (linux/amd64) "
                                                           "kubernetes/observa/system:serviceaccount:kube-system:"
                                                           "node-controller")
    assert identity.LOCAL_PATH_PROVISIONER_AGENT == "local-path-provisioner/v0.0.0 (linux/amd64) kubernetes/$Format"


def test_short_agent_reads_each_program_back():
    assert short_agent(identity.KUBELET_AGENT) == "kubelet"
    assert short_agent(identity.SCHEDULER_AGENT) == "kube-scheduler"
    assert short_agent(identity.controller_agent("pod-garbage-collector")) == "kube-controller-manager"
    assert short_agent(observatory_agent()) == "observatory"


def test_observatorys_agent_is_honest_client_go_format():
    agent = observatory_agent()
    program, rest = agent.split("/", 1)
    assert program == "observatory"
    assert rest.startswith("v") and " (" in rest and rest.endswith(") kubernetes/unknown")
    assert "kube-scheduler" not in agent
    assert observatory_agent("schedule").endswith("kubernetes/unknown/schedule")


def test_identities_users_and_groups():
    kubelet = identity.kubelet("pair-worker", "172.18.0.3")
    assert kubelet.user.username == "system:node:pair-worker"
    assert kubelet.user.groups == ("system:nodes", "system:authenticated")
    assert kubelet.source_ips == ("172.18.0.3",)
    gc = identity.controller(identity.POD_GARBAGE_COLLECTOR, "172.18.0.2")
    assert gc.user.username == "system:serviceaccount:kube-system:pod-garbage-collector"
    assert gc.user.groups == ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
    provisioner = identity.local_path_provisioner("10.244.0.7")
    assert provisioner.user.username == \
        "system:serviceaccount:local-path-storage:local-path-provisioner-service-account"
