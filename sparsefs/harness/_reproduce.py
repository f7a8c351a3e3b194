"""Paper reproductions: ``configs/<stem>.toml`` discovered by stem, run, and reported."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from sparsefs.harness._data import import_object
from sparsefs.harness._results import Reproduction, Results
from sparsefs.harness._runner import run
from sparsefs.harness._spec import ReproductionSpec

__all__ = ["CONFIG_ENV_VAR", "Reproduction", "config_dirs", "find_config", "list_reproductions",
           "load_reproduction", "render_report", "reproduce", "run_hooks", "stored_figures"]

CONFIG_ENV_VAR = "SPARSEFS_CONFIGS"
"""Environment variable naming a directory of reproduction configs (searched first)."""


#: Where the configs travel inside an installed wheel (``pyproject.toml`` force-includes the
#: repository's ``configs/`` there).
PACKAGED_CONFIGS = "_configs"


def config_dirs(config_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Where reproduction configs are looked for, in order.

    1. ``config_dir`` when given;
    2. ``$SPARSEFS_CONFIGS``;
    3. ``configs/`` of the source checkout sparsefs was imported from (an editable install or
       ``PYTHONPATH``), recognised by the ``pyproject.toml`` beside it;
    4. the configs shipped inside the installed package (``sparsefs/_configs``);
    5. ``./configs``.

    Only existing directories are returned, each once.
    """
    import sparsefs

    package = Path(sparsefs.__file__).resolve().parent
    dirs: list[Path] = []
    if config_dir is not None:
        dirs.append(Path(config_dir))
    env = os.environ.get(CONFIG_ENV_VAR)
    if env:
        dirs.append(Path(env))
    if (package.parent / "pyproject.toml").is_file():
        dirs.append(package.parent / "configs")
    dirs.append(package / PACKAGED_CONFIGS)
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
        Passed to :func:`sparsefs.harness.run`.
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


def load_reproduction(
    stem: str | ReproductionSpec,
    out: str | os.PathLike[str],
    *,
    config_dir: str | os.PathLike[str] | None = None,
    allow_missing: bool = False,
) -> Reproduction:
    """A stored reproduction run (``OUT/<stem>/<experiment>.csv.gz``), without recomputing.

    Whether the stored run was ``--quick`` is read from the spec hashes stored with the
    results (against the config's full and quick experiments).

    Parameters
    ----------
    stem : str or ReproductionSpec
    out : path
        The ``--out`` directory of the run (the repository keeps its reports in
        ``docs/reproductions``).
    config_dir : path, optional
    allow_missing : bool, default=False
        Leave out the experiments that have no stored results (a new experiment not run
        yet) instead of raising; at least one must be stored.

    Returns
    -------
    Reproduction
        With the config's spec (the quick version when the stored run was quick), its
        experiments reduced to those loaded.

    Raises
    ------
    FileNotFoundError
        When an experiment of the config has no stored results (any, with
        ``allow_missing=True``).
    """
    spec = stem if isinstance(stem, ReproductionSpec) else ReproductionSpec.from_toml(
        find_config(stem, config_dir))
    sub = Path(out) / spec.stem
    missing = [e.name for e in spec.experiments if not (sub / f"{e.name}.csv.gz").is_file()]
    if missing and allow_missing and len(missing) < len(spec.experiments):
        spec = replace(spec, experiments=tuple(e for e in spec.experiments
                                               if e.name not in missing))
        missing = []
    if missing:
        raise FileNotFoundError(
            f"no stored results for experiment(s) {missing} of {spec.stem!r} in {sub} (run "
            f"'sparsefs reproduce {spec.stem} --out {out}' first)"
        )
    results = [Results.load(sub / f"{e.name}.csv.gz") for e in spec.experiments]
    # quick when every stored hash is the quick spec's and not also the full spec's
    quick = all(r.meta.get("spec_hash") == e.quick_version().spec_hash() != e.spec_hash()
                for r, e in zip(results, spec.experiments))
    return Reproduction(spec=spec.quick_version() if quick else spec, results=results,
                        quick=quick)


