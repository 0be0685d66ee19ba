"""The command line for teaching and recording: ``observatory replay``, ``observatory lessons``, and the
``--record FILE`` and ``--lesson NAME`` flags of the screen. :mod:`observatory.cli` wires these in.

Every failure the user can cause ends as one line on stderr and exit code 2 (:data:`EXIT_USAGE`), never a traceback:
``observatory: FILE: line N: <what is wrong>`` for a recording that cannot be replayed, ``observatory: --lesson
NAME: no such lesson; the lessons are: …`` for an unknown lesson, ``observatory: cannot record to FILE: <why>``.

ObservatoryApp grows its teaching hooks separately: :func:`app_options` passes ``lesson=`` and ``key_script=`` only
when its ``__init__`` declares them, so this works before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from observatory.settings import Settings

if TYPE_CHECKING:
    from observatory.model.lessons import Lesson

__all__ = ["EXIT_USAGE", "add_flags", "add_parsers", "app_options", "list_lessons", "parse_speed", "record_problem",
           "resolve_lesson", "run_replay"]

EXIT_USAGE = 2


def parse_speed(text: str) -> float:
    """``--speed X``: a number greater than 0; ``inf`` plays as fast as possible. ArgumentTypeError otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number greater than 0 (inf: as fast as possible)")
    return value


def add_flags(parser: argparse.ArgumentParser) -> None:
    """``--record FILE`` and ``--lesson NAME`` on the main parser."""
    parser.add_argument("--record", metavar="FILE",
                        help="write every watch delta, Binding exchange and key press to FILE (JSON Lines) for "
                        "'observatory replay'")
    parser.add_argument("--lesson", metavar="NAME",
                        help="walk a lesson ('observatory lessons' lists them); with the lab, it loads the "
                        "lesson's scenario unless --scenario is given")


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """The ``replay`` and ``lessons`` subcommands."""
    replay = commands.add_parser(
        "replay", help="play a recording made with --record, with no cluster",
        description="Play back a recording made with 'observatory --record FILE': the same watch deltas, Binding "
        "answers and key presses at their recorded pace, on the recorded clock. Exit code 2 when FILE is not a "
        "recording.")
    replay.add_argument("file", metavar="FILE", help="the recording (JSON Lines)")
    replay.add_argument("--speed", type=parse_speed, default=1.0, metavar="X",
                        help="pace: 2 twice as fast, 0.5 half; inf as fast as possible (default 1)")
    commands.add_parser("lessons", help="list the lessons observatory ships",
                        description="List the lessons observatory ships: name and title, then a one-line summary.")


def list_lessons() -> int:
    """``observatory lessons``: per lesson ``NAME  TITLE`` and the summary indented below it. Exit 1 when a
    shipped lesson does not load (a packaging bug)."""
    from observatory.lessons import LessonError
    from observatory.lessons import list_lessons as shipped

    try:
        infos = shipped()
    except LessonError as exc:
        print(f"observatory: {exc}", file=sys.stderr)
        return 1
    for info in infos:
        print(f"{info.name:<20} {info.title}")
        print(f"{'':<20} {info.summary}")
    return 0


def resolve_lesson(name: str | None) -> tuple[Lesson | None, str | None]:
    """``(lesson, None)`` for ``--lesson NAME`` (a shipped name or a lesson file), ``(None, None)`` without it, and
    ``(None, message)`` when it cannot be loaded; the message names the available lessons for an unknown name."""
    if not name:
        return None, None
    from observatory.lessons import LessonError, load_lesson

    try:
        return load_lesson(name), None
    except LessonError as exc:
        return None, f"observatory: --lesson {exc}"


def record_problem(path: str) -> str | None:
    """The one-line message when ``--record FILE`` cannot be written (checked before connecting), else None."""
    from observatory.recorder import check_writable

    problem = check_writable(Path(path))
    return f"observatory: cannot record to {path}: {problem}" if problem else None


def app_options(app_class: type, **candidates: Any) -> dict[str, Any]:
    """The ``candidates`` that are not None and that ``app_class.__init__`` declares by name (``lesson``,
    ``key_script``): the app's teaching hooks are passed only once it has them."""
    accepted = inspect.signature(app_class).parameters
    return {name: value for name, value in candidates.items()
            if value is not None and name in accepted
            and accepted[name].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}


def run_replay(settings: Settings, args: argparse.Namespace) -> int:
    """``observatory replay FILE [--speed X]``: the TUI over a :class:`~observatory.replay.ReplaySource`, on its
    clock; the recorded keys are pressed again when the app accepts ``key_script``, and ``--lesson NAME`` is walked
    when it accepts ``lesson``. ``--record`` is refused (exit 2)."""
    from observatory.model.recording import RecordingError
    from observatory.replay import ReplaySource, load_recording

    if getattr(args, "record", None):
        print("observatory: --record does not apply to replay", file=sys.stderr)
        return EXIT_USAGE
    try:
        recording = load_recording(args.file)
    except RecordingError as exc:
        print(f"observatory: {args.file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"observatory: {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    lesson, problem = resolve_lesson(getattr(args, "lesson", None))
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE

    from observatory.ui.app import ObservatoryApp

    async def main() -> int:
        source = ReplaySource(recording, speed=args.speed)
        wants_keys = "key_script" in app_options(ObservatoryApp, key_script=True)
        options = app_options(ObservatoryApp, lesson=lesson, key_script=source.keys() if wants_keys else None)
        app = ObservatoryApp(source, clock=source.clock, refresh_interval=settings.ui.refresh_interval,
                             recent_seconds=settings.ui.recent_seconds, keymap=settings.ui.keymap, **options)
        try:
            await app.run_async()
        finally:
            await source.close()
        return app.return_code or 0

    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(main())
    return 0
