"""parse_fit_error on real FailedScheduling messages from many releases and schedulers, plus fuzzing.

Every expected parse below was written by hand from reading the message, never produced by running the parser.
Each real message names where it was captured. The fuzz tests call the unguarded ``_parse`` so that an exception
cannot hide behind parse_fit_error's safety net.
"""

from __future__ import annotations

import random
import time

import pytest

from observatory.scheduling.fiterror import (
    FitErrorParse,
    PreemptionParse,
    Reason,
    _parse,
    parse_fit_error,
    summary,
)

CP = "node-role.kubernetes.io/control-plane"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
DRA = "no new claims to deallocate"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"


def R(count, text, kind="unknown", **detail):
    return Reason(count, text, kind, detail)


def cpu(n):
    return R(n, "Insufficient cpu", "insufficient", resource="cpu")


def memory(n):
    return R(n, "Insufficient memory", "insufficient", resource="memory")


def taint(n, key, value, text=None):
    return R(n, text or f"node(s) had untolerated taint {{{key}: {value}}}", "taint", key=key, value=value)


def after_preemption(message):
    """What follows ``preemption: `` in the message: the PreemptionParse.raw we expect."""
    return message.split("preemption: ", 1)[1]


def check(message, **expected):
    """The whole parse equals the hand-written one (defaults as for a plain unrecognized message)."""
    got = parse_fit_error(message)
    assert got == FitErrorParse(raw=message, **expected)
    return got


# ---------------------------------------------------------------------------------------------------------------
# Reference §4.3 / §4.3a (the reference quotes real captures)

REF_134 = (  # k8s-api-reference.md §4.3, "1.34-style"
    f"0/3 nodes are available: 1 node(s) had untolerated taint {{{CP}: }}, 2 Insufficient cpu. preemption: 0/3 "
    f"nodes are available: 1 {NOT_HELPFUL}, 2 {NO_VICTIMS}."
)
REF_135 = (  # k8s-api-reference.md §4.3, "≥1.35" (PR #134740 removed the taint key/value)
    f"0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are "
    f"available: 1 {NOT_HELPFUL}, 2 {NO_VICTIMS}."
)
REF_SELECTOR = (  # k8s-api-reference.md §4.3, "nodeSelector miss"
    f"0/3 nodes are available: 3 {SELECTOR}. preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}."
)
REF_SELECTOR_OLD = REF_SELECTOR + "."  # §4.3: "Older clusters show a trailing `..` here."
LAB_CPU = (  # k8s-api-reference.md §4.3a, v1.34.1, pod requesting cpu 100 on the 2-node pair
    f"0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {{{CP}: }}. {DRA}, preemption: "
    f"0/2 nodes are available: 2 {NOT_HELPFUL}."
)
LAB_SELECTOR = (  # k8s-api-reference.md §4.3a, v1.34.1, nodeSelector disktype=ssd
    f"0/2 nodes are available: 1 {SELECTOR}, 1 node(s) had untolerated taint {{{CP}: }}. {DRA}, preemption: 0/2 "
    f"nodes are available: 2 {NOT_HELPFUL}."
)


def test_reference_134_style():
    p = check(REF_134, recognized=True, available=0, total=3,
              reasons=(taint(1, CP, ""), cpu(2)),
              preemption=PreemptionParse(after_preemption(REF_134), 3, (
                  R(1, NOT_HELPFUL, "not-helpful"), R(2, NO_VICTIMS, "no-victims"))))
    assert summary(p) == f"0/3 nodes: 2 too little cpu, 1 untolerated taint {CP}"


def test_reference_135_taint_without_key():
    p = check(REF_135, recognized=True, available=0, total=3,
              reasons=(R(1, "node(s) had untolerated taint(s)", "taint"), cpu(2)),
              preemption=PreemptionParse(after_preemption(REF_135), 3, (
                  R(1, NOT_HELPFUL, "not-helpful"), R(2, NO_VICTIMS, "no-victims"))))
    assert summary(p) == "0/3 nodes: 2 too little cpu, 1 untolerated taint"


