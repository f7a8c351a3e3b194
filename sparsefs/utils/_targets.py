"""Targets beyond class labels: recognise classes, continuous values and censored survival.

Three kinds of ``y`` reach the supervised estimators (docs/outcomes.md):

``"classification"``
    class labels; scikit-learn's :func:`~sklearn.utils.multiclass.type_of_target` says
    ``"binary"`` or ``"multiclass"``.
``"regression"``
    a numeric target, ``type_of_target(y) == "continuous"`` (or ``"continuous-multioutput"``
    for several targets, where an estimator takes them). Integer values (an age in years, a
    count) are labels to ``type_of_target``: an estimator that takes both kinds reads them as
    classes unless told ``target_type="regression"``; one that takes only continuous targets
    reads any numeric ``y`` as numbers.
``"survival"``
    a structured array with one boolean field (the event: ``True`` = the event was observed,
    ``False`` = censored) and one numeric field (the time to the event or to censoring), the
    layout scikit-survival's users already hold; :func:`survival_target` builds it from two
    columns. A structured ``y`` is never taken as class labels.

:func:`resolve_target` decides the kind once, for every estimator, and raises the error that
names what an estimator accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "SURVIVAL_DTYPE",
    "TARGET_KINDS",
    "Target",
    "is_survival",
    "resolve_target",
    "survival_arrays",
    "survival_target",
]

#: the kinds of target, in the words the error messages use
TARGET_KINDS = {
    "classification": "class labels (binary or multiclass y)",
    "regression": "a continuous target (numeric y)",
    "survival": "a censored survival target (a structured array with a boolean event field and "
    "a float time field, see sparsefs.utils.survival_target)",
}

#: the layout :func:`survival_target` builds
SURVIVAL_DTYPE = np.dtype([("event", np.bool_), ("time", np.float64)])

#: what a user may force with an estimator's ``target_type`` parameter
TARGET_TYPE_OPTIONS = ("auto", "classification", "regression")


def _as_array(y):
    """``y`` as a numpy array without copying a structured array (pandas: its values)."""
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        y = y.to_numpy()
    return np.asarray(y)


def is_survival(y) -> bool:
    """Whether ``y`` is a structured (record) array, i.e. meant as a survival target."""
    return isinstance(y, np.ndarray) and y.dtype.names is not None


def survival_target(event, time) -> np.ndarray:
    """The structured survival target from an event column and a time column.

    Parameters
    ----------
    event : array-like of shape (n_samples,)
        Whether the event was observed (``True`` / 1) or the time is censored (``False`` / 0).
        Booleans, 0/1 numbers or the strings ``"True"``/``"False"`` are accepted.
    time : array-like of shape (n_samples,)
        Time to the event or to censoring; finite and non-negative.

    Returns
    -------
    ndarray of shape (n_samples,), dtype ``[("event", bool), ("time", float64)]``

    Raises
    ------
    ValueError
        Lengths differ, an event value is not boolean or 0/1, or a time is missing, infinite
        or negative.

    Examples
    --------
    >>> from sparsefs.utils import survival_target
    >>> y = survival_target([True, False, True], [5.0, 8.5, 2.0])
    >>> y["time"].tolist(), y["event"].tolist()
    ([5.0, 8.5, 2.0], [True, False, True])
    """
    event = _as_array(event).ravel()
    time = _as_array(time).ravel()
    if event.shape != time.shape:
        raise ValueError(
            f"survival_target: event has {event.shape[0]} values and time {time.shape[0]}; "
            "they must have one value per sample."
        )
    if event.dtype.kind == "b":
        ev = event.astype(bool)
    elif event.dtype.kind in "iuf":
        if not np.all(np.isin(event, (0, 1))):
            bad = event[~np.isin(event, (0, 1))][:3].tolist()
            raise ValueError(f"survival_target: event must be boolean or 0/1; got {bad!r}.")
        ev = event.astype(bool)
    else:
        text = np.char.lower(event.astype(str))
        ok = np.isin(text, ("true", "false", "1", "0"))
        if not ok.all():
            raise ValueError(
                f"survival_target: event must be boolean or 0/1; got {event[~ok][:3].tolist()!r}."
            )
        ev = np.isin(text, ("true", "1"))
    try:
        t = time.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"survival_target: time must be numeric ({exc}).") from exc
    _check_times(t, "survival_target")
    out = np.empty(ev.shape[0], dtype=SURVIVAL_DTYPE)
    out["event"] = ev
    out["time"] = t
    return out


def _check_times(t: np.ndarray, who: str) -> None:
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{who}: survival times must be finite; got NaN or infinity.")
    if t.size and t.min() < 0:
        raise ValueError(f"{who}: survival times must be non-negative; got {t.min()!r}.")


def survival_arrays(y, who: str = "survival target") -> tuple[np.ndarray, np.ndarray]:
    """``(event, time)`` of a structured survival array (any field names).

    The array needs exactly two fields: one boolean (the event) and one numeric (the time), in
    either order, as scikit-survival's ``Surv`` arrays have.

    Returns
    -------
    event : ndarray of bool, shape (n_samples,)
    time : ndarray of float64, shape (n_samples,)
    """
    y = _as_array(y)
    names = y.dtype.names
    if names is None:
        raise ValueError(f"{who}: expected a structured array with event and time fields.")
    kinds = {name: y.dtype[name].kind for name in names}
    bools = [n for n in names if kinds[n] == "b"]
    nums = [n for n in names if kinds[n] in "iuf"]
    if len(names) != 2 or len(bools) != 1 or len(nums) != 1:
        raise ValueError(
            f"{who}: a survival target is a structured array with one boolean event field and "
            f"one numeric time field; got fields {dict(y.dtype.fields)!r}. Build it with "
            "sparsefs.utils.survival_target(event, time)."
        )
    if y.ndim != 1:
        raise ValueError(f"{who}: the survival target must be 1-d; got shape {y.shape}.")
    event = np.ascontiguousarray(y[bools[0]], dtype=bool)
    time = np.ascontiguousarray(y[nums[0]], dtype=np.float64)
    _check_times(time, who)
    return event, time


@dataclass(frozen=True)
class Target:
    """A validated target.

    Attributes
    ----------
    kind : {"classification", "regression", "survival"}
    y : ndarray
        As given for classification (labels; the estimator encodes them); float64 of shape
        (n,) or (n, n_targets) for regression; the structured survival array (normalised to
        :data:`SURVIVAL_DTYPE`) for survival.
    event, time : ndarray or None
        The survival fields (``None`` otherwise).
    """

    kind: str
    y: np.ndarray
    event: np.ndarray | None = None
    time: np.ndarray | None = None


def _kind_of(y, accepted: tuple[str, ...], target_type: str) -> tuple[str, str]:
    """The kind of ``y`` (and scikit-learn's type, for messages)."""
    from sklearn.utils.multiclass import type_of_target

    if is_survival(y):
        return "survival", "structured"
    if target_type not in TARGET_TYPE_OPTIONS:
        raise ValueError(f"target_type={target_type!r} is not one of {TARGET_TYPE_OPTIONS}.")
    arr = _as_array(y)
    try:
        sk_type = type_of_target(arr, input_name="y")
    except ValueError:
        sk_type = "unknown"
    if target_type != "auto":
        return target_type, sk_type
    if sk_type in ("continuous", "continuous-multioutput"):
        return "regression", sk_type
    numeric = arr.dtype.kind in "iuf"
    # an estimator for continuous targets only reads integer values (ages, counts) as numbers
    if (sk_type in ("binary", "multiclass") and numeric and "classification" not in accepted
            and "regression" in accepted):
        return "regression", sk_type
    return "classification", sk_type


def target_error(name: str, kind: str, sk_type: str, accepted: tuple[str, ...],
                 hint: str = "") -> ValueError:
    """The error of an estimator given a kind of target it does not take."""
    what = " or ".join(TARGET_KINDS[k] for k in accepted)
    got = {"survival": "a structured (survival) array",
           "regression": f"a continuous target (type_of_target: {sk_type!r})",
           "classification": f"class labels (type_of_target: {sk_type!r})"}[kind]
    msg = f"{name} accepts {what}; got {got}."
    if sk_type == "unknown":
        msg = f"Unknown label type: {name} accepts {what}; y is neither."
    if not hint and kind in ("regression", "survival"):
        from sparsefs.utils._registry import list_methods

        takers = [m.stem for m in list_methods(supervision="supervised") if kind in m.targets]
        hint = (f"Methods for {'continuous' if kind == 'regression' else 'survival'} targets: "
                f"{', '.join(takers)} (docs/outcomes.md).")
    if hint:
        msg += " " + hint
    return ValueError(msg)


def resolve_target(y, accepted: tuple[str, ...], *, name: str, target_type: str = "auto",
                   hint: str = "") -> Target:
    """Recognise and validate ``y`` for an estimator that takes the kinds ``accepted``.

    Parameters
    ----------
    y : array-like
    accepted : tuple of {"classification", "regression", "survival"}
    name : str
        The estimator's name, for the messages.
    target_type : {"auto", "classification", "regression"}, default="auto"
        Force how a non-structured ``y`` is read (see the module docstring).
    hint : str
        Appended to the error when the kind is not accepted (e.g. which estimator to use).

    Returns
    -------
    Target

    Raises
    ------
    ValueError
        When the kind is not accepted (naming what is), or the values are invalid.
    """
    kind, sk_type = _kind_of(y, accepted, target_type)
    if kind not in accepted:
        raise target_error(name, kind, sk_type, accepted, hint)
    if kind == "survival":
        event, time = survival_arrays(y, name)
        out = np.empty(event.shape[0], dtype=SURVIVAL_DTYPE)
        out["event"], out["time"] = event, time
        return Target(kind, out, event, time)
    if kind == "regression":
        arr = _as_array(y)
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: a continuous target must be numeric ({exc}).") from exc
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: the target y contains NaN or infinity.")
        return Target(kind, arr)
    return Target(kind, _as_array(y) if not isinstance(y, list | tuple) else np.asarray(y))