_FIGURE = re.compile(r"^!\[(?P<caption>[^\]]*)\]\((?P<path>[^)]+)\)\s*$")


def stored_figures(report: str | os.PathLike[str]) -> dict[str, list[tuple[str, str]]]:
    """The figures of each experiment section of an existing report (``### Figures`` under
    ``## Experiment `name```), keeping those whose file exists beside the report."""
    path = Path(report)
    if not path.is_file():
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    experiment, in_figures = None, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            m = re.match(r"## Experiment `([^`]+)`", line)
            experiment, in_figures = (m.group(1) if m else None), False
        elif line.startswith("### "):
            in_figures = line.strip() == "### Figures"
        elif experiment and in_figures:
            m = _FIGURE.match(line)
            if m and (path.parent / m.group("path")).is_file():
                out.setdefault(experiment, []).append((m.group("caption"), m.group("path")))
    return out


def render_report(
    stem: str | ReproductionSpec,
    out: str | os.PathLike[str] = "reproductions",
    *,
    config_dir: str | os.PathLike[str] | None = None,
    figures: dict[str, list[tuple[str, str]]] | None = None,
) -> Path:
    """Re-render ``OUT/<stem>.md`` from the stored results, without recomputing the run.

    The tables, the Claims table and the hooks' sections are computed again from the stored
    results (the hooks may redo small fits of their own); the figures of the stored run are
    kept, and hand-written notes on the run (``OUT/<stem>/notes.md``, when present) are placed
    after the Claims and Protocol sections. This is ``sparsefs reproduce STEM --from-results``.

    Parameters
    ----------
    stem : str or ReproductionSpec
    out : path, default="reproductions"
    config_dir : path, optional
    figures : dict, optional
        Experiment name -> ``[(caption, path relative to OUT), ...]``, replacing the stored
        figures of those experiments (for experiments run separately).

    Returns
    -------
    pathlib.Path
        The report written.
    """
    from sparsefs.harness._report import markdown_report

    full = stem if isinstance(stem, ReproductionSpec) else ReproductionSpec.from_toml(
        find_config(stem, config_dir))
    repro = load_reproduction(full, out, allow_missing=True)
    spec = repro.spec
    out = Path(out)
    report = out / f"{spec.stem}.md"
    figures = {**stored_figures(report), **(figures or {})}
    extra = run_hooks(repro, out / spec.stem)
    not_run = [e.name for e in full.experiments if e.name not in
               {x.name for x in spec.experiments}]
    if not_run:
        extra.append("**Not run yet:** experiment(s) " + ", ".join(f"`{n}`" for n in not_run)
                     + " of the config have no stored results (their claims are `not "
                     "attempted`).\n")
    changed = [e.name for e, r in zip(spec.experiments, repro.results)
               if r.meta.get("spec_hash") != e.spec_hash()]
    if changed:
        extra.append("**Note:** the config of experiment(s) " + ", ".join(
            f"`{n}`" for n in changed) + " changed since the stored run; the tables show the "
            "stored run (its spec is printed in each section).\n")
    finished = max(str(r.meta.get("finished", "")) for r in repro.results)
    command = (f"sparsefs reproduce {spec.stem}" + (" --quick" if repro.quick else "")
               + f" --out {out}\n# tables re-rendered from the stored results:\n"
               f"sparsefs reproduce {spec.stem} --from-results --out {out}")
    title = f"Reproduction: {spec.title}" + (" (quick run)" if repro.quick else "")
    notes_file = out / spec.stem / "notes.md"
    notes = notes_file.read_text(encoding="utf-8") if notes_file.is_file() else None
    text = markdown_report(repro.results, title=title, command=command, date=finished,
                           figures=figures, reproduction=spec, quick=repro.quick,
                           extra_sections=extra, notes=notes)
    report.write_text(text, encoding="utf-8")
    return report
