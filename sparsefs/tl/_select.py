"""``sparsefs.tl.select``: any registered method on an AnnData object, scanpy style.

AnnData is duck-typed here (``obs``, ``var``, ``uns``, ``varm``, ``X``, ``layers``, ``raw``):
``import sparsefs`` and this module never import anndata; it is needed only to make the copy
of ``copy=True`` (``adata.copy()``) and to read backed files, both through the object itself.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import inspect
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

import sparsefs._dask  # noqa: F401  (registers the dask side of the array dispatch, lazily)
from sparsefs._kernels.arrays import class_moments, is_lazy, stored_values
from sparsefs.utils._results import declared_outputs, scores_frame

__all__ = ["select", "write_selection"]


def _version() -> str:
    try:
        return importlib.metadata.version("sparsefs")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        from sparsefs import __version__

        return __version__


def _resolve_estimator(method, params: dict[str, Any]):
    """``(estimator, info)`` from a stem / class name / ``"module:Class"``, or an estimator
    instance (cloned; ``params`` set on the clone); ``info`` is the registry row or None."""
    from sparsefs.utils._factory import make_estimator
    from sparsefs.utils._registry import get_method

    if not isinstance(method, str) and not (hasattr(method, "fit")
                                            and hasattr(method, "get_params")):
        raise TypeError(
            f"method must be a registered stem or name (see `sparsefs methods`) or an estimator; "
            f"got {type(method).__name__}."
        )
    est = make_estimator(method, params)
    info = None
    with contextlib.suppress(ValueError):
        info = get_method(type(est).__name__)
    return est, info


def _resolve_use_raw(adata, layer: str | None, use_raw: bool | None) -> bool:
    """scanpy's rule (``rank_genes_groups``): ``use_raw=None`` reads ``adata.raw`` when it
    exists, unless a ``layer`` is asked for."""
    if use_raw is None:
        return layer is None and getattr(adata, "raw", None) is not None
    return bool(use_raw)


def _adata_matrix(adata, layer: str | None, use_raw: bool | None):
    """``(X, feature_names, source)`` where ``source`` says where X came from."""
    if layer is not None and use_raw:
        raise ValueError("pass either layer= or use_raw=True, not both.")
    if use_raw:
        if adata.raw is None:
            raise ValueError("use_raw=True but adata.raw is None.")
        X, names, source = adata.raw.X, adata.raw.var_names, "raw"
    elif layer is not None:
        if layer not in adata.layers:
            raise KeyError(f"layer {layer!r} not in adata.layers ({list(adata.layers)}).")
        X, names, source = adata.layers[layer], adata.var_names, f"layers[{layer!r}]"
    else:
        X, names, source = adata.X, adata.var_names, "X"
    return _in_memory(X), np.asarray(names, dtype=object), source


#: methods whose scores change when each gene is centred and scaled (they compare expression
#: levels: class centres, distances, graphs on the values, counts); the others (the F test,
#: mutual information, ReliefF, the penalised models, which standardise) are invariant to it
#: (tests/test_select.py checks both lists on an example)
LEVEL_METHODS = frozenset({
    "sparse_centers", "sparse_centers_cv", "smba", "laplacian_score", "spec", "mcfs", "ndfs",
    "sparse_naive_bayes",
})


def _has_negative_values(X) -> bool:
    """Whether X holds a value below 0 (log-normalised expression never does); one read of the
    stored values; dask X is not scanned."""
    if is_lazy(X):
        return False
    values = stored_values(X)
    return bool(values.size) and float(values.min()) < 0


def _warn_if_not_levels(X, info, source: str) -> None:
    """Centred / scaled values (``sc.pp.scale``) are not expression levels: say what that
    breaks, naming the method when its scores compare levels."""
    if not _has_negative_values(X):
        return
    stem = info.stem if info is not None else None
    what = (
        f"{stem} compares expression levels (its genes would be those with large scaled "
        "deviations, even unexpressed ones), and "
        if stem in LEVEL_METHODS else ""
    )
    warnings.warn(
        f"sparsefs.tl.select: {source} holds negative values, so it is centred or scaled "
        f"(e.g. sc.pp.scale), not log-normalised expression: {what}the log fold changes and "
        "the per-group order (genes higher in the group first) assume expression levels. Keep "
        "the log-normalised values in adata.raw or a layer and select on them (use_raw=None "
        "reads raw when present, as scanpy's rank_genes_groups does).",
        UserWarning,
        stacklevel=3,
    )


def _in_memory(X):
    """A backed (h5py / anndata sparse dataset) X read into memory, keeping it sparse."""
    if X is None:
        raise ValueError("adata has no X (X is None); pass layer=.")
    if sp.issparse(X) or isinstance(X, np.ndarray):
        return X
    if is_lazy(X):
        return X  # the estimators' dask path (docs/dask.md) or their clear error
    to_memory = getattr(X, "to_memory", None)  # anndata's backed sparse datasets
    if callable(to_memory):
        return to_memory()
    if hasattr(X, "shape") and hasattr(X, "dtype") and type(X).__module__.startswith("h5py"):
        return X[()]
    return np.asarray(X)


def _labels(adata, groupby: str):
    if groupby not in adata.obs.columns:
        raise KeyError(
            f"groupby={groupby!r} is not a column of adata.obs ({list(adata.obs.columns)})."
        )
    col = adata.obs[groupby]
    if hasattr(col, "cat"):
        groups = [str(g) for g in col.cat.categories if (col == g).any()]
    else:
        groups = sorted({str(v) for v in col})
    y = np.asarray(col.astype(str))
    return y, groups


def _class_index(y: np.ndarray, groups: list[str]) -> np.ndarray:
    position = {g: i for i, g in enumerate(groups)}
    return np.fromiter((position[v] for v in y), dtype=np.intp, count=y.shape[0])


def _group_means(X, y_idx: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, means)`` of every group: one pass of class sums (a dask X block by block,
    never loaded whole: out of core at any size)."""
    mom = class_moments(X, y_idx, n_groups, within=False)
    return mom.counts, mom.means


