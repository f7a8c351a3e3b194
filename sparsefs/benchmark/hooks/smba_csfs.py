"""Claim checks of ``sparsefs reproduce smba_csfs`` (``configs/smba_csfs.toml``).

Nardone, Ciaramella & Staiano (PeerJ Comput. Sci. 2019; spec ``smba-csfs.md`` A.11). Each
function reads the stored results and returns a :class:`~sparsefs.benchmark.ClaimVerdict`. Cells
are :func:`~sparsefs.benchmark.best_over_k` over m <= 20 (the paper's table cell, with the one
tie rule of the harness); a tie is not a win.
"""

from __future__ import annotations

from typing import Any

from sparsefs.benchmark._claims import (
    ClaimNotRun,
    ClaimVerdict,
    experiment_results,
    fraction_verdict,
)
from sparsefs.benchmark._summary import TIE_DECIMALS
from sparsefs.benchmark.hooks._common import best_cells

__all__ = ["csfs_against_tfs", "csfs_knn", "csfs_naive_bayes", "csfs_tree", "extra_sections"]

_PROTOCOLS = {"leak-free": ("tfs_leak_free", "csfs_leak_free"),
              "paper": ("tfs_paper", "csfs_paper")}


def csfs_against_tfs(reproduction: Any, *, protocol: str = "paper", wins: bool = True,
                     min_classes: int = 5, max_classes: int | None = None,
                     method: str = "SMBA-CSFS", k_max: int = 20) -> ClaimVerdict:
    """SMBA-CSFS (the ensemble's own predictions) against the best TFS selector + SVM (SMBA and
    the baselines, not all features) on the data sets with ``min_classes``..``max_classes``
    classes: ``wins=True`` asks that it beat the best TFS method on each, ``wins=False`` that it
    lose on each."""
    tfs_name, csfs_name = _PROTOCOLS[protocol]
    tfs_res = experiment_results(reproduction, tfs_name)
    csfs = best_cells(reproduction, csfs_name, "accuracy", "self", k_max)
    tfs = best_cells(reproduction, tfs_name, "accuracy", "svm", k_max)
    n_classes = {d["dataset"]: d["n_classes"] for d in tfs_res.meta.get("datasets", [])}
    sets = [d for d, c in n_classes.items()
            if c >= min_classes and (max_classes is None or c <= max_classes)]
    if not sets:
        raise ClaimNotRun(f"no data set with {min_classes}"
                          + (f"-{max_classes}" if max_classes else "+")
                          + " classes was run here")
    ok, parts = 0, []
    for ds in sets:
        ours = csfs[(csfs["dataset"] == ds) & (csfs["method"] == method)]
        rivals = tfs[(tfs["dataset"] == ds) & ~tfs["method"].str.startswith("BSL")]
        if ours.empty or rivals.empty:
            continue
        a = float(ours["value"].iloc[0])
        best = rivals.loc[rivals["value"].idxmax()]
        a_r, b_r = round(a, TIE_DECIMALS), round(float(best["value"]), TIE_DECIMALS)
        won = a_r > b_r
        ok += int(won == wins)
        parts.append(f"{ds} ({n_classes[ds]} classes): {100 * a:.2f} vs {best['method']} "
                     f"{100 * best['value']:.2f}" + (" (tie)" if a_r == b_r else ""))
    if not parts:
        raise ClaimNotRun(f"{method} or the TFS methods were not run on {sets}")
    return ClaimVerdict(
        fraction_verdict(ok, len(parts), partly_at=0.3),
        f"{protocol} protocol: " + "; ".join(parts),
        f"rule: {method} {'beats' if wins else 'loses to'} the best TFS selector + SVM "
        f"(best accuracy over m ≤ {k_max}) on every such data set; {ok} of {len(parts)} hold.")


# --------------------------------------------------------------------------------------------
# the ensemble with the paper's other classifiers (factories for configs/smba_csfs.toml)
# --------------------------------------------------------------------------------------------


def csfs_naive_bayes():
    """SMBA-CSFS with Gaussian naive Bayes as the per-class classifier (the paper's
    supplement)."""
    from sklearn.naive_bayes import GaussianNB

    from sparsefs.classification import ClassSpecificEnsembleClassifier

    return ClassSpecificEnsembleClassifier(estimator=GaussianNB())


def csfs_knn():
    """SMBA-CSFS with 5-nearest neighbours as the per-class classifier."""
    from sklearn.neighbors import KNeighborsClassifier

    from sparsefs.classification import ClassSpecificEnsembleClassifier

    return ClassSpecificEnsembleClassifier(estimator=KNeighborsClassifier(n_neighbors=5))


def csfs_tree():
    """SMBA-CSFS with a decision tree (``random_state=0``, so that a fit is reproducible) as
    the per-class classifier."""
    from sklearn.tree import DecisionTreeClassifier

    from sparsefs.classification import ClassSpecificEnsembleClassifier

    return ClassSpecificEnsembleClassifier(estimator=DecisionTreeClassifier(random_state=0))


def extra_sections(reproduction: Any, outdir: Any) -> str:
    """The report hook: the leak and headline tables of
    :func:`sparsefs.classification._class_specific_report.extra_sections`."""
    from sparsefs.classification._class_specific_report import extra_sections as tables

    return tables(reproduction, outdir)
