"""Building the site: ``sphinx-build -W`` on ``docs/`` of the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

#: The checkout: the folder that holds ``sparsefs/``, ``docs/`` (this tool's home) and
#: ``examples/``. The site documents this checkout's sparsefs, whatever is installed.
REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

#: Sources that every build writes (git ignores them); ``clean`` removes them.
GENERATED = ("api", "auto_examples")


@dataclass(frozen=True)
class BuildResult:
    """The outcome of :func:`build`.

    Attributes
    ----------
    returncode : int
        ``sphinx-build``'s exit status: 0 when the site built without a warning.
    seconds : float
        Wall-clock time of the build.
    html : Path
        The built site (``index.html`` inside).
    command : list of str
        The command that ran.
    """

    returncode: int
    seconds: float
    html: Path
    command: list[str]


def docs_dir() -> Path:
    """The ``docs/`` folder of the checkout.

    Raises
    ------
    FileNotFoundError
        When this checkout has no ``docs/conf.py``.
    """
    if not (DOCS / "conf.py").is_file():
        raise FileNotFoundError(f"no conf.py in {DOCS}: the site is built from a git checkout "
                                "of sparsefs")
    return DOCS


def clean(out: Path | str | None = None) -> None:
    """Remove the generated sources (``docs/api``, ``docs/auto_examples``) and the build."""
    docs = docs_dir()
    for name in GENERATED:
        shutil.rmtree(docs / name, ignore_errors=True)
    shutil.rmtree(Path(out) if out is not None else docs / "_build", ignore_errors=True)


def build(out: Path | str | None = None, *, fresh: bool = False, gallery: bool = True,
          jobs: str = "1", quiet: bool = True, capture: bool = False) -> BuildResult:
    """Build the HTML site with ``-W`` (a warning fails the build) and ``--keep-going`` (all
    warnings are reported first).

    Parameters
    ----------
    out : path, optional
        Output folder; default ``docs/_build/html`` (doctrees in ``<out>/../doctrees``).
    fresh : bool, default=False
        Remove every generated source and the previous build first (as a clean checkout).
    gallery : bool, default=True
        Run the gallery's examples. ``False`` builds the pages without running them (a quick
        check of the other pages; not a complete build).
    jobs : str, default="1"
        ``sphinx-build -j``: a number or ``"auto"``.
    quiet : bool, default=True
        ``-q``: only warnings and errors.
    capture : bool, default=False
        Capture Sphinx's output (``BuildResult`` does not keep it: read the log) instead of
        letting it through.

    Returns
    -------
    BuildResult
    """
    docs = docs_dir()
    html = Path(out) if out is not None else docs / "_build" / "html"
    doctrees = html.parent / "doctrees"
    if fresh:
        clean(html)
        shutil.rmtree(doctrees, ignore_errors=True)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-j", jobs,
           "-d", str(doctrees)]
    if quiet:
        cmd.append("-q")
    if not gallery:
        cmd += ["-D", "sphinx_gallery_conf.plot_gallery=0"]
    cmd += [str(docs), str(html)]
    env = dict(os.environ)
    # the checkout's sparsefs, whatever is installed; figures without a display
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env.setdefault("MPLBACKEND", "Agg")
    start = time.perf_counter()
    log = html.parent / "build.log"
    if capture:
        html.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w", encoding="utf-8") as fh:
            code = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
    else:
        code = subprocess.run(cmd, env=env).returncode
    return BuildResult(code, time.perf_counter() - start, html, cmd)