def _rest_means(counts: np.ndarray, means: np.ndarray) -> np.ndarray:
    """The mean of every group's complement ("rest"), ``n_groups x n_features``."""
    total = counts @ means
    n = counts.sum()
    return (total[None, :] - counts[:, None] * means) / np.maximum(n - counts, 1)[:, None]


def logfoldchanges(means: np.ndarray, rest: np.ndarray, base: float | None = None) -> np.ndarray:
    r"""scanpy's ``logfoldchanges`` of ``rank_genes_groups`` from log1p-scale group means.

    :math:`\log_2\big((\mathrm{expm1}(\bar x_g) + 10^{-9}) / (\mathrm{expm1}(\bar x_{rest}) +
    10^{-9})\big)`: ``expm1`` of the *mean* of the log values (as scanpy computes it; not the
    mean of ``expm1``), with ``expm1(x log b)`` when ``adata.uns["log1p"]["base"] = b``.

    Parameters
    ----------
    means, rest : ndarray of shape (n_groups, n_features)
        Group means and the means of the rest, on the log1p scale.
    base : float or None
        The log base of ``sc.pp.log1p`` (``None``: natural log).

    Returns
    -------
    ndarray of shape (n_groups, n_features)
    """
    if base is None:
        expm1 = np.expm1
    else:
        def expm1(x):
            return np.expm1(x * np.log(base))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log2((expm1(means) + 1e-9) / (expm1(rest) + 1e-9))


