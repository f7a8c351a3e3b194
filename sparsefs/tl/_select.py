"""``sparsefs.tl.select``: any registered method on an AnnData object, scanpy style.

AnnData is duck-typed here (``obs``, ``var``, ``uns``, ``varm``, ``X``, ``layers``, ``raw``):
``import sparsefs`` and this module never import anndata; it is needed only to make the copy
of ``copy=True`` (``adata.copy()``) and to read backed files, both through the object itself.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["select", "write_selection"]


def _version() -> str:
    try:
        return importlib.metadata.version("sparsefs")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        from sparsefs import __version__

        return __version__


def _resolve_estimator(method, params: dict[str, Any]):
    """``(estimator, info)`` from a stem / class name, or an estimator instance."""
    from sklearn.base import clone

    from sparsefs.utils._registry import get_method

    if isinstance(method, str):
        info = get_method(method)
        return info.estimator(**params), info
    if hasattr(method, "fit") and hasattr(method, "get_params"):
        if params:
            raise TypeError("pass parameters either in the estimator or as **params, not both.")
        name = type(method).__name__
        info = None
        with contextlib.suppress(ValueError):
            info = get_method(name)
        return clone(method), info
    raise TypeError(
        f"method must be a registered stem or name (see `sparsefs methods`) or an estimator; "
        f"got {type(method).__name__}."
    )


def _matrix(adata, layer: str | None, use_raw: bool | None):
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


def _in_memory(X):
    """A backed (h5py / anndata sparse dataset) X read into memory, keeping it sparse."""
    if X is None:
        raise ValueError("adata has no X (X is None); pass layer=.")
    if sp.issparse(X) or isinstance(X, np.ndarray):
        return X
    if type(X).__module__.startswith("dask"):
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


def _group_effects(X, y: np.ndarray, groups: list[str]) -> np.ndarray:
    """Mean in each group minus mean in the rest: ``n_features x n_groups`` (one pass).

    A dask X is reduced block by block (never loaded whole): out of core at any size.
    """
    position = {g: i for i, g in enumerate(groups)}
    y_idx = np.fromiter((position[v] for v in y), dtype=np.intp, count=y.shape[0])
    if type(X).__module__.startswith("dask"):
        from sparsefs._dask._moments import class_moments as dask_class_moments

        mom = dask_class_moments(X, y_idx, len(groups), within=False)
        counts, means = mom.counts, mom.means
    else:
        from sparsefs._kernels.stats import class_moments

        mom = class_moments(X, y_idx, len(groups))
        counts, means = mom.counts, mom.means
    total = counts @ means
    n = counts.sum()
    rest = (total[None, :] - counts[:, None] * means) / np.maximum(n - counts, 1)[:, None]
    return (means - rest).T


def _rank_genes_groups_struct(
    names, scores, effects, support, groups, params, pvals=None, qvals=None, own_rankings=None
) -> dict:
    """``adata.uns[key]`` in the layout of scanpy's ``rank_genes_groups``.

    Per group, the selected features that are higher in that group than in the rest come
    first (by that difference), then the other selected features, then the rest (by score):
    a per-group view of one selection, so that scanpy's dot plots and
    ``sc.get.rank_genes_groups_df`` read it unchanged. ``scores`` are the method's scores
    (the same for every group); ``logfoldchanges`` holds the group-vs-rest mean difference;
    ``pvals`` / ``pvals_adj`` the estimator's ``pvalues_`` / ``qvalues_`` where it has them,
    else NaN (not computed: scanpy's ``pval_cutoff`` then drops every row). A method with one
    ranking per class (``class_rankings_`` of the class-specific selector) orders each group by
    its own ranking instead.
    """
    nan = np.full(names.shape[0], np.nan)
    pvals = nan if pvals is None else np.asarray(pvals, dtype=np.float64)
    qvals = nan if qvals is None else np.asarray(qvals, dtype=np.float64)
    n = names.shape[0]
    order_cols, score_cols, effect_cols, p_cols, q_cols = [], [], [], [], []
    for g in range(len(groups)):
        eff = effects[:, g]
        tier = np.where(support & (eff > 0), 0, np.where(support, 1, 2))
        # the group's own markers by how much higher they are there; the rest by score
        key = np.where(tier == 0, -eff, -scores)
        if own_rankings is not None:
            order = np.lexsort((np.arange(n), own_rankings[g]))
        else:
            order = np.lexsort((np.arange(n), key, tier))
        order_cols.append(order)
        score_cols.append(scores[order])
        effect_cols.append(eff[order])
        p_cols.append(pvals[order])
        q_cols.append(qvals[order])
    dt_names = [(g, "O") for g in groups]
    dt_float = [(g, "float32") for g in groups]
    rec_names = np.rec.fromarrays([names[o] for o in order_cols], dtype=dt_names)
    rec_scores = np.rec.fromarrays(score_cols, dtype=dt_float)
    rec_effects = np.rec.fromarrays(effect_cols, dtype=dt_float)
    return {
        "params": params,
        "names": rec_names,
        "scores": rec_scores,
        "logfoldchanges": rec_effects,
        "pvals": np.rec.fromarrays(p_cols, dtype=[(g, "float64") for g in groups]),
        "pvals_adj": np.rec.fromarrays(q_cols, dtype=[(g, "float64") for g in groups]),
    }


def select(
    adata,
    method,
    *,
    groupby: str | None = None,
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
    n_features : int, float or None
        ``n_features_to_select`` (count, fraction, or ``None`` for the method's own rule).
    layer : str, optional
        Use ``adata.layers[layer]`` instead of ``adata.X``.
    use_raw : bool, optional
        Use ``adata.raw.X`` (and ``adata.raw.var_names``).
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

    Notes
    -----
    Written:

    * ``adata.var[f"{key}_score"]``, ``[f"{key}_rank"]``, ``[f"{key}_selected"]`` (and
      ``_freq`` / ``_qval`` / ``_pval`` when the estimator has ``frequencies_`` / ``qvalues_``
      / ``pvalues_``). With ``use_raw`` and a raw gene set that differs from ``var_names``,
      these columns go to a DataFrame ``adata.uns[key]["var"]`` instead.
    * ``adata.uns[key]``: the call (method, parameters, version, seed, groupby, source) under
      ``"params"``; with ``groupby``, the layout of scanpy's ``rank_genes_groups`` (``names``,
      ``scores``, ``logfoldchanges``), so that ``sc.pl.rank_genes_groups_dotplot(adata,
      key=key)`` and ``sc.get.rank_genes_groups_df(adata, group=None, key=key)`` work.
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
    >>> sparsefs.tl.select(  # doctest: +SKIP
    ...     adata, "sparse_centers", groupby="bulk_labels", n_features=30
    ... )
    >>> sc.pl.rank_genes_groups_dotplot(adata, key="sparsefs", n_genes=5)  # doctest: +SKIP
    """
    adata = adata.copy() if copy else adata
    est, info = _resolve_estimator(method, params)
    if n_features is not None:
        est.set_params(n_features_to_select=n_features)
    if random_state is not None and "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    X, names, source = _matrix(adata, layer, use_raw)
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
    est.fit(X, y if supervised else None)
    write_selection(adata, est, info=info, groupby=groupby, key_added=key_added,
                    layer=layer, use_raw=use_raw, random_state=random_state, _X=(X, names, source),
                    _target={"target": target, "time": time, "event": event})
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
    key_added: str = "sparsefs",
    layer: str | None = None,
    use_raw: bool | None = None,
    random_state: int | None = None,
    _X=None,
    _target=None,
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
    groupby, key_added, layer, use_raw, random_state
        As in :func:`select` (``random_state`` is only recorded).
    """
    est = estimator
    if info is None:
        from sparsefs.utils._registry import get_method

        with contextlib.suppress(ValueError):
            info = get_method(type(est).__name__)
    X, names, source = _X if _X is not None else _matrix(adata, layer, use_raw)
    y, groups = (None, None) if groupby is None else _labels(adata, groupby)
    key = key_added
    scores = np.asarray(est.scores_, dtype=np.float64)
    columns = {
        f"{key}_score": scores,
        f"{key}_rank": np.asarray(est.ranking_, dtype=np.int64),
        f"{key}_selected": np.asarray(est.support_, dtype=bool),
    }
    for attr, suffix in (("frequencies_", "freq"), ("pvalues_", "pval"), ("qvalues_", "qval")):
        if hasattr(est, attr):
            columns[f"{key}_{suffix}"] = np.asarray(getattr(est, attr), dtype=np.float64)
    est_params = {k: v for k, v in est.get_params(deep=False).items() if _plain(v)}
    call = {
        "method": info.stem if info is not None else type(est).__name__,
        "estimator": type(est).__name__,
        "params": est_params,
        "version": _version(),
        "random_state": random_state,
        "groupby": groupby,
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
        effects = _group_effects(X, y, groups)
        per_group, varm_cols = _own_per_group(est, groups)
        if per_group is None:
            per_group, varm_cols = effects, list(groups)
        uns.update(
            _rank_genes_groups_struct(
                names, scores, effects, np.asarray(est.support_, dtype=bool), groups, call,
                getattr(est, "pvalues_", None), getattr(est, "qvalues_", None),
                _own_rankings(est, groups),
            )
        )
        uns["varm_columns"] = varm_cols
        if same_vars:
            adata.varm[key] = np.asarray(per_group, dtype=np.float64)
    adata.uns[key] = uns


def _plain(value) -> bool:
    """Whether a parameter value can be written into ``adata.uns`` (an h5ad file)."""
    return value is None or isinstance(value, bool | int | float | str | np.integer | np.floating)


def _own_rankings(est, groups: list[str]):
    """``class_rankings_`` rows in the order of ``groups``, or ``None``."""
    rankings = getattr(est, "class_rankings_", None)
    if rankings is None:
        return None
    row = {str(c): i for i, c in enumerate(getattr(est, "classes_", []))}
    return np.asarray(rankings)[[row[g] for g in groups]]


def _own_per_group(est, groups: list[str]):
    """The estimator's own per-class statistic as ``n_features x n_columns``, if it has one."""
    classes = [str(c) for c in getattr(est, "classes_", [])]
    if hasattr(est, "class_centers_") and hasattr(est, "shared_center_"):
        diff = np.asarray(est.class_centers_) - np.asarray(est.shared_center_)[None, :]
        diff = np.where(np.asarray(est.support_)[None, :], diff, 0.0)
        return diff.T, classes
    if hasattr(est, "class_supports_"):
        supports = np.asarray(est.class_supports_, dtype=np.float64)
        return supports.T, classes
    if hasattr(est, "weights_") and np.ndim(est.weights_) == 1:
        return np.asarray(est.weights_, dtype=np.float64)[:, None], ["weight"]
    return None, None
