"""A modal that dismisses once: a second Enter queued before the screen is gone must not pop the screen below."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from textual.screen import ModalScreen

ResultType = TypeVar("ResultType")


class OnceModal(ModalScreen[ResultType], Generic[ResultType]):
    """``dismiss`` acts only the first time and only while this screen is the current one; later calls (a fast
    double Enter, a key queued behind the answer) are ignored instead of popping another screen."""

    _dismissing = False

    def dismiss(self, result: Any = None) -> Any:
        if self._dismissing or not self.is_current:
            return None
        self._dismissing = True
        return super().dismiss(result)
