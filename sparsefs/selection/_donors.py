"""``groups=`` (donor / sample labels) for the trust layer: validation, the design, the log note.

Shared by :class:`~sparsefs.selection.ErrorControlSelector`,
:class:`~sparsefs.selection.StabilitySelector` and :func:`sparsefs.tl.select`; the statistics
are in :mod:`sparsefs._kernels.donors`.
"""

from __future__ import annotations

import logging

import numpy as np

from sparsefs._kernels.donors import DonorDesign, design_table, detect_design

__all__ = ["check_groups", "donor_design", "donor_outcome", "logger"]

#: the design found for ``groups=`` is logged here at INFO level
logger = logging.getLogger("sparsefs.donors")


def check_groups(groups, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """``(g_idx, names)``: the group (donor) index of every sample and the group labels.

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        Any hashable labels (str, int, a pandas categorical); no missing values.
    n_samples : int

    Returns
    -------
    g_idx : ndarray of intp, shape (n_samples,)
    names : ndarray of shape (n_groups,)
    """
    if hasattr(groups, "to_numpy"):  # pandas: categoricals and nullable dtypes to numpy
        groups = groups.to_numpy()
    arr = np.asarray(groups)
    if arr.ndim != 1 or arr.shape[0] != n_samples:
        raise ValueError(
            f"groups must be one label per sample, shape ({n_samples},); got shape {arr.shape}."
        )
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError("groups contains NaN: every sample needs a donor / sample label.")
    if arr.dtype.kind == "O":
        bad = [i for i, v in enumerate(arr[: 10**6]) if v is None or v != v]  # None / NaN
        if bad:
            raise ValueError(
                f"groups has missing labels (samples {bad[:5]}): every sample needs a donor / "
                "sample label."
            )
        arr = arr.astype(str)
    names, g_idx = np.unique(arr, return_inverse=True)
    return g_idx.astype(np.intp, copy=False), names


def donor_design(y_idx: np.ndarray, g_idx: np.ndarray, n_classes: int, n_groups: int,
                 who: str) -> DonorDesign:
    """Detect the design, log it, and refuse (``ValueError``) when nothing is testable.

    Parameters
    ----------
    y_idx, g_idx : ndarray of int, shape (n_samples,)
        Class and group indices.
    n_classes, n_groups : int
    who : str
        The estimator's name, for the messages.

    Returns
    -------
    DonorDesign
    """
    design = detect_design(design_table(y_idx, g_idx, n_classes, n_groups))
    if design.design == "neither":
        raise ValueError(
            f"{who}: groups= gives no donor-level test. {design.reason} Without replicated "
            "donors, any p-value or error bound would treat cells of one donor as independent; "
            "drop groups= only if the samples really are independent."
        )
    logger.info("%s: groups= read as a %s design. %s", who, design.design, design.describe())
    return design


def donor_outcome(y: np.ndarray, g_idx: np.ndarray, n_groups: int) -> np.ndarray | None:
    """Each donor's value of a continuous or survival target constant within every donor.

    A target that is an attribute of the donor (age, a donor's relapse-free time) is the
    *nested* design of an outcome: one value per donor, so the donors are the observations
    and the tests of the target apply to the donor pseudobulks as they stand. A target that
    varies within some donor (pseudotime, a cell-level score) is *crossed* with the donors.

    Parameters
    ----------
    y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        A continuous target (float) or a structured survival array (equal records: equal
        time and event).
    g_idx : ndarray of int, shape (n_samples,)
        Group (donor) indices in ``0..n_groups-1``, every group present.
    n_groups : int

    Returns
    -------
    ndarray of shape (n_groups,) (or (n_groups, n_targets)) or None
        The donors' values (of their first sample), or ``None`` when the target differs
        between two samples of one donor.
    """
    _, first = np.unique(g_idx, return_index=True)
    if first.shape[0] != n_groups:
        raise ValueError(f"donor_outcome: {first.shape[0]} of {n_groups} groups have samples.")
    per_donor = y[first]
    same = per_donor[g_idx] == y
    if same.ndim > 1:
        same = same.all(axis=tuple(range(1, same.ndim)))
    return per_donor if bool(np.all(same)) else None
