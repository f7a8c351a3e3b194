"""Choosing the sparsity of a sparse clusterer by the gap statistic over permuted data.

Chang, Wang, Li & Xu (2018, section 3) choose the l0 level s, and Witten & Tibshirani (2010,
section 4.1; ``sparcl``'s permutation tuner) the l1 bound, by the same recipe (spec 3.5, 3.6):

1. for every grid value, fit on X and record :math:`O = \\sum_j w_j a_j(C)` at convergence;
2. do the same on B copies of X whose columns are permuted independently (no cluster
   structure, same marginals), giving :math:`O^*_b`;
3. :math:`\\mathrm{Gap} = \\log O - \\operatorname{mean}_b \\log O^*_b`; keep the argmax (or the
   smallest value within one sd of it, the one-standard-error rule).

:func:`gap_tuning` runs the recipe for any "fit a path over the grid" function; the result is a
:class:`GapResult`, stored by the estimators as ``gap_``.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from sparsefs._kernels.columns import TINY
from sparsefs._kernels.sparse_kmeans import gap_statistic, permute_columns, select_gap
from sparsefs.utils._progress import fit_progress

__all__ = ["GapResult", "gap_tuning"]



@dataclass(frozen=True)
class GapResult:
    """The gap curve of one tuning run.

    Attributes
    ----------
    grid : ndarray of shape (n_grid,)
        The tuning values (the l0 level s, or the l1 bound), increasing.
    log_objective : ndarray of shape (n_grid,)
        :math:`\\log O(s)` on the data.
    ref_log_objectives : ndarray of shape (n_permutations, n_grid)
        :math:`\\log O^*_b(s)` on each column-permuted copy.
    gap : ndarray of shape (n_grid,)
        :math:`\\log O(s) - \\operatorname{mean}_b \\log O^*_b(s)`.
    sd : ndarray of shape (n_grid,)
        :math:`\\operatorname{sd}_b \\log O^*_b(s)` (ddof=1).
    n_nonzero : ndarray of shape (n_grid,)
        Number of nonzero weights of the fit on the data at each grid value.
    best_index : int
        Index of the chosen grid value.
    rule : {"max", "1se"}
        How it was chosen.
    """

    grid: np.ndarray
    log_objective: np.ndarray
    ref_log_objectives: np.ndarray
    gap: np.ndarray
    sd: np.ndarray
    n_nonzero: np.ndarray
    best_index: int
    rule: str

    @property
    def best(self) -> float:
        """The chosen grid value."""
        return self.grid[self.best_index].item()

    def to_frame(self):
        """The curve as a pandas DataFrame, one row per grid value."""
        import pandas as pd

        return pd.DataFrame(
            {
                "value": self.grid,
                "gap": self.gap,
                "sd": self.sd,
                "log_objective": self.log_objective,
                "mean_ref_log_objective": self.ref_log_objectives.mean(axis=0),
                "n_nonzero": self.n_nonzero,
                "chosen": np.arange(self.grid.shape[0]) == self.best_index,
            }
        )


def gap_tuning(
    X: np.ndarray,
    grid: Sequence[float],
    fit_path: Callable[[np.ndarray, int], Sequence],
    *,
    data_seed: int,
    permutation_seeds: Sequence[tuple[int, int]],
    rule: str = "max",
    progress: bool = False,
    desc: str = "gap statistic",
) -> tuple[GapResult, list]:
    """Run the gap recipe.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    grid : sequence of float
        Increasing tuning values.
    fit_path : callable
        ``fit_path(X, seed)`` fits every grid value on ``X`` and returns one result per value,
        each with attributes ``objective`` (float, the converged :math:`O`) and ``weights``.
    data_seed : int
        Seed of the fit on X.
    permutation_seeds : sequence of (int, int)
        One ``(permutation seed, fit seed)`` pair per reference copy (B of them).
    rule : {"max", "1se"}, default="max"
    progress : bool, default=False
        Show a tqdm bar on stderr, one step per path (the data, then each reference copy).
    desc : str, default="gap statistic"
        The bar's label.

    Returns
    -------
    result : GapResult
    fits : list
        The path on X (one fit per grid value), so the chosen fit can be reused.
    """
    grid = np.asarray(grid)
    with fit_progress(1 + len(permutation_seeds), desc, progress) as bar:
        fits = list(fit_path(X, data_seed))
        bar.update(1)
        log_obj = np.log(np.maximum([f.objective for f in fits], TINY))
        ref = np.empty((len(permutation_seeds), grid.shape[0]))
        for b, (perm_seed, fit_seed) in enumerate(permutation_seeds):
            ref_fits = fit_path(permute_columns(X, perm_seed), fit_seed)
            ref[b] = np.log(np.maximum([f.objective for f in ref_fits], TINY))
            bar.update(1)
    gap, sd = gap_statistic(log_obj, ref)
    best = select_gap(gap, sd, rule)
    result = GapResult(
        grid=grid,
        log_objective=log_obj,
        ref_log_objectives=ref,
        gap=gap,
        sd=sd,
        n_nonzero=np.array([int(np.count_nonzero(f.weights)) for f in fits]),
        best_index=best,
        rule=rule,
    )
    return result, fits
