"""One settings model for observatory, read from ``OBSERVATORY_*`` environment variables.

Nested sections use ``__`` as the delimiter, e.g. ``OBSERVATORY_LAB__HISTORY_SIZE=20000``. Built once at start by
the command line and passed down; nothing reads it as a global.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class LabSettings(BaseModel):
    """How the embedded lab API server behaves."""

    history_size: int = Field(10_000, ge=1)
    """Watch events kept for resuming a watch from a resourceVersion; an older resourceVersion gets 410 Expired."""

    bookmark_interval: float = Field(5.0, gt=0)
    """Seconds between BOOKMARK events on watches that asked for ``allowWatchBookmarks=true``."""

    min_request_timeout: float = Field(1800.0, gt=0)
    """kube-apiserver's ``--min-request-timeout`` in seconds: a watch without ``timeoutSeconds`` ends after a random
    time between this and twice this, as upstream does."""

    state_synchronous: Literal["normal", "full"] = "normal"
    """SQLite's ``synchronous`` for the ``--state`` database (WAL mode): ``normal`` keeps every acknowledged write
    across a crash of the lab's process (``kill -9``); ``full`` also fsyncs each commit, so writes survive power
    loss too, at about three times the cost per write (see :mod:`observatory.lab.persistence`)."""

    watch_queue_limit: int = Field(10_000, ge=100)
    """Changes one watcher may fall behind before the lab closes it as unresponsive, as kube-apiserver's cacher
    does (clients then watch again from their last resourceVersion). Queued changes are shared with the history and
    every other watcher; the default equals ``history_size``, the most a client could resume from anyway."""

    event_ttl: int = Field(3600, ge=0)
    """kube-apiserver's ``--event-ttl`` in whole seconds: each Event is deleted this long after its last write, as
    its etcd lease runs out (watchers see DELETED); 0 keeps Events forever. Env ``OBSERVATORY_LAB__EVENT_TTL``;
    ``observatory lab serve --event-ttl 30m``."""

    token: bool = False
    """Require a generated bearer token even on loopback; the lab's kubeconfig carries it (``users[].user.token``).
    Like the lab on any other address (which always requires one), it then serves HTTPS with a generated CA, in the
    kubeconfig too: kubectl sends kubeconfig credentials only over TLS. Env ``OBSERVATORY_LAB__TOKEN=true``;
    ``observatory lab serve --token``."""

    rbac: Path | None = None
    """An RBAC file (YAML: users, each with a bearer token, namespaces and rules; format in
    ``observatory.lab.rbac``): the lab then serves HTTPS even on loopback, accepts only those tokens and answers
    what a user may not do with kube-apiserver's 403 Forbidden. Its kubeconfig carries the first user's token and
    namespace; ``kubeconfig-<user>`` beside it, each other user's. Env ``OBSERVATORY_LAB__RBAC=FILE``;
    ``observatory lab serve --rbac FILE``."""

    audit_policy_file: Path | None = None
    """kube-apiserver's ``--audit-policy-file``: an ``audit.k8s.io/v1`` Policy (YAML or JSON). Unlike
    kube-apiserver, which audits nothing without one, the lab then audits with its default policy
    (``observatory.lab.audit.policy.DEFAULT_POLICY_YAML``). ``observatory lab serve --audit-policy-file FILE``."""

    audit_log_path: str | None = None
    """``--audit-log-path``: write each audit event as a JSON line to this file (``-``: standard output)."""

    audit_log_maxage: int = Field(0, ge=0)
    """``--audit-log-maxage``: days to keep rotated audit logs, by the time in their names (0: no limit)."""

    audit_log_maxbackup: int = Field(0, ge=0)
    """``--audit-log-maxbackup``: rotated audit logs to keep (0: all)."""

    audit_log_maxsize: int = Field(0, ge=0)
    """``--audit-log-maxsize``: megabytes an audit log grows to before it is rotated (0: lumberjack's 100)."""

    audit_log_format: str = "json"
    """``--audit-log-format``: ``json`` (the lab refuses ``legacy``)."""

    audit_webhook_config_file: Path | None = None
    """``--audit-webhook-config-file``: a kubeconfig naming the receiver of the audit webhook's EventLists."""

    audit_webhook_mode: str = "batch"
    """``--audit-webhook-mode``: ``batch`` (buffered, sent in batches) or ``blocking`` (each event on its own)."""

    audit_webhook_batch_max_size: int = Field(400, ge=1)
    """``--audit-webhook-batch-max-size``: the most events in one batch."""

    audit_webhook_batch_max_wait: float = Field(30.0, ge=0)
    """``--audit-webhook-batch-max-wait`` in seconds: how long a batch waits to fill before it is sent."""

    audit_webhook_initial_backoff: float = Field(10.0, ge=0)
    """``--audit-webhook-initial-backoff`` in seconds: the wait before the first retry of a failed POST."""

    scheduler: bool = True
    """Run the simulated default-scheduler."""

    scheduler_names: list[str] = ["default-scheduler"]
    """Scheduler profiles the simulated scheduler answers to (pods' ``spec.schedulerName``)."""

    bind_delay: float = Field(0.2, ge=0)
    """Seconds the simulated scheduler waits before binding, so watchers see the Pending frame first."""

    percentage_of_nodes_to_score: int = Field(0, ge=0, le=100)
    """The simulated scheduler's global ``percentageOfNodesToScore`` (0: adaptive, kube-scheduler's default)."""

    profile_percentage_of_nodes_to_score: dict[str, int] = {}
    """Per-profile ``percentageOfNodesToScore`` by schedulerName, e.g. ``{"batch-scheduler": 10}``."""

    kubelet: bool = True
    """Run the simulated kubelets."""

    kubelet_start_seconds: float = Field(1.5, ge=0)
    """About how long a kubelet takes from first seeing a bound pod to Running, in seconds."""

    termination_grace_cap: float = Field(2.0, ge=0)
    """Longest a kubelet waits on a pod's grace period before removing it, in seconds (real kubelets wait the
    whole ``terminationGracePeriodSeconds``; a lesson should not)."""

    node_lease_renew_interval: float = Field(10.0, gt=0)
    """Seconds between kubelet renewals of ``kube-node-lease`` Leases (kubelet default 10 s)."""

    podgc: bool = True
    """Run the simulated pod garbage collector."""

    podgc_quarantine: float = Field(40.0, ge=0)
    """Seconds a pod bound to a missing node waits before PodGC marks it Failed and deletes it (upstream 40 s)."""

    node_lifecycle: bool = True
    """Taint NotReady nodes ``node.kubernetes.io/not-ready`` (Unknown: ``unreachable``) as the node lifecycle
    controller does, and remove the taints when they are Ready again."""

    pv_controller: bool = True
    """Run the simulated PersistentVolume controller, the PVC and PV protection controllers and kind's local-path
    provisioner."""

    controllers: bool = True
    """Run kube-controller-manager's other simulated controllers: Deployment, ReplicaSet, DaemonSet, StatefulSet,
    Job, disruption, ServiceAccount, root CA publisher, Endpoints and EndpointSlice, namespace, garbage collector
    and taint eviction (:mod:`observatory.lab.simulation`)."""

    pv_resync_seconds: float = Field(15.0, gt=0)
    """Seconds between the PV controller's resyncs of every claim and volume (``--pvclaimbinder-sync-period``,
    15 s upstream)."""

    provisioning_seconds: float = Field(1.0, ge=0)
    """Seconds the local-path provisioner takes to make a volume (its helper pod creating the directory)."""


class UISettings(BaseModel):
    """How the terminal UI behaves."""

    refresh_interval: float = Field(0.1, gt=0)
    """Seconds between repaints for the clock (ages, the just-bound highlight), and the longest a change waits to be
    painted. Changes are painted sooner: at once after a quiet spell, then at most one repaint per gap of twice
    the last repaint's cost (at least 1/60 s), so a burst of watch events is coalesced into a few repaints."""

    recent_seconds: float = Field(10.0, ge=0)
    """How long a just-bound pod stays in the pending list and highlighted on its node."""

    lease_interval: float = Field(10.0, gt=0)
    """Seconds between reads of the ``kube-system/kube-scheduler`` Lease while a pod that no default-scheduler has
    looked at is selected (the Why pane names the Lease's holder)."""

    keymap: dict[str, str] = {}
    """Key remapping by binding id, e.g. ``{"bind": "B", "quit": "ctrl+q"}`` (``?`` lists the ids)."""

    theme: str = Field("textual-dark", min_length=1)
    """The display theme at start: ``observatory-projector`` (high contrast, for a projector),
    ``observatory-colorblind`` (Okabe–Ito colours, no red/green pairs), or any Textual theme (``textual-dark``,
    ``textual-light``, ``nord`` …); ctrl+p, *Theme*, changes it while running. An unknown name is refused before the
    screen starts, with the list of names (the names live in ``observatory.ui.themes``, as settings never import
    the UI)."""

    keycast: bool = False
    """Show the key-cast overlay at start: the last keys pressed, for viewers of a recording (ctrl+p, *Toggle key-cast
    overlay*, toggles it)."""

    screenshot_dir: Path = Path(".")
    """Where ``s`` saves ``observatory-YYYYmmdd-HHMMSS.svg`` screenshots (``~`` is expanded)."""


class Settings(BaseSettings):
    """Everything observatory can be configured with. Command-line flags override these values."""

    model_config = SettingsConfigDict(env_prefix="OBSERVATORY_", env_nested_delimiter="__", extra="ignore")

    lab: LabSettings = LabSettings()
    ui: UISettings = UISettings()
