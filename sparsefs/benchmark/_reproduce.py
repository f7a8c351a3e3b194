"""Paper reproductions: ``configs/<stem>.toml`` discovered by stem, run, and reported."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sparsefs.benchmark._data import import_object
from sparsefs.benchmark._results import Results
from sparsefs.benchmark._runner import run
from sparsefs.benchmark._spec import ReproductionSpec

__all__ = ["CONFIG_ENV_VAR", "Reproduction", "config_dirs", "find_config", "list_reproductions",
           "reproduce", "run_hooks"]

CONFIG_ENV_VAR = "SPARSEFS_CONFIGS"
"""Environment variable naming a directory of reproduction configs (searched first)."""


def config_dirs(config_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Where reproduction configs are looked for, in order.

    ``config_dir`` when given; ``$SPARSEFS_CONFIGS``; ``configs/`` of the source checkout
    sparsefs was imported from; ``./configs``.
    """
    import sparsefs

    dirs: list[Path] = []
    if config_dir is not None:
        dirs.append(Path(config_dir))
    env = os.environ.get(CONFIG_ENV_VAR)
    if env:
        dirs.append(Path(env))
    dirs.append(Path(sparsefs.__file__).resolve().parent.parent / "configs")
    dirs.append(Path.cwd() / "configs")
    seen, out = set(), []
    for d in dirs:
        key = d.resolve()
        if key not in seen and d.is_dir():
            seen.add(key)
            out.append(d)
    return out


def list_reproductions(config_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """The stems of every reproduction config found (sorted)."""
    stems = set()
    for d in config_dirs(config_dir):
        stems.update(p.name.removesuffix(".toml") for p in d.glob("*.toml"))
    return sorted(stems)


def find_config(stem: str, config_dir: str | os.PathLike[str] | None = None) -> Path:
    """The config file of ``stem`` (or ``stem`` itself when it is a ``.toml`` path).

    Raises
    ------
    FileNotFoundError
        With the directories searched and the stems available.
    """
    as_path = Path(stem)
    if as_path.suffix == ".toml" and as_path.is_file():
        return as_path
    dirs = config_dirs(config_dir)
    for d in dirs:
        candidate = d / f"{stem}.toml"
        if candidate.is_file():
            return candidate
    known = ", ".join(list_reproductions(config_dir)) or "none"
    where = ", ".join(str(d) for d in dirs) or "no configs directory found"
    raise FileNotFoundError(
        f"no reproduction config {stem!r} (searched {where}; available: {known}); set "
        f"{CONFIG_ENV_VAR} or pass a .toml path"
    )


@dataclass
class Reproduction:
    """A finished reproduction run.

    Attributes
    ----------
    spec : ReproductionSpec
        As run (reduced when ``quick``).
    results : list of Results
        One per experiment, in the spec's order.
    quick : bool
    """

    spec: ReproductionSpec
    results: list[Results]
    quick: bool = False

    def combined_table(self):
        """All experiments' tables in one DataFrame (the ``experiment`` column tells them
        apart)."""
        import pandas as pd

        return pd.concat([r.table for r in self.results], ignore_index=True)


def reproduce(
    stem: str | ReproductionSpec,
    *,
    quick: bool = False,
    n_jobs: int | None = 1,
    progress: bool | None = None,
    keep_predictions: bool = False,
    config_dir: str | os.PathLike[str] | None = None,
) -> Reproduction:
    """Run the reproduction of one paper.

    Parameters
    ----------
    stem : str or ReproductionSpec
        A config stem (``configs/<stem>.toml``), a ``.toml`` path, or a spec.
    quick : bool, default=False
        Run the reduced spec (:meth:`ReproductionSpec.quick_version`).
    n_jobs, progress, keep_predictions :
        Passed to :func:`sparsefs.benchmark.run`.
    config_dir : path, optional
        Searched first for the config.

    Returns
    -------
    Reproduction
    """
    spec = stem if isinstance(stem, ReproductionSpec) else ReproductionSpec.from_toml(
        find_config(stem, config_dir))
    if quick:
        spec = spec.quick_version()
    results = [run(e, n_jobs=n_jobs, progress=progress, keep_predictions=keep_predictions)
               for e in spec.experiments]
    return Reproduction(spec=spec, results=results, quick=quick)


def run_hooks(reproduction: Reproduction, outdir: str | os.PathLike[str]) -> list[str]:
    """Call the config's report hooks; each returns a markdown section.

    A hook is ``"module:function"`` called as ``function(reproduction, outdir)`` (``outdir`` a
    :class:`pathlib.Path` where it may save figures, linked relative to the report). This is
    where a method adds what the generic report cannot know (a gap-statistic curve, feature
    frequencies, the paper's qualitative claims checked against our numbers).
    """
    sections = []
    for hook in reproduction.spec.hooks:
        func = import_object(hook)
        text = func(reproduction, Path(outdir))
        if text:
            sections.append(str(text).rstrip() + "\n")
    return sections
