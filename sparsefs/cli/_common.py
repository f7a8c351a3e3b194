"""Pieces shared by the CLI's commands (``_main``: methods, select, export, demo; ``_harness``:
compare, reproduce), in a module of their own so that the command modules do not import each
other. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import warnings
from collections.abc import Iterator

__all__ = [
    "DEFAULT_DATA",
    "CLIError",
    "add_progress_options",
    "emit_note",
    "notes",
    "print_table",
    "progress_enabled",
    "terminate_cleanly",
]

#: the DATA argument that names the embedded default data set
DEFAULT_DATA = "default"


class CLIError(Exception):
    """A runtime error reported as one line and exit code 1."""


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (default: a bar on stderr when it is a terminal)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_const", const=True,
                       default=None, help="show the progress bar on stderr even when it is not "
                       "a terminal (default: shown on a terminal only)")
    group.add_argument("--no-progress", dest="progress", action="store_const", const=False,
                       help="hide the progress bar")


def progress_enabled(args: argparse.Namespace) -> bool:
    """Whether to show a bar: the flag if given, else whether stderr is a terminal."""
    if args.progress is not None:
        return bool(args.progress)
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def print_table(header, rows) -> None:
    """Print rows under a header, columns padded, with a dashed rule."""
    cells = [tuple(map(str, header)), *[tuple(map(str, r)) for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


# ------------------------------------------------------------------------------------------
# notes: warnings and log records as one line each, around progress bars
# ------------------------------------------------------------------------------------------


def emit_note(text: str) -> None:
    """Write ``sparsefs: note: TEXT`` on stderr, above a running tqdm bar if there is one."""
    line = f"sparsefs: note: {text}"
    tqdm = sys.modules.get("tqdm")
    if tqdm is not None and getattr(tqdm, "tqdm", None) is not None:
        tqdm.tqdm.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr)


def _first_line(message: object) -> str:
    """The first line of ``message``; an exception without text gives its type's name."""
    text = str(message).strip()
    if text:
        return text.splitlines()[0]
    return type(message).__name__ if isinstance(message, BaseException) else ""


class _NoteHandler(logging.Handler):
    """Log records of the harness as notes."""

    def __init__(self, seen: set[str]):
        super().__init__(logging.INFO)
        self.seen = seen

    def emit(self, record: logging.LogRecord) -> None:
        text = _first_line(record.getMessage())
        if text and text not in self.seen:
            self.seen.add(text)
            emit_note(text)


@contextlib.contextmanager
def notes(*, quiet: bool = False) -> Iterator[set[str]]:
    """Within the block, every Python warning and every warning logged by ``sparsefs.*`` is
    printed once as ``sparsefs: note: <first line>`` (no file names, source lines or
    categories), above any progress bar; ``quiet`` drops them. Yields the set of notes shown.
    """
    seen: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = _first_line(message) or category.__name__
        if quiet or text in seen:
            return
        seen.add(text)
        emit_note(text)

    logger = logging.getLogger("sparsefs")
    handler = _NoteHandler(seen)
    old_level, old_propagate = logger.level, logger.propagate
    with warnings.catch_warnings():
        warnings.showwarning = show
        if not quiet:
            logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
        try:
            yield seen
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = old_propagate


@contextlib.contextmanager
def terminate_cleanly() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP (a killed job, a closed terminal) into ``SystemExit`` inside the
    block, so that ``finally`` clauses run: staged output folders and temporary files are
    removed as after Ctrl-C. Outside the main thread (or where signals cannot be set) it does
    nothing."""
    installed = []

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        with contextlib.suppress(ValueError, OSError):  # not the main thread, or not allowed
            installed.append((sig, signal.signal(sig, handler)))
    try:
        yield
    finally:
        for sig, old in installed:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, old)