def _donor_group_pvalues(X, y_idx: np.ndarray, groups: list[str], donors: np.ndarray):
    """Per-group donor-level p-values (``n_groups x n_features``), the group counts and means,
    and the design, from one pass of (donor x group) sums."""
    from sparsefs._kernels.donors import group_vs_rest_pvalues, pseudobulk
    from sparsefs.selection._donors import check_groups, donor_design

    g_idx, names = check_groups(donors, y_idx.shape[0])
    design = donor_design(y_idx, g_idx, len(groups), names.shape[0], "sparsefs.tl.select")
    pb = pseudobulk(X, y_idx, g_idx, len(groups), names.shape[0])
    counts = np.bincount(pb.klass, weights=pb.counts, minlength=len(groups))
    sums = np.zeros((len(groups), pb.means.shape[1]))
    np.add.at(sums, pb.klass, pb.counts[:, None] * pb.means)
    return group_vs_rest_pvalues(pb, design.design), counts, sums / counts[:, None], design


def _rank_genes_groups_struct(
    names, scores, lfc, effects, support, groups, params, pvals=None, own_rankings=None
) -> dict:
    """``adata.uns[key]`` in the layout of scanpy's ``rank_genes_groups``.

    Per group, genes higher in that group (positive log fold change, ``lfc``) come first: the
    selected ones, then the others, each by how much higher they are (``effects``, the group
    mean minus the rest's on the matrix's scale: a difference of log expression); then the
    selected genes that are not higher there, then the rest, by the method's score. A method
    with one ranking per class (``class_rankings_`` of the class-specific selector) orders
    each tier by that class's ranking instead. Ties go to the lower index. scanpy's dot plots
    and ``sc.get.rank_genes_groups_df`` read the result unchanged. ``scores`` are the
    method's scores (the same for every group); ``pvals`` per group (``n_groups x
    n_features``) or NaN (not computed: scanpy's ``pval_cutoff`` then drops every row);
    ``pvals_adj`` their Benjamini-Hochberg adjustment
    within each group, as scanpy's default ``corr_method``.
    """
    from sparsefs._kernels.multiple_testing import adjust_pvalues

    n = names.shape[0]
    if pvals is None:
        pvals = np.full((len(groups), n), np.nan)
    order_cols, score_cols, lfc_cols, p_cols, q_cols = [], [], [], [], []
    for g in range(len(groups)):
        up = lfc[g] > 0
        tier = np.where(up, np.where(support, 0, 1), np.where(support, 2, 3))
        key = np.where(up, -effects[g], -scores) if own_rankings is None else own_rankings[g]
        order = np.lexsort((np.arange(n), key, tier))
        p = np.asarray(pvals[g], dtype=np.float64)
        tested = ~np.isnan(p)
        q = np.full(n, np.nan)
        if tested.any():
            q[tested] = adjust_pvalues(p[tested], "bh")
        order_cols.append(order)
        score_cols.append(scores[order])
        lfc_cols.append(lfc[g][order])
        p_cols.append(p[order])
        q_cols.append(q[order])
    dt_names = [(g, "O") for g in groups]
    dt_float = [(g, "float32") for g in groups]
    return {
        "params": params,
        "names": np.rec.fromarrays([names[o] for o in order_cols], dtype=dt_names),
        "scores": np.rec.fromarrays(score_cols, dtype=dt_float),
        "logfoldchanges": np.rec.fromarrays(lfc_cols, dtype=dt_float),
        "pvals": np.rec.fromarrays(p_cols, dtype=[(g, "float64") for g in groups]),
        "pvals_adj": np.rec.fromarrays(q_cols, dtype=[(g, "float64") for g in groups]),
    }


#: a sparse matrix up to this many entries is densified for a method that needs dense X
#: (``adata.raw`` is usually CSR; 5e7 float32 entries are 200 MB)
DENSIFY_MAX_ENTRIES = 50_000_000


def _dense_if_needed(X, est):
    """Sparse X for a dense-only method: a dense copy when it is small
    (:data:`DENSIFY_MAX_ENTRIES`), else X as it is (the estimator's clear error)."""
    if not sp.issparse(X):
        return X
    from sklearn.utils import get_tags

    if get_tags(est).input_tags.sparse:
        return X
    if X.shape[0] * X.shape[1] <= DENSIFY_MAX_ENTRIES:
        return X.toarray()
    return X


