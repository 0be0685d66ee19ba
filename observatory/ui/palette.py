"""The command palette's observatory commands (``ctrl+p``), from a Textual command :class:`Provider`: the scheduler
(start, stop, Why pane or decisions), the key-cast overlay, the screenshot, the equivalent commands and the
transcript, and the embedded lab's kubeconfig. Each names its key, where it has one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from observatory.ui.scheduler import SchedulerController
    from observatory.ui.teaching import TeachingController

__all__ = ["ObservatoryCommands", "PaletteCommand", "PaletteHost"]

PaletteCommand = tuple[str, str, Callable[[], object]]
"""(title, help, callback)."""


@runtime_checkable
class PaletteHost(Protocol):
    """What the commands act on: the main screen's scheduler and teaching controllers and two of its actions."""

    scheduler: SchedulerController
    teaching: TeachingController

    def action_toggle_keycast(self) -> None: ...

    def action_show_kubeconfig(self) -> None: ...

    def set_timer(self, delay: float, callback: Callable[[], object]) -> object: ...


class ObservatoryCommands(Provider):
    """The commands of the main screen the palette was opened on (the screen that lists this provider)."""

    def commands(self) -> list[PaletteCommand]:
        screen = self.screen
        if not isinstance(screen, PaletteHost):
            return []
        scheduler, teaching = screen.scheduler, screen.teaching
        out: list[PaletteCommand] = []
        if scheduler.run_now is None:
            out.append(("Start scheduler…", "Run observatory as the scheduler of a schedulerName, and watch each "
                        "decision (r)", scheduler.toggle))
        else:
            out.append(("Stop scheduler", f"Stop {scheduler.run_now.options.scheduler_name}'s in-process scheduler "
                        "(r)", scheduler.toggle))
            if scheduler.why_instead:
                out.append(("Show scheduler decisions", "The scheduler's decisions in the Why pane's place (w)",
                            scheduler.toggle_why_decisions))
            else:
                out.append(("Show Why pane", "The Why pane of the selected pod in the decisions' place, while the "
                            "scheduler runs (w)", scheduler.toggle_why_decisions))
        out += [("Toggle key-cast overlay", "Show or hide the last keys pressed, for viewers of a recording or a "
                 "projector", screen.action_toggle_keycast),
                ("Screenshot", f"Save an SVG of the screen in {teaching.screenshot_dir} (s)",
                 lambda: screen.set_timer(0.1, teaching.screenshot_svg)),
                ("Equivalent commands", "kubectl and curl for the last Binding (c)", teaching.show_commands),
                ("Export transcript", "The lab transcript as Markdown with a JSON twin (e)", teaching.transcript),
                ("Kubeconfig", "The embedded lab's kubeconfig, to follow along with kubectl in another terminal",
                 screen.action_show_kubeconfig)]
        return out

    async def discover(self) -> Hits:
        for title, help_text, callback in sorted(self.commands(), key=lambda command: command[0]):
            yield DiscoveryHit(title, callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self.commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)