@pytest.mark.parametrize("message", [REF_SELECTOR, REF_SELECTOR_OLD], ids=["one-period", "two-periods"])
def test_reference_node_selector_miss_with_and_without_double_period(message):
    p = check(message, recognized=True, available=0, total=3,
              reasons=(R(3, SELECTOR, "affinity"),),
              preemption=PreemptionParse(after_preemption(message), 3, (R(3, NOT_HELPFUL, "not-helpful"),)))
    assert summary(p) == "0/3 nodes: 3 node selector/affinity mismatch"


def test_lab_v1341_cpu_100_with_dra_fragment():
    p = check(LAB_CPU, recognized=True, available=0, total=2,
              reasons=(cpu(1), taint(1, CP, "")), extra_postfilter=(DRA,),
              preemption=PreemptionParse(after_preemption(LAB_CPU), 2, (R(2, NOT_HELPFUL, "not-helpful"),)))
    # the example format the pending-pods pane promises
    assert summary(p) == f"0/2 nodes: 1 too little cpu, 1 untolerated taint {CP}"


def test_lab_v1341_node_selector_with_dra_fragment():
    check(LAB_SELECTOR, recognized=True, available=0, total=2,
          reasons=(R(1, SELECTOR, "affinity"), taint(1, CP, "")), extra_postfilter=(DRA,),
          preemption=PreemptionParse(after_preemption(LAB_SELECTOR), 2, (R(2, NOT_HELPFUL, "not-helpful"),)))


# ---------------------------------------------------------------------------------------------------------------
# Real captures from public issues, oldest wordings first


def test_v16_legacy_predicates_form():
    # https://github.com/argoproj/argo-workflows/issues/190 (1.6/1.7-era scheduler)
    message = ("No nodes are available that match all of the following predicates:: Insufficient cpu (9), "
               "Insufficient memory (15), MatchNodeSelector (18).")
    p = check(message, recognized=True, reasons=(cpu(9), memory(15), R(18, "MatchNodeSelector", "affinity")))
    assert summary(p) == "nodes: 18 node selector/affinity mismatch, 15 too little memory, 9 too little cpu"


def test_v15_fit_failure_summary_across_two_lines():
    # https://github.com/kubernetes/kubernetes/issues/41070 (kubelet/scheduler v1.5.1)
    message = ("pod (test-1012964845-v8915) failed to fit in any node\n"
               "fit failure summary on nodes : Insufficient pods (2), PodToleratesNodeTaints (1)")
    check(message, recognized=True,
          reasons=(R(2, "Insufficient pods", "too-many-pods"), R(1, "PodToleratesNodeTaints", "taint")))


def test_v110_predicate_names_and_counts_exceeding_total():
    # https://github.com/kubernetes/kubernetes/issues/57574 (v1.10.0-alpha): 1+1+1+3 = 6 reasons for 4 nodes
    message = ("0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 NodeUnschedulable, "
               "3 MatchNodeSelector.")
    p = check(message, recognized=True, available=0, total=4, counts_exceed_total=True,
              reasons=(cpu(1), memory(1), R(1, "NodeUnschedulable", "unschedulable"),
                       R(3, "MatchNodeSelector", "affinity")))
    assert summary(p) == ("0/4 nodes: 3 node selector/affinity mismatch, 1 too little cpu, 1 too little memory, "
                          "1 cordoned")


def test_old_taints_wording_and_node_selector_phrase():
    # https://github.com/danisla/kubefunc/issues/10 (2020, 1.1x cluster)
    message = ("0/23 nodes are available: 1 node(s) had taints that the pod didn't tolerate, "
               "22 node(s) didn't match node selector.")
    check(message, recognized=True, available=0, total=23,
          reasons=(R(1, "node(s) had taints that the pod didn't tolerate", "taint"),
                   R(22, "node(s) didn't match node selector", "affinity")))


def test_counts_below_total_daemonset():
    # https://github.com/kubernetes/kubernetes/issues/91601 (1.18, DaemonSet pod; one node not counted)
    message = "0/6 nodes are available: 5 node(s) didn't match node selector."
    check(message, recognized=True, available=0, total=6,
          reasons=(R(5, "node(s) didn't match node selector", "affinity"),))


def test_host_ports():
    # https://github.com/kubernetes/kubernetes/issues/91340 (2020)
    message = "0/9 nodes are available: 8 node(s) didn't have free ports for the requested pod ports."
    p = check(message, recognized=True, available=0, total=9,
              reasons=(R(8, "node(s) didn't have free ports for the requested pod ports", "ports"),))
    assert summary(p) == "0/9 nodes: 8 host port in use"