def _accepts_groups(est) -> bool:
    """Whether the estimator's ``fit`` takes ``groups=`` (the trust layer's donor labels)."""
    try:
        return "groups" in inspect.signature(est.fit).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return False


def _obs_column(adata, column: str, what: str) -> np.ndarray:
    if column not in adata.obs.columns:
        raise KeyError(
            f"{what}={column!r} is not a column of adata.obs ({list(adata.obs.columns)})."
        )
    return np.asarray(adata.obs[column].astype(str))


def select(
    adata,
    method,
    *,
    groupby: str | None = None,
    sample_key: str | None = None,
    n_features: int | float | None = None,
    layer: str | None = None,
    use_raw: bool | None = None,
    key_added: str = "sparsefs",
    copy: bool = False,
    random_state: int | None = 0,
    target: str | None = None,
    time: str | None = None,
    event: str | None = None,
    **params: Any,
):
    """Run a sparsefs method on an AnnData object and write its selection back, scanpy style.

    Parameters
    ----------
    adata : anndata.AnnData
        In memory, backed (``backed="r"``: X is read into memory, sparse stays sparse) or with a
        dask X (the estimators that support dask arrays fit out of core; docs/dask.md).
    method : str or estimator
        A registered stem or estimator name (``sparsefs methods``), or an estimator instance
        (cloned).
    groupby : str, optional
        The ``adata.obs`` column with the classes; required for supervised methods. For
        unsupervised methods, if given, it is used only for the per-group view.
    sample_key : str, optional
        The ``adata.obs`` column with the donor / sample of every cell. The per-group
        ``pvals`` are then donor-level: the t test of "this group against the mean of the
        others" in a linear model on pseudobulks, one-way on the donors when each donor
        belongs to one group (nested), donor + group when donors have cells of several groups
        (crossed; ``adata.uns[key]["params"]["design"]`` says which), and
        methods whose ``fit`` takes ``groups=`` (``error_control``, ``stability``) get the
        donors: their p-values, q-values and frequencies are donor-level too. A design with no
        donor-level test (one donor, donors confounded with the groups) is an error. With
        ``target=`` or ``time=`` / ``event=``, ``stability`` resamples halves of the donors for
        any target and ``error_control`` needs the target constant within every donor (a
        donor attribute such as age; docs/outcomes.md, "Donors").
    n_features : int, float or None
        ``n_features_to_select`` (count, fraction, or ``None`` for the method's own rule).
    layer : str, optional
        Use ``adata.layers[layer]`` instead of ``adata.X``.
    use_raw : bool, optional
        Use ``adata.raw.X`` (and ``adata.raw.var_names``). ``None`` (default): ``raw`` when it
        exists and no ``layer`` is given, as scanpy's ``rank_genes_groups`` reads it. A sparse
        matrix is densified for a method that needs dense X when it has at most
        :data:`DENSIFY_MAX_ENTRIES` entries.
    key_added : str, default="sparsefs"
        Prefix of the ``adata.var`` columns and key in ``adata.uns`` / ``adata.varm``.
    copy : bool, default=False
        Work on (and return) a copy; otherwise modify ``adata`` in place and return ``None``.
    random_state : int or None, default=0
        Passed to the estimator when it has a ``random_state``.
    target : str, optional
        An ``adata.obs`` column with a **continuous** target (age, pseudotime, a drug
        response; docs/outcomes.md) instead of the classes of ``groupby``: the method reads it
        as numbers (``target_type="regression"`` where it has that parameter), so integer
        values are not taken as classes. ``groupby`` may still be given for the per-group
        view.
    time, event : str, optional
        Two ``adata.obs`` columns with a **survival** target: the follow-up time and the event
        indicator (1 / True = observed, 0 / False = censored).
    **params
        Estimator parameters.

    Returns
    -------
    anndata.AnnData or None
        The annotated copy when ``copy=True``.

    Warns
    -----
    UserWarning
        When the matrix holds negative values (centred / scaled, e.g. ``sc.pp.scale``): log
        fold changes and the per-group order assume expression levels, and so do the methods
        in :data:`LEVEL_METHODS`.

    Notes
    -----
    Written:

    * ``adata.var[f"{key}_score"]``, ``[f"{key}_rank"]``, ``[f"{key}_selected"]`` (and
      ``_freq`` / ``_qval`` / ``_pval`` when the estimator has ``frequencies_`` / ``qvalues_``
      / ``pvalues_``; with ``sample_key``, only when they are donor-level). With a raw gene
      set that differs from ``var_names``, these columns go to a DataFrame
      ``adata.uns[key]["var"]`` instead.
    * ``adata.uns[key]``: the call (method, parameters, version, seed, groupby, sample_key,
      design, source) under ``"params"``; with ``groupby``, the layout of scanpy's
      ``rank_genes_groups``: ``names`` (per group, the genes higher in the group first: the
      selected ones, then the others, then the rest; see
      :func:`_rank_genes_groups_struct`), ``scores`` (the method's), ``logfoldchanges``
      (scanpy's formula, :func:`logfoldchanges`), ``pvals`` (the estimator's p-values, or
      the donor-level per-group tests with ``sample_key``; NaN when there are none) and
      ``pvals_adj`` (Benjamini-Hochberg within each group, as scanpy), so that
      ``sc.pl.rank_genes_groups_dotplot(adata, key=key)`` and
      ``sc.get.rank_genes_groups_df(adata, group=None, key=key)`` work.
    * ``adata.varm[key]``: per-group results (n_vars x n_groups) — the group-vs-rest mean
      difference, or the estimator's own per-class statistic where it has one
      (``class_centers_ - shared_center_`` of the sparse center classifiers, the per-class
      supports of the class-specific selector, the sparse KOS weights); the column names are
      ``adata.uns[key]["varm_columns"]``.

    Examples
    --------
    >>> import scanpy as sc  # doctest: +SKIP
    >>> import sparsefs.tl  # doctest: +SKIP
    >>> adata = sc.datasets.pbmc68k_reduced()  # doctest: +SKIP
    >>> sparsefs.tl.select(adata, "fisher_score", groupby="bulk_labels")  # doctest: +SKIP
    >>> sc.pl.rank_genes_groups_dotplot(adata, key="sparsefs", n_genes=5)  # doctest: +SKIP
    """
    adata = adata.copy() if copy else adata
    est, info = _resolve_estimator(method, params)
    if n_features is not None:
        est.set_params(n_features_to_select=n_features)
    if random_state is not None and "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    use_raw = _resolve_use_raw(adata, layer, use_raw)
    X, names, source = _adata_matrix(adata, layer, use_raw)
    _warn_if_not_levels(X, info, source)
    outcome = _outcome(adata, est, target, time, event)
    supervised = (info.supervision == "supervised" if info is not None
                  else groupby is not None or outcome is not None)
    y = None if groupby is None else _labels(adata, groupby)[0]
    if outcome is not None:
        y = outcome
    elif supervised and info is not None and "classification" not in info.targets:
        raise ValueError(
            f"{type(est).__name__} takes a continuous or survival target: pass target= (an "
            "adata.obs column of numbers) or time= and event=, not groupby= alone."
        )
    if supervised and y is None:
        raise ValueError(
            f"{type(est).__name__} is supervised: pass groupby= (a column of adata.obs), or "
            "target= / time= and event= for a continuous or survival target."
        )
    donors = None if sample_key is None else _obs_column(adata, sample_key, "sample_key")
    fit_kw = {"groups": donors} if donors is not None and _accepts_groups(est) else {}
    est.fit(_dense_if_needed(X, est), y if supervised else None, **fit_kw)
    write_selection(adata, est, info=info, groupby=groupby, sample_key=sample_key,
                    key_added=key_added, layer=layer, use_raw=use_raw,
                    random_state=random_state, _X=(X, names, source),
                    _target={"target": target, "time": time, "event": event},
                    _donor_fit=bool(fit_kw))
    return adata if copy else None


