"""The permissions banner under the header: what the screen does because the API server said no (a namespace
fallback, Bind disabled by an access review), one line each. Hidden while there is nothing to say."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static


class PermissionsBanner(Static):
    """One line per notice; :meth:`show` with no lines hides it."""

    DEFAULT_CSS = """
    PermissionsBanner {
        height: auto;
        padding: 0 1;
        color: $text-warning;
        background: $warning 15%;
    }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lines: tuple[str, ...] = ()

    @classmethod
    def show_under(cls, header: Widget, lines: tuple[str, ...]) -> None:
        """Show ``lines`` in the banner after ``header``, mounting it there the first time there is a line."""
        banner = next((w for w in header.siblings if isinstance(w, cls)), None)
        if banner is None:
            if not lines or not isinstance(header.parent, Widget):
                return
            banner = cls(id="permissions")
            header.parent.mount(banner, after=header)
        banner.show(lines)

    def show(self, lines: tuple[str, ...]) -> None:
        """Show ``lines`` (plain text, one notice each); a no-op when they did not change."""
        if lines == self.lines:
            return
        self.lines = lines
        self.display = bool(lines)
        self.update(Text("\n".join(lines)))