def test_topology_spread_and_cordoned_from_scheduler_log():
    # https://github.com/kubernetes/kubernetes/issues/106396 (2021, err= of "Unable to schedule pod; no fit")
    message = ("0/8 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match node selector, "
               "4 node(s) didn't match pod topology spread constraints.")
    check(message, recognized=True, available=0, total=8,
          reasons=(R(1, "node(s) were unschedulable", "unschedulable"),
                   R(3, "node(s) didn't match node selector", "affinity"),
                   R(4, "node(s) didn't match pod topology spread constraints", "topology")))


def test_pod_affinity_anti_affinity_wording():
    # https://github.com/kubernetes/kubernetes/issues/100400 (2021)
    message = ("0/20 nodes are available: 1 node(s) didn't match pod affinity/anti-affinity, "
               "19 node(s) didn't match node selector.")
    p = check(message, recognized=True, available=0, total=20,
              reasons=(R(1, "node(s) didn't match pod affinity/anti-affinity", "pod-affinity"),
                       R(19, "node(s) didn't match node selector", "affinity")))
    assert summary(p) == "0/20 nodes: 19 node selector/affinity mismatch, 1 pod affinity/anti-affinity"


def test_taint_with_comma_wording_and_log_prefix():
    # https://github.com/os-climate/os_c_data_commons/issues/170 (OpenShift, 2022): "had taint {k: v}, that the
    # pod didn't tolerate" has a ", " of its own; the JupyterHub log prefix stays in raw.
    message = (
        "2022-05-02T00:33:47.149327Z [Warning] 0/13 nodes are available: 2 node(s) had taint "
        "{node-role.kubernetes.io/master: }, that the pod didn't tolerate, 2 node(s) were unschedulable, 3 node(s) "
        "didn't match Pod's node affinity/selector, 3 node(s) had taint {node-role.kubernetes.io/infra: }, that the "
        "pod didn't tolerate, 3 node(s) had taint {nvidia.com/gpu: }, that the pod didn't tolerate."
    )
    check(message, recognized=True, available=0, total=13, reasons=(
        R(2, "node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate", "taint",
          key="node-role.kubernetes.io/master", value=""),
        R(2, "node(s) were unschedulable", "unschedulable"),
        R(3, SELECTOR, "affinity"),
        R(3, "node(s) had taint {node-role.kubernetes.io/infra: }, that the pod didn't tolerate", "taint",
          key="node-role.kubernetes.io/infra", value=""),
        R(3, "node(s) had taint {nvidia.com/gpu: }, that the pod didn't tolerate", "taint",
          key="nvidia.com/gpu", value=""),
    ))


TRUNCATED_500 = (
    # https://github.com/kubernetes/kubernetes/issues/108931 (2022, 500 nodes each with its own taint). The issue
    # quotes the start of this message; the reasons sort as node-001, node-002, …, so the event kube-scheduler
    # stored is fixed by schedule_one.go truncateMessage: the first 1020 bytes + " ...", reproduced here.
    "0/500 nodes are available: 1 node(s) had taint {node-001: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-002: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-003: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-004: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-005: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-006: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-007: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-008: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-009: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-010: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-011: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-012: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-013: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-014: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-015: }, that the pod didn't tolerate, "
    "1 node(s) had taint {node-016: }, ..."
)


def test_truncated_message_keeps_what_is_there():
    assert len(TRUNCATED_500.encode()) == 1024
    whole = tuple(R(1, f"node(s) had taint {{node-{i:03d}: }}, that the pod didn't tolerate", "taint",
                    key=f"node-{i:03d}", value="") for i in range(1, 16))
    cut = R(1, "node(s) had taint {node-016: }", "taint", key="node-016", value="")
    p = check(TRUNCATED_500, recognized=True, available=0, total=500, reasons=(*whole, cut), truncated=True)
    assert summary(p) == ("0/500 nodes: 1 untolerated taint node-001, 1 untolerated taint node-002, "
                          "1 untolerated taint node-003, 1 untolerated taint node-004, +12 more …")