def _outcome(adata, est, target, time, event):
    """The continuous or survival target named by ``target`` / ``time`` and ``event``."""
    if target is None and time is None and event is None:
        return None
    if target is not None and (time is not None or event is not None):
        raise ValueError("pass target= (continuous) or time= and event= (survival), not both.")
    for name, col in (("target", target), ("time", time), ("event", event)):
        if col is not None and col not in adata.obs.columns:
            raise KeyError(f"{name}={col!r} is not a column of adata.obs "
                           f"({list(adata.obs.columns)}).")
    if target is not None:
        values = adata.obs[target]
        try:
            y = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"target={target!r}: a continuous target must be numeric; for "
                             "classes use groupby=.") from exc
        if "target_type" in est.get_params(deep=False):
            est.set_params(target_type="regression")
        return y
    if time is None or event is None:
        raise ValueError("a survival target needs both time= and event=.")
    from sparsefs.utils._targets import survival_target

    return survival_target(adata.obs[event].to_numpy(), adata.obs[time].to_numpy())


def write_selection(
    adata,
    estimator,
    *,
    info=None,
    groupby: str | None = None,
    sample_key: str | None = None,
    key_added: str = "sparsefs",
    layer: str | None = None,
    use_raw: bool | None = None,
    random_state: int | None = None,
    _X=None,
    _target=None,
    _donor_fit: bool = False,
) -> None:
    """Write a fitted estimator's selection into ``adata`` as :func:`select` does.

    For an estimator fitted elsewhere on ``adata``'s matrix (the command line's
    ``select --write-h5ad``); ``adata.obs[groupby]`` must hold the labels it was fitted on.

    Parameters
    ----------
    adata : anndata.AnnData
    estimator : fitted sparsefs estimator
    info : MethodInfo or None
        The registry entry (found from the estimator's class when omitted).
    groupby, sample_key, key_added, layer, random_state
        As in :func:`select` (``random_state`` is only recorded). With ``sample_key``, the
        estimator's p-values are written only if it was fitted with ``groups=`` (its
        ``design_`` is set); the per-group ``pvals`` are the donor-level tests.
    use_raw : bool or None
        The matrix the estimator was fitted on: ``adata.raw`` when True; ``None`` or False:
        ``adata.X`` (or ``layer``).
    """
    est = estimator
    if info is None:
        from sparsefs.utils._registry import get_method

        with contextlib.suppress(ValueError):
            info = get_method(type(est).__name__)
    X, names, source = _X if _X is not None else _adata_matrix(adata, layer, use_raw)
    y, groups = (None, None) if groupby is None else _labels(adata, groupby)
    donors = None if sample_key is None else _obs_column(adata, sample_key, "sample_key")
    donor_level = _donor_fit or getattr(est, "design_", None) is not None
    key = key_added
    scores = np.asarray(est.scores_, dtype=np.float64)
    outputs = declared_outputs(est)
    frame = scores_frame(est, names, sort=False, outputs=True)  # the one per-feature table
    if donors is not None and not donor_level:  # cell-level p-values beside donor-level ones
        frame = frame.drop(columns=["pvalue", "qvalue"], errors="ignore")  # would mislead
    columns = {f"{key}_{_VAR_SUFFIX[c]}": frame[c].to_numpy() for c in frame.columns
               if c in _VAR_SUFFIX}
    est_params = {k: v for k, v in est.get_params(deep=False).items() if _plain(v)}
    call = {
        "method": info.stem if info is not None else type(est).__name__,
        "estimator": type(est).__name__,
        "params": est_params,
        "version": _version(),
        "random_state": random_state,
        "groupby": groupby,
        "sample_key": sample_key,
        "source": source,
        "n_selected": int(np.count_nonzero(est.support_)),
        # scanpy's rank_genes_groups readers look for these
        "reference": "rest",
        "use_raw": bool(use_raw),
        "layer": layer,
    }
    for name, col in (_target or {}).items():
        if col is not None:  # the obs columns of a continuous or survival target
            call[name] = col
    uns: dict[str, Any] = {"params": call}
    same_vars = names.shape[0] == adata.n_vars and np.array_equal(
        names, np.asarray(adata.var_names, dtype=object)
    )
    if same_vars:
        for col, values in columns.items():
            adata.var[col] = values
    else:
        import pandas as pd

        uns["var"] = pd.DataFrame(columns, index=pd.Index(names, name="feature"))
    if groupby is not None:
        y_idx = _class_index(y, groups)
        if donors is not None:
            pvals, counts, means, design = _donor_group_pvalues(X, y_idx, groups, donors)
            call["design"] = design.design
            call["pvals"] = (
                "donor-level: group vs the mean of the other groups, t test in the one-way "
                "model on donor pseudobulks (nested)" if design.design == "nested" else
                "donor-level: group vs the mean of the other groups, t test in the donor + "
                "group additive model on (donor, group) pseudobulks (crossed)")
        else:
            counts, means = _group_means(X, y_idx, len(groups))
            pvals = est.pvalues_ if "pvalues_" in outputs else None
            if pvals is not None:
                pvals = np.broadcast_to(np.asarray(pvals, dtype=np.float64),
                                        (len(groups), names.shape[0]))
                call["pvals"] = "the estimator's pvalues_ (the same for every group)"
        rest = _rest_means(counts, means)
        base = None
        with contextlib.suppress(AttributeError, TypeError):
            base = adata.uns.get("log1p", {}).get("base")
        lfc = logfoldchanges(means, rest, base)
        per_group, varm_cols = _own_per_group(est, groups)
        if per_group is None:
            per_group, varm_cols = (means - rest).T, list(groups)
        uns.update(
            _rank_genes_groups_struct(
                names, scores, lfc, means - rest, np.asarray(est.support_, dtype=bool),
                groups, call,
                pvals, _own_rankings(est, groups),
            )
        )
        uns["varm_columns"] = varm_cols
        if same_vars:
            adata.varm[key] = np.asarray(per_group, dtype=np.float64)
    adata.uns[key] = uns


