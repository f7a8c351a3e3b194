"""``select --fdr Q`` / ``--fwer A``: error-controlled selection around the chosen method.

The method becomes the estimator of an :class:`~sparsefs.selection.ErrorControlSelector`:
its own analytic p-values when it has them (``fisher_score``: the F test), else label
permutations of its scores (``--permutations B``). ``-m knockoffs`` takes ``--fdr`` as the
knockoff filter's own level, ``-m error_control`` as its ``level``. The output table gets
``pvalue`` and ``qvalue`` columns (also without these flags, for any method that computes
p-values, the q-values then being Benjamini-Hochberg's) and, for knockoffs, the
``knockoff_statistic`` W.
"""

from __future__ import annotations

import argparse
from typing import Any

from sparsefs.cli._checks import error_flags_refusal, error_rule, parse_open_unit

__all__ = ["add_error_control_arguments", "error_control_output", "wrap_for_error_control"]

DEFAULT_PERMUTATIONS = 1000


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--permutations {text!r}: give a count >= 1")
    return value


def add_error_control_arguments(group: Any) -> None:
    """The error-control options of ``select`` (in its "selection rule" group)."""
    group.add_argument(
        "--fdr", type=parse_open_unit("level", "--fdr"), default=None, metavar="Q",
        help="keep the features passing Benjamini-Hochberg at false discovery rate Q on the "
        "method's p-values (its own test, else label permutations); with -m knockoffs: the "
        "knockoff filter's FDR. Adds pvalue and qvalue columns")
    group.add_argument(
        "--fwer", type=parse_open_unit("level", "--fwer"), default=None, metavar="A",
        help="keep the features passing Holm's procedure at family-wise error rate A")
    group.add_argument(
        "--correction", choices=("bh", "by", "holm", "bonferroni", "maxt"), default=None,
        help="the procedure: bh (default for --fdr) or by (any dependence) with --fdr; holm "
        "(default for --fwer), bonferroni or maxt (Westfall-Young, from permutations) with "
        "--fwer")
    group.add_argument(
        "--permutations", type=_count, default=None, metavar="B",
        help=f"label permutations when the method has no analytic p-values (default "
        f"{DEFAULT_PERMUTATIONS}; the smallest p-value is 1/(B+1))")


def _procedure(args: argparse.Namespace) -> tuple[str, float] | None:
    refusal = error_flags_refusal(args)
    if refusal is not None:
        raise ValueError(refusal)
    return error_rule(args)


def wrap_for_error_control(est: Any, args: argparse.Namespace) -> Any:
    """``est`` inside an ErrorControlSelector when ``--fdr``/``--fwer`` is given (or those
    levels set on ``-m knockoffs`` / ``-m error_control``), else ``est``."""
    rule = _procedure(args)
    if rule is None:
        return est
    method, level = rule
    from sparsefs.selection import ErrorControlSelector, KnockoffSelector, StabilitySelector

    if isinstance(est, StabilitySelector):
        raise ValueError("--fdr/--fwer and --stability are two selection rules; give one")
    if isinstance(est, KnockoffSelector):
        if args.fwer is not None or getattr(args, "correction", None) is not None:
            raise ValueError("-m knockoffs controls the FDR only: use --fdr Q")
        return est.set_params(fdr=level, n_features_to_select=None)
    if isinstance(est, ErrorControlSelector):
        return est.set_params(method=method, level=level, n_features_to_select=None)
    B = getattr(args, "permutations", None)
    return ErrorControlSelector(est, method=method, level=level,
                                n_permutations=B or DEFAULT_PERMUTATIONS,
                                random_state=getattr(args, "seed", 0))


def error_control_output(est: Any, frame: Any) -> tuple[Any, dict[str, Any]]:
    """Complete the ``pvalue`` / ``qvalue`` columns of the output table of a fitted ``est``
    (a p-value that does not apply counts as 1; q-values by Benjamini-Hochberg when the
    estimator has none of its own) and add ``knockoff_statistic``; the ``error_control`` entry
    of the run's metadata (empty when no guarantee was asked for)."""
    import numpy as np

    from sparsefs._kernels.multiple_testing import adjust_pvalues
    from sparsefs.selection import ErrorControlSelector, KnockoffSelector

    index = frame["index"].to_numpy()
    meta: dict[str, Any] = {}
    if "pvalue" in frame.columns:  # declared p-values (scores_frame(..., outputs=True))
        p = np.where(np.isnan(frame["pvalue"]), 1.0, frame["pvalue"].to_numpy())
        q = frame["qvalue"].to_numpy() if "qvalue" in frame.columns else adjust_pvalues(p, "bh")
        frame = frame.assign(pvalue=p, qvalue=q)
    if isinstance(est, ErrorControlSelector):
        if est.estimator_scores_ is not None:
            frame = frame.assign(method_score=est.estimator_scores_[index])
        meta = {"rate": est.error_rate_, "level": float(est.level), "procedure": est.method,
                "pvalues": est.pvalue_method_, "n_permutations": int(est.n_permutations_),
                "n_selected": int(est.support_.sum())}
    if isinstance(est, KnockoffSelector):
        frame = frame.assign(knockoff_statistic=est.statistics_[0][index])
        meta = {"rate": "FDR", "level": float(est.fdr), "procedure": "knockoff+"
                if est.offset == 1 else "knockoff", "threshold": float(est.threshold_),
                "n_draws": int(est.n_draws), "n_selected": int(est.support_.sum())}
    return frame, meta