def test_eks_counts_exceed_total_and_preemption_with_filter_reasons():
    # https://github.com/aws/karpenter-provider-aws/issues/5406 (EKS, 2024): 18+2+21+8 = 49 reasons for 29 nodes
    message = (
        "0/29 nodes are available: 18 Insufficient cpu, 2 Too many pods, 21 Insufficient memory, 8 node(s) had "
        "untolerated taint {eks.amazonaws.com/compute-type: fargate}. preemption: 0/29 nodes are available: "
        f"1 Insufficient cpu, 18 Insufficient memory, 3 {NO_VICTIMS}, 8 {NOT_HELPFUL}.."
    )
    p = check(message, recognized=True, available=0, total=29, counts_exceed_total=True,
              reasons=(cpu(18), R(2, "Too many pods", "too-many-pods"), memory(21),
                       taint(8, "eks.amazonaws.com/compute-type", "fargate")),
              preemption=PreemptionParse(after_preemption(message), 29, (
                  cpu(1), memory(18), R(3, NO_VICTIMS, "no-victims"), R(8, NOT_HELPFUL, "not-helpful"))))
    assert summary(p) == ("0/29 nodes: 21 too little memory, 18 too little cpu, "
                          "8 untolerated taint eks.amazonaws.com/compute-type=fargate, 2 too many pods")


def test_eks_127_volumes_and_taints_with_values():
    # https://github.com/kubernetes-sigs/karpenter/issues/932 (EKS v1.27.8)
    message = (
        "0/8 nodes are available: 1 Insufficient memory, 1 node(s) didn't find available persistent volumes to bind, "
        "2 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}, 4 node(s) had untolerated taint "
        f"{{im-a-sparklike: true}}. preemption: 0/8 nodes are available: 1 {NO_VICTIMS}, 7 {NOT_HELPFUL}.."
    )
    check(message, recognized=True, available=0, total=8,
          reasons=(memory(1), R(1, "node(s) didn't find available persistent volumes to bind", "volume"),
                   taint(2, "eks.amazonaws.com/compute-type", "fargate"), taint(4, "im-a-sparklike", "true")),
          preemption=PreemptionParse(after_preemption(message), 8, (
              R(1, NO_VICTIMS, "no-victims"), R(7, NOT_HELPFUL, "not-helpful"))))


def test_eks_topology_and_anti_affinity():
    # https://github.com/aws/karpenter-provider-aws/issues/6447 (EKS, 2024)
    message = (
        "0/20 nodes are available: 1 node(s) had untolerated taint {windowsContainers: true}, 2 node(s) had "
        "untolerated taint {eks.amazonaws.com/compute-type: fargate}, 4 node(s) didn't match Pod's node "
        "affinity/selector, 4 node(s) didn't match pod anti-affinity rules, 9 node(s) didn't match pod topology "
        f"spread constraints. preemption: 0/20 nodes are available: 13 {NO_VICTIMS}, 7 {NOT_HELPFUL}."
    )
    p = check(message, recognized=True, available=0, total=20,
              reasons=(taint(1, "windowsContainers", "true"), taint(2, "eks.amazonaws.com/compute-type", "fargate"),
                       R(4, SELECTOR, "affinity"), R(4, "node(s) didn't match pod anti-affinity rules", "pod-affinity"),
                       R(9, "node(s) didn't match pod topology spread constraints", "topology")),
              preemption=PreemptionParse(after_preemption(message), 20, (
                  R(13, NO_VICTIMS, "no-victims"), R(7, NOT_HELPFUL, "not-helpful"))))
    assert summary(p) == ("0/20 nodes: 9 topology spread, 4 node selector/affinity mismatch, 4 pod anti-affinity, "
                          "2 untolerated taint eks.amazonaws.com/compute-type=fargate, +1 more")


def test_topology_reason_inside_preemption_body():
    # https://github.com/red-hat-storage/ocs-operator/pull/4163 (OpenShift, 2025)
    message = (
        "0/6 nodes are available: 1 node(s) had untolerated taint {unschedulable: true}, 2 node(s) didn't match pod "
        "topology spread constraints, 3 node(s) had untolerated taint {node-role.kubernetes.io/master: }. "
        "preemption: 0/6 nodes are available: 2 node(s) didn't match pod topology spread constraints, "
        f"4 {NOT_HELPFUL}."
    )
    check(message, recognized=True, available=0, total=6,
          reasons=(taint(1, "unschedulable", "true"),
                   R(2, "node(s) didn't match pod topology spread constraints", "topology"),
                   taint(3, "node-role.kubernetes.io/master", "")),
          preemption=PreemptionParse(after_preemption(message), 6, (
              R(2, "node(s) didn't match pod topology spread constraints", "topology"),
              R(4, NOT_HELPFUL, "not-helpful"))))


