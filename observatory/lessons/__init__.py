"""The lessons that ship with observatory: ``*.yaml`` files in this package, in the format of
:mod:`observatory.model.lessons`, read with :mod:`importlib.resources` so they work from a wheel.

``observatory lessons`` prints :func:`list_lessons`; ``observatory [--lab] --lesson NAME`` runs
:func:`load_lesson` (a shipped name, or the path of a lesson file one is writing).
"""

from __future__ import annotations

import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from observatory.model.lessons import Lesson, LessonError, LessonInfo, parse_lesson

__all__ = ["Lesson", "LessonError", "LessonInfo", "lesson_names", "list_lessons", "load_lesson"]

SUFFIX = ".yaml"


def _files() -> dict[str, Traversable]:
    return {f.name[: -len(SUFFIX)]: f for f in resources.files(__name__).iterdir()
            if f.name.endswith(SUFFIX) and f.is_file()}


def lesson_names() -> list[str]:
    """The shipped lesson names, sorted."""
    return sorted(_files())


def _read(source: str, read: bytes) -> str:
    try:
        return read.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LessonError(source, f"the file is not UTF-8 text (bad byte at offset {err.start})") from None


def load_lesson(name: str) -> Lesson:
    """The shipped lesson ``name``, or the lesson file at ``name`` when it is a path (contains a path separator or
    ends in ``.yaml`` / ``.yml``).

    Raises :class:`LessonError` for an unknown name (listing the shipped ones), a file that cannot be read, or a
    lesson that does not parse; a shipped lesson whose ``name`` is not its file name is an error too.
    """
    files = _files()
    if name in files:
        file = files[name]
        source = str(file)
        lesson = parse_lesson(_read(source, file.read_bytes()), source)
        if lesson.name != name:
            raise LessonError(source, f"must be {name!r}, the file's name, not {lesson.name!r}", "name")
        return lesson
    if os.sep in name or "/" in name or name.endswith((".yaml", ".yml")):
        path = Path(name).expanduser()
        try:
            data = path.read_bytes()
        except OSError as err:
            raise LessonError(str(path), f"the file cannot be read ({err.strerror or err})") from None
        return parse_lesson(_read(str(path), data), str(path))
    raise LessonError(name, f"no such lesson; the lessons are: {', '.join(sorted(files)) or 'none'}")


def list_lessons() -> list[LessonInfo]:
    """Name, title and summary of every shipped lesson, sorted by name. Raises :class:`LessonError` if a shipped
    file does not load (a packaging bug)."""
    return [load_lesson(name).info for name in lesson_names()]