#: the columns of the per-feature table (sparsefs.utils.scores_frame) stored in adata.var, as
#: ``{key_added}_{suffix}`` (sparsefs.get.selection_df reads them back)
_VAR_SUFFIX = {"score": "score", "rank": "rank", "selected": "selected", "frequency": "freq",
               "pvalue": "pval", "qvalue": "qval"}


def _plain(value) -> bool:
    """Whether a parameter value can be written into ``adata.uns`` (an h5ad file)."""
    return value is None or isinstance(value, bool | int | float | str | np.integer | np.floating)


def _own_rankings(est, groups: list[str]):
    """``class_rankings_`` rows in the order of ``groups``, or ``None``."""
    if "class_rankings_" not in declared_outputs(est):
        return None
    row = {str(c): i for i, c in enumerate(est.classes_)}
    return np.asarray(est.class_rankings_)[[row[g] for g in groups]]


def _own_per_group(est, groups: list[str]):
    """The estimator's own per-class statistic as ``n_features x n_columns``, if it has one."""
    outputs = declared_outputs(est)
    if "class_centers_" in outputs:
        diff = np.asarray(est.class_centers_) - np.asarray(est.shared_center_)[None, :]
        diff = np.where(np.asarray(est.support_)[None, :], diff, 0.0)
        return diff.T, [str(c) for c in est.classes_]
    if "class_supports_" in outputs:
        supports = np.asarray(est.class_supports_, dtype=np.float64)
        return supports.T, [str(c) for c in est.classes_]
    if "weights_" in outputs:
        return np.asarray(est.weights_, dtype=np.float64)[:, None], ["weight"]
    return None, None