def test_volume_affinity_with_old_double_period():
    # https://github.com/yugabyte/yugabyte-db/pull/20349 (2023)
    message = (
        f"0/10 nodes are available: 3 node(s) had volume node affinity conflict, 7 {SELECTOR}. preemption: "
        f"0/10 nodes are available: 10 {NOT_HELPFUL}.."
    )
    p = check(message, recognized=True, available=0, total=10,
              reasons=(R(3, "node(s) had volume node affinity conflict", "volume"), R(7, SELECTOR, "affinity")),
              preemption=PreemptionParse(after_preemption(message), 10, (R(10, NOT_HELPFUL, "not-helpful"),)))
    assert summary(p) == "0/10 nodes: 7 node selector/affinity mismatch, 3 volume node affinity conflict"


def test_extended_resource_gpu():
    # https://github.com/NVIDIA/k8s-device-plugin/issues/430 (2023)
    message = (f"0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: "
               f"1 {NO_VICTIMS}..")
    p = check(message, recognized=True, available=0, total=1,
              reasons=(R(1, "Insufficient nvidia.com/gpu", "insufficient", resource="nvidia.com/gpu"),),
              preemption=PreemptionParse(after_preemption(message), 1, (R(1, NO_VICTIMS, "no-victims"),)))
    assert summary(p) == "0/1 nodes: 1 too little nvidia.com/gpu"


def test_reason_without_node_s_unbound_pvc():
    # https://github.com/radondb/radondb-mysql-kubernetes/issues/524 (2022)
    message = ("0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes "
               f"are available: 3 {NOT_HELPFUL}.")
    p = check(message, recognized=True, available=0, total=3,
              reasons=(R(3, "pod has unbound immediate PersistentVolumeClaims", "volume"),),
              preemption=PreemptionParse(after_preemption(message), 3, (R(3, NOT_HELPFUL, "not-helpful"),)))
    assert summary(p) == "0/3 nodes: 3 unbound PVC"


def test_unknown_reasons_from_another_scheduler_kept_verbatim():
    # https://github.com/Project-HAMi/HAMi/issues/1527 (hami-scheduler, 2025)
    message = (
        "0/4 nodes are available: 1 NodeUnfitPod, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, "
        f"2 node unregistered. preemption: 0/4 nodes are available: 1 {NOT_HELPFUL}, 3 {NO_VICTIMS}.."
    )
    p = check(message, recognized=True, available=0, total=4,
              reasons=(R(1, "NodeUnfitPod"), taint(1, "node.kubernetes.io/unreachable", ""),
                       R(2, "node unregistered")),
              preemption=PreemptionParse(after_preemption(message), 4, (
                  R(1, NOT_HELPFUL, "not-helpful"), R(3, NO_VICTIMS, "no-victims"))))
    assert summary(p) == ("0/4 nodes: 2 node unregistered, 1 NodeUnfitPod, "
                          "1 untolerated taint node.kubernetes.io/unreachable")


def test_unknown_reason_with_colon_and_dotted_address():
    # https://github.com/microsoft/pai/issues/5577 (HiveD scheduler, 2021)
    message = (
        "0/2 nodes are available: 1 Insufficient memory, 1 Pod is waiting for preemptible or free resource to "
        "appear: have to use at least one bad node 1/xx.xx.xx.xx when scheduling in VC default, 1 node(s) didn't "
        "match node selector.\n"
    )
    check(message, recognized=True, available=0, total=2, counts_exceed_total=True,
          reasons=(memory(1),
                   R(1, "Pod is waiting for preemptible or free resource to appear: have to use at least one bad "
                        "node 1/xx.xx.xx.xx when scheduling in VC default"),
                   R(1, "node(s) didn't match node selector", "affinity")))


