"""Claim checks of ``sparsefs reproduce ufcm`` (``configs/ufcm.toml``).

Wang et al. (ECML-PKDD 2015; spec ``ufcm.md`` B.9). The paper's experiments section is not
available, so the claims are the abstract's and the experiment list's; the checks read the
stored results and return :class:`~sparsefs.harness.ClaimVerdict`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from sparsefs.harness._claims import ClaimNotRun, ClaimVerdict, fraction_verdict
from sparsefs.harness.hooks._common import best_cells

__all__ = ["beats_baselines", "convergence", "converges", "extra_sections"]


def _best(reproduction: Any, experiment: str, metric: str, estimator: str):
    best = best_cells(reproduction, experiment, metric, estimator)
    return best.pivot_table(index="dataset", columns="method", values="value", sort=False)


def beats_baselines(reproduction: Any, *, experiment: str = "clustering", metric: str = "acc",
                    estimator: str = "kmeans", methods: Sequence[str],
                    rivals: Sequence[str], default: str | None = None) -> ClaimVerdict:
    """The best of ``methods`` (UFCM's grid rows, best over k and over the grid, as the papers
    report it) above the best of ``rivals`` on each data set.

    ``default`` (the shipped default's row) is reported beside it and said to be outside the
    rule: the paper tunes UFCM over a grid, which is what the rule judges; sparsefs's own
    default is not the paper's setting.
    """
    mat = _best(reproduction, experiment, metric, estimator)
    ours = [m for m in methods if m in mat.columns]
    theirs = [m for m in rivals if m in mat.columns]
    if not ours or not theirs:
        raise ClaimNotRun(f"{list(methods)} or {list(rivals)} were not run")
    a, b = mat[ours].max(axis=1), mat[theirs].max(axis=1)
    wins = (a.round(9) > b.round(9))
    parts = [f"{ds} {a[ds]:.3f} vs {mat.loc[ds, theirs].idxmax()} {b[ds]:.3f}" for ds in mat.index]
    why = (f"rule: UFCM (best of its {len(ours)} settings of the paper's grid) above the best "
           f"baseline on ≥ 75% of the data sets; {int(wins.sum())} of {len(wins)}.")
    if default is not None and default in mat.columns:
        d_wins = int((mat[default].round(9) > b.round(9)).sum())
        parts.append(f"{default}: above the best baseline on {d_wins} of {len(wins)}")
        why += (f" The shipped default (`{default}`) is reported but left out of the rule: the "
                "paper tunes UFCM over a grid, and sparsefs's default (issue #16) is not one of "
                "the paper's settings.")
    return ClaimVerdict(fraction_verdict(int(wins.sum()), len(wins), all_for_reproduced=False),
                        "; ".join(parts), why)


_PARAMS = (("alpha", 1.0), ("beta", 1.0), ("p", 1.0))


def convergence(datasets: Sequence[str] = ("lung_discrete", "Yale"),
                params: tuple[tuple[str, float], ...] = _PARAMS) -> list[dict[str, Any]]:
    """One UFCM fit per data set (z-scored, c = number of classes, ``random_state=0``): the
    objective per iteration of the kept run, whether it is monotone, and the iterations.
    Data sets not available here are left out. Cached (the hook and the claim check share
    the fits of one render)."""
    return _convergence(tuple(datasets), tuple(params))


@functools.lru_cache(maxsize=8)
def _convergence(datasets: tuple[str, ...], params: tuple[tuple[str, float], ...]
                 ) -> list[dict[str, Any]]:
    from sklearn.preprocessing import StandardScaler

    from sparsefs.harness._data import MissingDataError, load_dataset
    from sparsefs.harness._spec import DataSpec
    from sparsefs.selection import UFCM

    out = []
    for name in datasets:
        try:
            data = load_dataset(DataSpec(name=name))
        except (MissingDataError, FileNotFoundError):
            continue
        X = StandardScaler().fit_transform(data.X)
        c = len(np.unique(data.y))
        model = UFCM(n_clusters=c, random_state=0, **dict(params)).fit(X)
        obj = np.asarray(model.objective_, dtype=float)
        steps = np.diff(obj)
        out.append({"dataset": name, "objective": obj, "n_iter": int(model.n_iter_),
                    "converged": bool(model.converged_),
                    "monotone": bool((steps >= -1e-9 * np.abs(obj[1:]).max()).all())
                    if steps.size else True})
    return out


def extra_sections(reproduction: Any, outdir: Any) -> str:
    """The report hook: UFCM's convergence (objective per iteration, a table and a figure)."""
    from pathlib import Path

    rows = convergence(_datasets(reproduction))
    lines = ["## UFCM: convergence of the alternating optimisation (ours)", ""]
    if not rows:
        return "\n".join([*lines, "Not run: none of its data sets is available here."])
    lines += ["One fit per data set, `UFCM(alpha=1, beta=1, p=1, random_state=0)` on the "
              "z-scored data, c = number of classes: the objective (maximised) of the kept run "
              "at each iteration.", "",
              "| data set | iterations | converged | monotone | first | last |",
              "|---|---:|---|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['n_iter']} | {r['converged']} | {r['monotone']} | "
                     f"{r['objective'][0]:.6g} | {r['objective'][-1]:.6g} |")
    try:
        from sparsefs.plotting import new_figure, save_figure

        fig, axes = new_figure(ncols=len(rows), width=3.4 * len(rows))
        for ax, r in zip(axes[0], rows):
            ax.plot(np.arange(r["objective"].size), r["objective"], marker="o")
            ax.set_xlabel("iteration")
            ax.set_ylabel("objective")
            ax.set_title(r["dataset"])
        path = save_figure(fig, Path(outdir) / "convergence.png", dpi=90)
        link = f"{Path(outdir).name}/{path.name}"
        lines += ["", f"![UFCM convergence]({link})", "", "*UFCM convergence: objective per "
                  "iteration (kept run).*"]
    except ImportError:
        pass
    return "\n".join(lines) + "\n"


def _datasets(reproduction: Any) -> tuple[str, ...]:
    return ("lung_discrete",) if reproduction.quick else ("lung_discrete", "Yale")


def converges(reproduction: Any, *, max_iter: int = 30) -> ClaimVerdict:
    """The claim check: UFCM's objective is monotone and converges within ``max_iter``
    iterations on every data set of :func:`convergence`."""
    rows = convergence(_datasets(reproduction))
    if not rows:
        raise ClaimNotRun("none of the convergence data sets (lung_discrete, Yale) is here")
    ok = sum(r["monotone"] and r["converged"] and r["n_iter"] <= max_iter for r in rows)
    return ClaimVerdict(
        fraction_verdict(ok, len(rows)),
        "; ".join(f"{r['dataset']}: {'monotone' if r['monotone'] else 'NOT monotone'}, "
                  f"{'converged' if r['converged'] else 'not converged'} in {r['n_iter']} "
                  "iterations" for r in rows),
        f"rule: monotone and converged within {max_iter} iterations on every data set (the "
        "convergence section at the end; the test suite checks monotonicity too: "
        "test_objective_non_decreasing_* in sparsefs/selection/tests/test_ufcm.py); the "
        "paper's curves are not available to compare the speed.")
