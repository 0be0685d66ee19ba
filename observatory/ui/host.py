"""What the feature controllers (scope, permissions, scheduler, lesson, teaching, replay) need from the screen that
holds them: the panes it composed, and the small protocols each controller's own host protocol builds on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from textual.screen import ModalScreen
    from textual.widgets import Input

    from observatory.model.source import Source
    from observatory.model.state import ClusterState
    from observatory.ui.widgets.events_pane import EventsPane
    from observatory.ui.widgets.exchange_pane import ExchangePane
    from observatory.ui.widgets.header_bar import HeaderBar
    from observatory.ui.widgets.lesson_pane import LessonPane
    from observatory.ui.widgets.nodes_pane import NodesPane
    from observatory.ui.widgets.pending_pods import PendingPodsPane
    from observatory.ui.widgets.timeline_pane import TimelinePane
    from observatory.ui.widgets.why_pane import WhyPane

__all__ = ["Asker", "Notifier", "Panes", "report_worker_failure"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Panes:
    """The panes of the main screen, as composed. ``lesson`` only in lesson mode."""

    header: HeaderBar
    pending: PendingPodsPane
    why: WhyPane
    nodes: NodesPane
    exchange: ExchangePane
    events: EventsPane
    timeline: TimelinePane
    filter: Input
    lesson: LessonPane | None

    @classmethod
    def build(cls, *, lesson: bool) -> Panes:
        """The panes, with their ids (styles/app.tcss lays them out by id); the lesson pane only for a lesson."""
        from textual.widgets import Input

        from observatory.ui.widgets.events_pane import EventsPane
        from observatory.ui.widgets.exchange_pane import ExchangePane
        from observatory.ui.widgets.header_bar import HeaderBar
        from observatory.ui.widgets.lesson_pane import LessonPane
        from observatory.ui.widgets.nodes_pane import NodesPane
        from observatory.ui.widgets.pending_pods import PendingPodsPane
        from observatory.ui.widgets.timeline_pane import TimelinePane
        from observatory.ui.widgets.why_pane import WhyPane

        return cls(header=HeaderBar(id="header"), pending=PendingPodsPane(id="pending"), why=WhyPane(id="why"),
                   nodes=NodesPane(id="nodes"), exchange=ExchangePane(id="exchange"), events=EventsPane(id="events"),
                   timeline=TimelinePane(id="timeline"),
                   filter=Input(placeholder="filter pending pods by namespace/name", id="filter"),
                   lesson=LessonPane(id="lesson") if lesson else None)


class ScreenFacts(Protocol):
    """What every controller reads from the screen: the cluster's source and the state its watches keep."""

    @property
    def source(self) -> Source: ...

    @property
    def state(self) -> ClusterState: ...


class Notifier(Protocol):
    """Notifications, markup off unless asked for (they quote server messages and names users typed)."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None: ...


class Asker(Notifier, Protocol):
    """A modal question whose answer goes to ``answered``."""

    def ask(self, screen: ModalScreen[T], answered: Callable[[T | None], None]) -> None: ...


def report_worker_failure(notifier: Notifier, worker: Worker[object]) -> None:
    """An unexpected worker failure as a visible, copyable message, never a traceback."""
    if worker.state == WorkerState.ERROR:
        error = worker.error
        notifier.notify(f"{worker.name}: {type(error).__name__}: {error}", title="observatory error",
                        severity="error", timeout=15, markup=False)  # the error's text is not markup