@pytest.mark.parametrize("message, reasons, preemption_total, preemption_reasons, extras", [
    (  # https://github.com/secretflow/kuscia/issues/236 (kuscia-scheduler, 2024): a PreFilter message, no count,
       # and another PostFilter plugin's text after the preemption FitError
        f"0/2 nodes are available: failed to get task resource bob/ for pod. preemption: 0/2 nodes are available: "
        f"2 {NO_VICTIMS}., can not find related task resource.",
        (R(None, "failed to get task resource bob/ for pod"),), 2, (R(2, NO_VICTIMS, "no-victims"),),
        ("can not find related task resource",),
    ),
    (  # same issue, second event
        "0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }. preemption: "
        f"0/2 nodes are available: 2 {NOT_HELPFUL}., reject the pod secretflow-task-20240228161259-single-psi-0 "
        "even after PostFilter.",
        (taint(2, "node.kubernetes.io/disk-pressure", ""),), 2, (R(2, NOT_HELPFUL, "not-helpful"),),
        ("reject the pod secretflow-task-20240228161259-single-psi-0 even after PostFilter",),
    ),
], ids=["prefilter-message", "postfilter-after-preemption"])
def test_postfilter_text_after_preemption(message, reasons, preemption_total, preemption_reasons, extras):
    special = "prefilter" if reasons[0].count is None else None
    check(message, recognized=True, available=0, total=2, reasons=reasons, special=special, extra_postfilter=extras,
          preemption=PreemptionParse(after_preemption(message), preemption_total, preemption_reasons))


def test_dra_fragment_and_counts_exceeding_total_on_a_recent_release():
    # https://github.com/kubernetes/kubernetes/issues/141491 (2026, DRA on): 1+1+1+3+397 = 403 for 401 nodes
    message = (
        "0/401 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods, 3 node(s) didn't "
        f"match pod anti-affinity rules, 397 {SELECTOR}. {DRA}, preemption: 0/401 nodes are available: 3 node(s) "
        f"didn't match pod anti-affinity rules, 398 {NOT_HELPFUL}."
    )
    check(message, recognized=True, available=0, total=401, counts_exceed_total=True, extra_postfilter=(DRA,),
          reasons=(cpu(1), memory(1), R(1, "Too many pods", "too-many-pods"),
                   R(3, "node(s) didn't match pod anti-affinity rules", "pod-affinity"), R(397, SELECTOR, "affinity")),
          preemption=PreemptionParse(after_preemption(message), 401, (
              R(3, "node(s) didn't match pod anti-affinity rules", "pod-affinity"),
              R(398, NOT_HELPFUL, "not-helpful"))))


def test_other_scheduler_says_unavailable():
    # https://github.com/volcano-sh/volcano/issues/4116 (volcano, 2025)
    check("0/1 nodes are unavailable: 1 Insufficient cpu.", recognized=True, available=0, total=1, reasons=(cpu(1),))


def test_trailing_space_and_older_node_affinity_phrase():
    # https://github.com/kubernetes/kubernetes/issues/116713 (2023)
    message = "0/20 nodes are available: 13 node(s) didn't match Pod's node affinity, 7 Insufficient memory. "
    check(message, recognized=True, available=0, total=20,
          reasons=(R(13, "node(s) didn't match Pod's node affinity", "affinity"), memory(7)))


def test_unreachable_taint():
    # https://github.com/hystax/optscale/issues/568 (2023)
    message = ("0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. "
               f"preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.")
    check(message, recognized=True, available=0, total=1, reasons=(taint(1, "node.kubernetes.io/unreachable", ""),),
          preemption=PreemptionParse(after_preemption(message), 1, (R(1, NOT_HELPFUL, "not-helpful"),)))


def test_whole_message_no_nodes():
    # https://github.com/rancher/rancher/issues/6926 (2016)
    p = check("no nodes available to schedule pods", recognized=True, available=0, total=0, special="no-nodes")
    assert summary(p) == "no nodes in the cluster"


def test_whole_message_unbound_pvcs():
    # https://github.com/bitnami/charts/issues/1169 (2019)
    p = check("pod has unbound immediate PersistentVolumeClaims", recognized=True, special="unbound-pvcs")
    assert summary(p) == "waiting for PersistentVolumeClaims to bind"


