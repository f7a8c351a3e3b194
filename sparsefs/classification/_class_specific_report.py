"""Report hook of ``sparsefs reproduce smba_csfs``: the leak's effect, and the paper's claim.

``configs/smba_csfs.toml`` runs each table twice (leak-free and the paper's protocol, SMOTE
before the split). :func:`extra_sections` puts the two side by side for every data set and
method (best fold-mean accuracy over m <= 20; our analysis, not the paper's) and tabulates
SMBA-CSFS against the best TFS method under both protocols (the numbers behind the headline
claim, whose verdict :mod:`sparsefs.benchmark.hooks.smba_csfs` computes). It reads the results
tables only (the estimator packages never import the harness, plotting or matplotlib).
"""

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["best_accuracy", "extra_sections"]

_PAIRS = (("tfs_leak_free", "tfs_paper", "svm"), ("csfs_leak_free", "csfs_paper", "self"))


_TIE_DECIMALS = 9
"""The harness's tie rule (``sparsefs.benchmark.TIE_DECIMALS``; this module may not import the
harness, and ``sparsefs/benchmark/tests/test_claims.py`` checks that the two agree)."""


def best_accuracy(table: Any, estimator: str, k_max: int = 20) -> dict[tuple[str, str], tuple]:
    """``{(dataset, method): (best fold-mean accuracy, its m)}`` over m <= ``k_max``.

    The tie rule of :func:`sparsefs.benchmark.best_over_k`: the fold means are rounded to
    ``_TIE_DECIMALS`` decimals and ties go to the smallest m, so these cells are the generic
    tables' cells. The all-features baseline (one k = the number of features) is kept whatever
    its k.
    """
    t = table[(table["estimator"] == estimator) & (table["metric"] == "accuracy")]
    out: dict[tuple[str, str], tuple] = {}
    for (dataset, method), g in t.groupby(["dataset", "method"], sort=False):
        means = g.groupby("k")["value"].mean().sort_index()
        if means.shape[0] > 1:
            means = means[means.index <= k_max]
        means = means.dropna()
        if means.empty:
            continue
        k = int(means.round(_TIE_DECIMALS).idxmax())
        out[(dataset, method)] = (float(means.loc[k]), k)
    return out


def _fmt(cell: tuple | None) -> str:
    if cell is None:
        return "–"
    return f"{100 * cell[0]:.2f} ({cell[1]})"


def extra_sections(reproduction: Any, outdir: Path) -> str:
    """Markdown: leak-free vs paper protocol per data set and method, and the claim check."""
    by_name = {r.meta.get("experiment"): r for r in reproduction.results}
    lines = ["## The leak: leak-free against the paper's protocol (our analysis, not the paper's)",
             "",
             "Best fold-mean accuracy (%) over m <= 20 (m in parentheses) of the same methods, "
             "same folds and seeds, with SMOTE and the z-score fitted on each training fold "
             "(leak-free) or on all rows before the split (the paper's protocol). "
             "Difference = paper protocol - leak-free, in points.", ""]
    rows_found = False
    cells: dict[str, dict[tuple[str, str], tuple]] = {}
    for free, leaky, est in _PAIRS:
        if free not in by_name or leaky not in by_name:
            continue
        a = best_accuracy(by_name[free].table, est)
        b = best_accuracy(by_name[leaky].table, est)
        cells[free], cells[leaky] = a, b
        lines += [f"### {free} / {leaky} (estimator `{est}`)", "",
                  "| data set | method | leak-free | paper protocol | difference |",
                  "|---|---|---|---|---|"]
        for key in sorted(a.keys() | b.keys()):
            x, y = a.get(key), b.get(key)
            diff = "–" if x is None or y is None else f"{100 * (y[0] - x[0]):+.2f}"
            lines.append(f"| {key[0]} | {key[1]} | {_fmt(x)} | {_fmt(y)} | {diff} |")
            rows_found = True
        lines.append("")
    if not rows_found:
        return ""
    # the qualitative claim: SMBA-CSFS against the best TFS method, per data set and protocol
    lines += ["## SMBA-CSFS against the best TFS method (our numbers behind the headline claim)",
              "",
              "The paper: *SMBA-CSFS outperforms the other methods on the data sets with a high "
              "number of classes (LUNG_C, LUNG_D, CARCINOM, DLBLC and GCM)*; its verdict is in "
              "the Claims table. Below, ours: SMBA-CSFS (the ensemble's own predictions) against "
              "the best TFS selector + SVM (SMBA and the baselines, not all features), best over "
              "m <= 20.", "",
              "| protocol | data set | classes | SMBA-CSFS | best TFS | SMBA-CSFS wins |",
              "|---|---|---|---|---|---|"]
    n_classes = {}
    for r in reproduction.results:
        for d in r.meta.get("datasets", []):
            n_classes[d["dataset"]] = d["n_classes"]
    for proto, (tfs_name, csfs_name) in (("leak-free", ("tfs_leak_free", "csfs_leak_free")),
                                          ("paper", ("tfs_paper", "csfs_paper"))):
        tfs, csfs = cells.get(tfs_name, {}), cells.get(csfs_name, {})
        for dataset in sorted({d for d, _ in csfs}):
            ours = csfs.get((dataset, "SMBA-CSFS"))
            rivals = [(v[0], m) for (d, m), v in tfs.items()
                      if d == dataset and not m.startswith("BSL")]
            if ours is None or not rivals:
                continue
            best_val, best_m = max(rivals)
            wins = "yes" if ours[0] > best_val else ("tie" if np.isclose(ours[0], best_val)
                                                     else "no")
            lines.append(f"| {proto} | {dataset} | {n_classes.get(dataset, '?')} | "
                         f"{_fmt(ours)} | {100 * best_val:.2f} ({best_m}) | {wins} |")
    return "\n".join(lines) + "\n"
