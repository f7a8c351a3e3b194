"""Pieces shared by the CLI's commands (``_main``: methods, select, demo; ``_harness``: compare,
reproduce), in a module of their own so that the two command modules do not import each other.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = [
    "DEFAULT_DATA",
    "CLIError",
    "add_progress_options",
    "print_table",
    "progress_enabled",
    "resolve_data",
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


def resolve_data(text: str) -> str:
    """Turn a DATA argument into what :meth:`DataSpec.from_string` reads, the same way for
    ``select`` and ``compare``.

    In order: ``default``; an existing file; a benchmark name, with or without ``.mat``
    (``ALLAML``, ``ALLAML.mat``; read from ``SPARSEFS_DATA`` or the download cache); a file of
    that name inside ``SPARSEFS_DATA``; a ``make_*`` generator. Anything else is returned as a
    path (and reported as missing when loaded).
    """
    from sparsefs.datasets import ASU_DATASETS
    from sparsefs.datasets._asu import shared_data_dir

    if text == DEFAULT_DATA or Path(text).exists():
        return text
    names = {k.lower().replace("-", "_"): k for k in ASU_DATASETS}
    key = text.lower().replace("-", "_")
    key = key[:-4] if key.endswith(".mat") else key
    if key in names:
        return names[key]
    home = shared_data_dir()
    if home is not None and (home / text).is_file():
        return str(home / text)
    return text


def print_table(header, rows) -> None:
    """Print rows under a header, columns padded, with a dashed rule."""
    cells = [tuple(map(str, header)), *[tuple(map(str, r)) for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