def test_whole_message_plugin_error():
    # https://github.com/kadalu/kadalu/issues/216 (2020)
    message = ('error while running "VolumeBinding" filter plugin for pod "pod1": pod has unbound immediate '
               "PersistentVolumeClaims")
    check(message, recognized=True, special="plugin-error", special_detail=message)


# ---------------------------------------------------------------------------------------------------------------
# Forms quoted by the reference or printed by upstream code (not captures)


def test_deleting_pod():
    # reference §4.3: skipPodSchedule's "skip schedule deleting pod: %v/%v"
    p = check("skip schedule deleting pod: default/nginx", recognized=True, special="deleting",
              special_detail="default/nginx")
    assert summary(p) == "pod is being deleted"


def test_binding_rejected():
    # reference §4.3, a real PodScheduled=False/SchedulerError status (quoted there with its tail elided)
    message = ('binding rejected: running Bind plugin "DefaultBinder": Operation cannot be fulfilled on '
               "pods/binding …")
    p = check(message, recognized=True, special="binding-rejected",
              special_detail='running Bind plugin "DefaultBinder": Operation cannot be fulfilled on pods/binding …')
    assert summary(p).startswith('bind rejected: running Bind plugin "DefaultBinder"')


@pytest.mark.parametrize("message, plugins", [
    # schedule_one.go (≥1.29): absent nodes get "node(s) didn't satisfy plugin(s) %v" with sets.List -> [A B]
    ("0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity].", ("NodeAffinity",)),
    # 1.2x runPreFilterPlugins wording, and brackets holding ", " (split only at depth 0)
    ("0/3 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity VolumeBinding] simultaneously.",
     ("NodeAffinity", "VolumeBinding")),
    ("0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity, VolumeBinding]",
     ("NodeAffinity", "VolumeBinding")),
])
def test_prefilter_result_forms(message, plugins):
    p = parse_fit_error(message)
    assert p.recognized and p.total == 3 and p.special == "prefilter"
    assert [r.kind for r in p.reasons] == ["plugins"] and p.reasons[0].detail == {"plugins": plugins}
    assert summary(p).startswith("0/3 nodes: ") and "excluded by " + "/".join(plugins) in summary(p)


def test_preemption_sentences():
    never = parse_fit_error(f"0/2 nodes are available: 2 Insufficient cpu. {DRA}, preemption: not eligible due to "
                            "preemptionPolicy=Never.")
    assert never.preemption == PreemptionParse("not eligible due to preemptionPolicy=Never.", None, (
        R(None, "not eligible due to preemptionPolicy=Never", "not-eligible"),))
    assert never.extra_postfilter == (DRA,)
    found = parse_fit_error("0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement "
                            "for pod on node w1")
    assert found.preemption.reasons[0].kind == "placement"


def test_tolerated_variations():
    """Missing final period, extra whitespace and newlines, unicode, brackets with commas."""
    p = parse_fit_error("  0/3   nodes are available:\n 2 Insufficient cpu,\t1 node(s) had untolerated taint "
                        "{clé: välue}")
    assert p.recognized and p.total == 3 and p.reasons == (cpu(2), taint(1, "clé", "välue"))
    q = parse_fit_error("0/2 nodes are available: 2 node(s) had untolerated taint {a: b, c: d}. preemption: "
                        "0/2 nodes are available: 2 Preemption is not helpful for scheduling")
    assert q.reasons == (R(2, "node(s) had untolerated taint {a: b, c: d}", "taint", key="a", value="b, c: d"),)
    assert q.preemption.reasons == (R(2, NOT_HELPFUL, "not-helpful"),)


@pytest.mark.parametrize("message", ["", "   ", "Successfully assigned default/nginx to node01",
                                     "0/ nodes", "preemption:", "…", "\x00\uffff🙂", "3 Insufficient cpu."])
def test_not_a_fit_error(message):
    p = parse_fit_error(message)
    assert p.raw == message and not p.recognized and p.reasons == ()
    assert isinstance(summary(p), str) and "\n" not in summary(p)


# ---------------------------------------------------------------------------------------------------------------
# Property / fuzz tests

