"""``sparsefs.get.selection_df``: the selection written by ``sparsefs.tl.select`` as a frame."""

from __future__ import annotations

import pandas as pd

__all__ = ["selection_df"]

_SUFFIXES = ("score", "rank", "selected", "freq", "pval", "qval")


def selection_df(adata, key: str = "sparsefs", *, selected_only: bool = False) -> pd.DataFrame:
    """One row per feature: ``feature``, ``score``, ``rank``, ``selected`` (and ``freq``,
    ``pval``, ``qval`` when written), sorted by rank.

    Parameters
    ----------
    adata : anndata.AnnData
        Annotated by :func:`sparsefs.tl.select` with ``key_added=key``.
    key : str, default="sparsefs"
    selected_only : bool, default=False
        Keep only the selected features.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    KeyError
        If ``adata`` holds no sparsefs result under ``key``.
    """
    if key not in adata.uns or "params" not in adata.uns[key]:
        raise KeyError(
            f"adata.uns has no sparsefs result under {key!r}; run sparsefs.tl.select(adata, ..., "
            f"key_added={key!r}) first."
        )
    var = adata.uns[key].get("var", adata.var)
    cols = {s: f"{key}_{s}" for s in _SUFFIXES if f"{key}_{s}" in var.columns}
    frame = pd.DataFrame({s: var[c].to_numpy() for s, c in cols.items()})
    frame.insert(0, "feature", var.index.astype(str).to_numpy())
    frame = frame.sort_values(["rank", "feature"], kind="stable").reset_index(drop=True)
    if selected_only:
        frame = frame[frame["selected"]].reset_index(drop=True)
    return frame
