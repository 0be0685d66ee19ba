"""The feature controllers without a screen: each gets a small fake of its host protocol (what it needs from the
screen) and is driven directly, as the main screen drives it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from observatory.model.access import AccessReview
from observatory.model.deltas import WatchState
from observatory.model.source import AccessReviewer, Capabilities, Source
from observatory.model.state import ClusterState
from observatory.ui.permissions import PermissionsController
from observatory.ui.scope import ScopeController
from observatory.ui.widgets.exchange_pane import EMPTY_HINT
from tests.ui.fakes import FROZEN, RecordedSource, frozen_clock


class RefusingSource(RecordedSource):
    """A lab whose RBAC refuses ``create pods/binding`` in sched-lab and allows it elsewhere; its context's
    namespace is team-a."""

    home_namespace = "team-a"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.reviews: list[tuple[str, str, str, str]] = []

    async def access_review(self, verb: str, resource: str, subresource: str = "",
                            namespace: str = "") -> AccessReview:
        self.reviews.append((verb, resource, subresource, namespace))
        return AccessReview(verb, resource, subresource, namespace, allowed=namespace != "sched-lab")


@dataclass
class FakeHost:
    """What :class:`PermissionsController` and :class:`ScopeController` need from the screen, recorded."""

    source: Source
    state: ClusterState = field(default_factory=lambda: ClusterState(frozen_clock))
    selected: str | None = None
    replaying: bool = False
    asked: list[tuple[Source, AccessReviewer, str]] = field(default_factory=list)
    rescoped: list[str | None] = field(default_factory=list)
    notices: list[tuple[str, str, str]] = field(default_factory=list)
    bind_key_refreshes: int = 0
    screens: list[Any] = field(default_factory=list)

    def notify(self, message: str, *, title: str = "", severity: str = "information", timeout: float | None = None,
               markup: bool = False) -> None:
        self.notices.append((severity, title, message))

    def ask(self, screen: Any, answered: Any) -> None:
        self.screens.append((screen, answered))

    def review_access(self, source: Source, access: AccessReviewer, namespace: str) -> None:
        self.asked.append((source, access, namespace))

    def refresh_bind_key(self) -> None:
        self.bind_key_refreshes += 1

    def rescope(self, namespace: str | None) -> None:
        self.rescoped.append(namespace)
        self.source = self.source.with_namespace(namespace)

    def scope_locked(self, *, chooser: bool = False) -> bool:
        return self.replaying


async def test_bind_is_asked_for_once_per_namespace_and_a_refusal_disables_it_with_the_reason_on_the_banner():
    source = RefusingSource(namespace="sched-lab")
    host = FakeHost(source, selected="sched-lab/manual")
    permissions = PermissionsController(host)

    permissions.update()
    permissions.update()  # asked already: not again
    assert [(namespace, asked is source) for asked, _, namespace in host.asked] == [("sched-lab", True)]
    assert permissions.bind_refusal() is None and permissions.bind_hint() == EMPTY_HINT  # not answered yet

    _, access, namespace = host.asked[0]
    await permissions.review(source, access, namespace)
    assert source.reviews == [("create", "pods", "binding", "sched-lab")]
    assert host.bind_key_refreshes == 1  # the footer dims Bind
    refusal = permissions.bind_refusal()
    assert refusal is not None and refusal.refused
    notice = "Bind disabled: not allowed to create pods/binding in sched-lab (RBAC)"
    assert permissions.banner_lines() == (notice,)
    assert permissions.bind_hint() == f"No Binding sent yet. {notice}: b does nothing here."

    host.selected = "default/elsewhere"  # Bind goes to the selected pod's namespace: asked there, allowed
    permissions.update()
    assert host.asked[-1][2] == "default"
    await permissions.review(source, host.asked[-1][1], "default")
    assert permissions.bind_refusal() is None and permissions.banner_lines() == ()


async def test_an_answer_for_a_source_no_longer_shown_is_dropped():
    source = RefusingSource(namespace="sched-lab")
    host = FakeHost(source, selected="sched-lab/manual")
    permissions = PermissionsController(host)
    permissions.update()
    host.source = RecordedSource(namespace="sched-lab")  # a rescope replaced the source while the review ran
    permissions.update()  # the next repaint: the new source is asked
    assert len(host.asked) == 2 and host.asked[-1][0] is host.source
    await permissions.review(source, source, "sched-lab")  # the old source's refusal arrives
    assert permissions.bind_refusal() is None and host.bind_key_refreshes == 0


def test_a_source_without_access_reviews_and_read_only_mode_ask_nothing():
    recording = RecordedSource(namespace="sched-lab")
    recording.capabilities = Capabilities  # type: ignore[method-assign]  # as RecordingSource: no access reviews
    host = FakeHost(recording, selected="sched-lab/manual")
    PermissionsController(host).update()
    read_only = FakeHost(RefusingSource(namespace="sched-lab", read_only=True), selected="sched-lab/manual")
    controller = PermissionsController(read_only)
    controller.update()
    assert host.asked == [] and read_only.asked == []
    assert controller.bind_hint() == "Read-only (--read-only): b sends no Binding."


def test_pods_forbidden_across_namespaces_falls_back_to_the_home_namespace_once_and_says_so():
    host = FakeHost(RefusingSource(namespace=None))
    host.state.apply(WatchState("pods", "forbidden", since=FROZEN, detail="pods is forbidden: User \"alice\" cannot "
                                "list resource \"pods\" in API group \"\" at the cluster scope"))
    permissions = PermissionsController(host)
    permissions.update()
    assert host.rescoped == ["team-a"]
    notice = "pods: listing all namespaces is forbidden; showing namespace team-a"
    assert host.notices == [("warning", "Permissions", f"{notice}.\n{host.state.watch_states['pods'].detail}")]
    assert permissions.banner_lines()[0] == notice
    permissions.update()  # scoped now: no second fallback
    assert host.rescoped == ["team-a"]


def test_a_replay_never_falls_back():
    host = FakeHost(RefusingSource(namespace=None), replaying=True)
    host.state.apply(WatchState("pods", "forbidden", since=FROZEN, detail="forbidden"))
    PermissionsController(host).update()
    assert host.rescoped == [] and host.notices == []


def test_a_toggles_between_every_namespace_and_the_last_one_shown():
    host = FakeHost(RecordedSource(namespace=None))
    scope = ScopeController(host)
    scope.toggle_all_namespaces()  # no namespace shown yet: default
    assert host.rescoped == ["default"]
    scope.leaving(host.source)
    host.rescope("team-b")
    scope.leaving(host.source)
    host.rescope(None)
    scope.toggle_all_namespaces()
    assert host.rescoped == ["default", "team-b", None, "team-b"]


def test_a_typed_namespace_that_is_no_namespace_name_is_refused_with_a_warning():
    host = FakeHost(RecordedSource(namespace=None))
    ScopeController(host).choose_namespace()
    (chooser, answered), = host.screens
    assert chooser.title_text == "Show which namespace?"
    answered("Not_A_Namespace")
    answered("team-c")
    assert host.rescoped == ["team-c"]
    assert host.notices == [("warning", "Namespace", "'Not_A_Namespace' is not a namespace name (lower-case letters, "
                             "digits and '-').")]