REAL = [
    REF_134, REF_135, REF_SELECTOR, REF_SELECTOR_OLD, LAB_CPU, LAB_SELECTOR, TRUNCATED_500,
    "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 NodeUnschedulable, 3 MatchNodeSelector.",
    "0/13 nodes are available: 2 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't "
    "tolerate, 2 node(s) were unschedulable, 3 node(s) didn't match Pod's node affinity/selector.",
    f"0/2 nodes are available: failed to get task resource bob/ for pod. preemption: 0/2 nodes are available: "
    f"2 {NO_VICTIMS}., can not find related task resource.",
    "No nodes are available that match all of the following predicates:: Insufficient cpu (9), MatchNodeSelector (18).",
    f"0/29 nodes are available: 18 Insufficient cpu, 2 Too many pods. preemption: 0/29 nodes are available: "
    f"1 Insufficient cpu, 3 {NO_VICTIMS}, 8 {NOT_HELPFUL}..",
]
ALPHABET = "0123456789/ .,:;{}[]()\n\t-abcdefghijklmnopqrstuvwxyzINP'é🙂\x00…"
TOKENS = ["0/3", " nodes are available:", " preemption: ", ", ", ". ", "..", " ...", "{", "}", "[", "]", "(", ")",
          "node(s) had untolerated taint {a: b}", "Insufficient cpu", "1 ", "99999999999999999999999 ", DRA,
          "No nodes are available that match all of the predicates:", "running ", " plugin", "x" * 50]


def _assert_total(message: str) -> FitErrorParse:
    p = _parse.__wrapped__(message)  # unguarded and uncached: an exception here is a bug
    assert p.raw is message
    assert isinstance(summary(p), str)
    assert all(isinstance(r, Reason) and isinstance(r.text, str) for r in p.reasons)
    return p


def test_fuzz_random_strings_never_raise():
    rng = random.Random(5)
    for _ in range(3000):
        if rng.random() < 0.5:
            message = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 120)))
        else:
            message = "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 25)))
        _assert_total(message)
        assert parse_fit_error(message).raw is message


def test_fuzz_every_cut_of_real_messages():
    for message in REAL:
        full = _parse(message)
        for k in range(len(message) + 1):
            for cut in (message[:k], message[:k] + " ..."):
                p = _assert_total(cut)
                if cut.endswith(" ..."):
                    assert p.truncated
                if full.total is not None and k >= message.index("available") + len("available"):
                    assert p.recognized and p.total == full.total
                    # every reason but the last (which the cut may have shortened) is unchanged
                    assert p.reasons[:-1] == full.reasons[:max(len(p.reasons) - 1, 0)]


def test_fuzz_mutations_of_real_messages():
    rng = random.Random(7)
    for _ in range(2000):
        chars = list(rng.choice(REAL))
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(chars) + 1)
            op = rng.random()
            if op < 0.4:
                chars.insert(i, rng.choice(ALPHABET))
            elif op < 0.8 and chars:
                del chars[min(i, len(chars) - 1)]
            elif chars:
                chars[min(i, len(chars) - 1)] = rng.choice(ALPHABET)
        _assert_total("".join(chars))


def test_pathological_inputs_are_fast_and_safe():
    start = time.monotonic()
    for message in ["0/3 nodes are available: " + "{" * 200_000, "running " + "x" * 200_000,
                    "0/3 nodes are available: " + "1 a, " * 50_000, "9" * 10_000 + "/" + "9" * 10_000 + " nodes are",
                    "No nodes are available that match all of the predicates: " + "(" * 100_000 + "1)"]:
        _assert_total(message)
    assert time.monotonic() - start < 5
    assert parse_fit_error(None).raw == "" and parse_fit_error(b"0/1 nodes are available: 1 x.").total == 1


def test_an_equal_message_is_parsed_once_and_each_result_holds_its_own_input():
    """Under churn a pod's FailedScheduling event repeats with the same message, and many pods share one.
    The parse is cached by text; ``raw`` is still the very string passed in."""
    _parse.cache_clear()
    first = "".join(["0/3 nodes are available: ", "3 Insufficient cpu."])
    second = "".join(["0/3 nodes are available: ", "3 Insufficient cpu."])
    assert first == second and first is not second
    a, b = parse_fit_error(first), parse_fit_error(second)
    assert a.raw is first and b.raw is second and a.reasons == b.reasons
    assert _parse.cache_info().hits == 1 and _parse.cache_info().misses == 1
