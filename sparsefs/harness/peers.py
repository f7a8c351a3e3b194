"""Peers of the standing benchmarks (``docs/standing.md``), run in the same process.

Each peer is wrapped as a selector with the sparsefs contract (``scores_`` higher = better,
``ranking_``, ``support_``), so that the benchmarks treat it exactly as a sparsefs method.
The wrapped packages are imported inside ``fit`` only: none is a sparsefs dependency
(``pip install "sparsefs[standing]"`` installs them). mrmr_selection is GPL-3: it is imported
and timed here as a peer, never vendored or required.

Peers that rank genes **per group** (scanpy's ``rank_genes_groups``, COSG) keep the per-group
orders in ``group_orders_`` (the marker-gene benchmark reads them) and get one global ranking
by the round-robin union of the groups' lists: every group's best gene first (groups in
order), then every group's second, ... (a gene counts at its best position). For two groups
this interleaves the genes up in one group with those up in the other.

* :class:`FClassif`, :class:`MutualInfoClassif`, :class:`Chi2`, :class:`VarianceFilter`,
  :class:`RandomForestImportance` (scikit-learn);
* :class:`ScanpyRankGenes` (``t-test``, ``wilcoxon``, ``logreg``), :class:`ScanpyHVG`
  (``highly_variable_genes``);
* :class:`SkrebateReliefF` (scikit-rebate), :class:`MRMRClassif` (mrmr_selection),
  :class:`COSGMarkers` (COSG);
* :class:`RandomRanking`: a seeded random ranking, the floor of every benchmark.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from sparsefs.base import BaseSelector
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = [
    "COSGMarkers",
    "Chi2",
    "FClassif",
    "MRMRClassif",
    "MutualInfoClassif",
    "RandomForestImportance",
    "RandomRanking",
    "ScanpyHVG",
    "ScanpyRankGenes",
    "SkrebateReliefF",
    "VarianceFilter",
    "round_robin_scores",
]

#: n_features_to_select=None: this many features (capped at p); the peers have no own rule
_DEFAULT_K = 50


def round_robin_scores(orders: list[np.ndarray], n_features: int) -> np.ndarray:
    """Global scores from per-group rankings: the round-robin union of the groups' lists.

    A feature's position is ``r * G + g`` for its best (smallest) rank ``r`` over the ``G``
    groups, ``g`` the first group where it has that rank; scores are minus the positions
    (features in no list score ``-inf``).

    Parameters
    ----------
    orders : list of ndarray of int
        Per group, feature indices best first (possibly truncated).
    n_features : int

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> round_robin_scores([np.array([2, 0, 1]), np.array([1, 2, 0])], 3).tolist()
    [-2.0, -1.0, -0.0]
    """
    G = len(orders)
    pos = np.full(n_features, np.inf)
    for g, order in enumerate(orders):
        order = np.asarray(order, dtype=np.intp)
        cand = np.arange(order.shape[0], dtype=float) * G + g
        pos[order] = np.minimum(pos[order], cand)
    return -pos


def _dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


class _Peer(BaseSelector):
    """A peer: ``n_features_to_select`` (default 50) plus what ``_scores`` needs."""

    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _fit(self, X, y_idx):
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(_DEFAULT_K, X.shape[1])
        scores = np.asarray(self._scores(X, y_idx), dtype=np.float64)
        self._set_selection(np.where(np.isnan(scores), -np.inf, scores))

    def _scores(self, X, y_idx):  # pragma: no cover - abstract
        raise NotImplementedError


class FClassif(_Peer):
    """scikit-learn's ``f_classif`` (one-way ANOVA F); NaN (constant features) ranks last.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.harness.peers import FClassif
    >>> X = np.array([[0., 1.], [0.1, 3.], [1., 2.], [1.1, 0.]])
    >>> FClassif(1).fit(X, [0, 0, 1, 1]).ranking_.tolist()
    [1, 2]
    """

    def _scores(self, X, y_idx):
        from sklearn.feature_selection import f_classif

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant features: NaN, ranked last
            F, _ = f_classif(X, y_idx)
        return F


class Chi2(_Peer):
    """scikit-learn's ``chi2`` on non-negative data: each feature shifted by its minimum over
    the training rows (``x - min x``; stored counts and non-negative data are unchanged)."""

    def _scores(self, X, y_idx):
        from sklearn.feature_selection import chi2

        Xd = _dense(X).astype(np.float64)
        Xd = Xd - Xd.min(axis=0, keepdims=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # all-zero features: NaN, ranked last
            stat, _ = chi2(Xd, y_idx)
        return stat


class MutualInfoClassif(_Peer):
    """scikit-learn's ``mutual_info_classif`` (KSG estimator, 3 neighbours).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    n_neighbors : int, default=3
    random_state : int or None, default=None
        The estimator's small noise added to continuous features.
    """

    _parameter_constraints: ClassVar[dict] = {
        **_Peer._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=None, *, n_neighbors=3, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    def _scores(self, X, y_idx):
        from sklearn.feature_selection import mutual_info_classif

        return mutual_info_classif(_dense(X), y_idx, n_neighbors=self.n_neighbors,
                                   random_state=self.random_state)


class VarianceFilter(_Peer):
    """The variance of each feature (scikit-learn's ``VarianceThreshold.variances_``); labels
    are not used. Fed the data as stored: on z-scored data every variance is 1."""

    _supervised = False

    def _scores(self, X, y_idx):
        from sklearn.feature_selection import VarianceThreshold

        return VarianceThreshold().fit(X).variances_


class RandomForestImportance(_Peer):
    """Impurity importance of a random forest (scikit-learn ``RandomForestClassifier``).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    n_estimators : int, default=500
    random_state : int or None, default=None
    """

    _accept_sparse = False
    _parameter_constraints: ClassVar[dict] = {
        **_Peer._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=None, *, n_estimators=500, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_estimators = n_estimators
        self.random_state = random_state

    def _scores(self, X, y_idx):
        from sklearn.ensemble import RandomForestClassifier

        rf = RandomForestClassifier(n_estimators=self.n_estimators, n_jobs=1,
                                    random_state=self.random_state)
        return rf.fit(X, y_idx).feature_importances_


def _anndata(X, y_idx, n_groups: int):
    import anndata
    import pandas as pd

    groups = [f"g{c}" for c in range(n_groups)]
    obs = pd.DataFrame({"group": pd.Categorical([groups[c] for c in y_idx],
                                                categories=groups)})
    obs.index = obs.index.astype(str)
    Xa = X.astype(np.float32) if not sp.issparse(X) else sp.csr_matrix(X, dtype=np.float32)
    adata = anndata.AnnData(X=Xa, obs=obs)
    adata.var_names = [f"f{j}" for j in range(X.shape[1])]
    return adata, groups


def _orders_from_names(names_rec, groups: list[str], n_features: int) -> list[np.ndarray]:
    out = []
    for g in groups:
        names = np.asarray(names_rec[g]).astype(str)
        idx = np.fromiter((int(s[1:]) for s in names), dtype=np.intp, count=names.shape[0])
        out.append(idx[:n_features])
    return out


class ScanpyRankGenes(_Peer):
    """scanpy's ``rank_genes_groups`` (each group against the rest): ``t-test`` (Welch),
    ``wilcoxon`` or ``logreg``; global ranking by the round-robin union of the groups' lists.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    method : {"t-test", "wilcoxon", "logreg", "t-test_overestim_var"}, default="t-test"

    Attributes
    ----------
    group_orders_ : list of ndarray
        Per class (in label order), every feature best first by scanpy's score; empty for a
        class with a single sample, which scanpy cannot test (its cells stay in the "rest"
        of the other groups' tests, as a user would run it on such data).
    """

    _parameter_constraints: ClassVar[dict] = {
        **_Peer._parameter_constraints,
        "method": [StrOptions({"t-test", "wilcoxon", "logreg", "t-test_overestim_var"})],
    }

    def __init__(self, n_features_to_select=None, *, method="t-test"):
        self.n_features_to_select = n_features_to_select
        self.method = method

    def _scores(self, X, y_idx):
        import scanpy as sc

        n_groups = int(y_idx.max()) + 1
        adata, groups = _anndata(X, y_idx, n_groups)
        p = X.shape[1]
        kw = {"max_iter": 1000} if self.method == "logreg" else {}
        testable = [g for g, c in zip(groups, np.bincount(y_idx, minlength=n_groups)) if c >= 2]
        if not testable:
            raise ValueError("scanpy's rank_genes_groups needs a group with two samples or "
                             "more; every group here has one.")
        if len(testable) < n_groups:
            kw["groups"] = testable
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sc.tl.rank_genes_groups(adata, "group", method=self.method, n_genes=p,
                                    use_raw=False, **kw)
        res = adata.uns["rank_genes_groups"]
        present = list(res["names"].dtype.names)
        if self.method == "logreg" and len(testable) == 2 and len(present) == 1:
            # binary logreg: one coefficient vector, for the second class (scikit-learn's
            # binary coef_), listed under the first group's name; the first class's list is
            # its reverse
            order = _orders_from_names(res["names"], present, p)[0]
            scored = {testable[0]: order[::-1], testable[1]: order}
        else:
            scored = dict(zip(testable, _orders_from_names(res["names"], testable, p)))
        orders = [scored.get(g, np.zeros(0, dtype=np.intp)) for g in groups]
        self.group_orders_ = orders
        return round_robin_scores(orders, p)


class COSGMarkers(_Peer):
    """COSG (Dai et al., Brief. Bioinform. 2022): cosine similarity of each gene with each
    group's indicator, penalised by expression elsewhere (``mu``); global ranking by the
    round-robin union of the groups' lists.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    mu : float, default=1.0
    remove_lowly_expressed : bool, default=False
        COSG's filter of genes "expressed" (> 0) in under 10 % of a group; meaningful on
        counts, not on z-scored data (off by default here; the marker benchmark turns it on).

    Attributes
    ----------
    group_orders_ : list of ndarray
    """

    _parameter_constraints: ClassVar[dict] = {
        **_Peer._parameter_constraints,
        "mu": [Interval(Real, 0, None, closed="left")],
        "remove_lowly_expressed": ["boolean"],
    }

    def __init__(self, n_features_to_select=None, *, mu=1.0, remove_lowly_expressed=False):
        self.n_features_to_select = n_features_to_select
        self.mu = mu
        self.remove_lowly_expressed = remove_lowly_expressed

    def _scores(self, X, y_idx):
        import cosg

        n_groups = int(y_idx.max()) + 1
        adata, groups = _anndata(X, y_idx, n_groups)
        p = X.shape[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cosg.cosg(adata, groupby="group", mu=self.mu, n_genes_user=p, key_added="cosg",
                      remove_lowly_expressed=self.remove_lowly_expressed, verbosity=0)
        names = adata.uns["cosg"]["names"]
        orders = []
        for g in groups:
            col = np.asarray(names[g]).astype(str)
            keep = np.array([s.startswith("f") for s in col])  # filtered genes are blank
            idx = np.array([int(s[1:]) for s in col[keep]], dtype=np.intp)
            orders.append(idx)
        self.group_orders_ = orders
        return round_robin_scores(orders, p)


class ScanpyHVG(_Peer):
    """scanpy's ``highly_variable_genes`` (``flavor="seurat"``: normalised dispersion within
    bins of mean expression); labels are not used.

    scanpy's seurat flavour expects log-normalised expression (it takes ``expm1``).
    ``log_transform="auto"`` passes data that already look log-scale (no negative value and
    a maximum of at most 20, as log1p-normalised counts) as they are, and feeds anything else
    (intensities, grey levels, values with negatives) as ``log1p(x - min(X))``, the whole
    matrix shifted to start at 0; ``True`` / ``False`` force either.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    log_transform : {"auto"} or bool, default="auto"
    n_bins : int, default=20
    """

    _supervised = False
    _parameter_constraints: ClassVar[dict] = {
        **_Peer._parameter_constraints,
        "log_transform": ["boolean", StrOptions({"auto"})],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_features_to_select=None, *, log_transform="auto", n_bins=20):
        self.n_features_to_select = n_features_to_select
        self.log_transform = log_transform
        self.n_bins = n_bins

    def _scores(self, X, y_idx):
        import anndata
        import scanpy as sc

        Xd = _dense(X).astype(np.float64)
        lo, hi = float(Xd.min()), float(Xd.max())
        transform = (not (lo >= 0.0 and hi <= 20.0) if self.log_transform == "auto"
                     else bool(self.log_transform))
        self.log_transformed_ = transform
        if transform:
            Xd = np.log1p(Xd - lo)
        adata = anndata.AnnData(X=Xd.astype(np.float32))
        adata.var_names = [f"f{j}" for j in range(Xd.shape[1])]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sc.pp.highly_variable_genes(adata, flavor="seurat", n_bins=self.n_bins,
                                        n_top_genes=min(Xd.shape[1], 50))
        disp = np.asarray(adata.var["dispersions_norm"], dtype=np.float64)
        return np.where(np.isfinite(disp), disp, -np.inf)


class SkrebateReliefF(_Peer):
    """scikit-rebate's ReliefF (Urbanowicz et al., J. Biomed. Inform. 2018).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    n_neighbors : int, default=10
        Capped at the smallest class size minus one.
    """

    _accept_sparse = False
    _parameter_constraints: ClassVar[dict] = {
        **_Peer._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_features_to_select=None, *, n_neighbors=10):
        self.n_features_to_select = n_features_to_select
        self.n_neighbors = n_neighbors

    def _scores(self, X, y_idx):
        from skrebate import ReliefF

        k = int(max(1, min(self.n_neighbors, np.bincount(y_idx).min() - 1)))
        est = ReliefF(n_features_to_select=min(self.n_features_to_select_, X.shape[1]),
                      n_neighbors=k, n_jobs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(np.asarray(X, dtype=np.float64), y_idx)
        return est.feature_importances_


class MRMRClassif(_Peer):
    """mrmr_selection's ``mrmr_classif`` (F-test relevance, Pearson-correlation redundancy,
    the quotient criterion; Ding & Peng 2005 as implemented by S. Mazzanti). GPL-3: imported
    as a peer only. The first ``n_features_to_select`` features in the order chosen rank
    first; the others tie below them.
    """

    _accept_sparse = False

    def _scores(self, X, y_idx):
        import pandas as pd
        from mrmr import mrmr_classif

        k = int(min(self.n_features_to_select_, X.shape[1]))
        frame = pd.DataFrame(np.asarray(X, dtype=np.float64))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            chosen = mrmr_classif(X=frame, y=pd.Series(y_idx), K=k, show_progress=False,
                                  n_jobs=1)
        scores = np.full(X.shape[1], -1.0)
        scores[np.asarray(chosen, dtype=np.intp)] = np.arange(k, 0, -1, dtype=float)
        return scores


class RandomRanking(_Peer):
    """A uniformly random ranking (seeded): the floor every method should beat.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    random_state : int or None, default=None
    """

    _supervised = False
    _parameter_constraints: ClassVar[dict] = {
        **_Peer._parameter_constraints,
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=None, *, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def _scores(self, X, y_idx):
        from sklearn.utils import check_random_state

        return check_random_state(self.random_state).permutation(X.shape[1]).astype(float)
