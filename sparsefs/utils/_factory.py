"""One way from a name to an estimator, for every front end.

The command line, :mod:`sparsefs.tl`, the harness and the meta-selectors (error control,
knockoffs) all turn "a method" into an estimator: a registered stem or class name
(``"fisher_score"``, ``"FisherScore"``), an import path of any scikit-learn estimator
(``"sklearn.svm:LinearSVC"``), a class, or an estimator instance. :func:`make_estimator` is
that step, written once: the same lookup, the same clone rule, the same message for a
parameter the estimator does not take, and the same rule for the front end's own defaults
(``random_state``, ``n_features_to_select``, ``n_clusters``): set only where the estimator
takes them and the caller's parameters do not name them.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["import_object", "make_estimator"]


def import_object(path: str) -> Any:
    """Import ``"module:attr"`` (or ``"module.attr"``).

    Raises
    ------
    ValueError
        If the module or the attribute does not exist.

    Examples
    --------
    >>> import_object("sparsefs.selection:FisherScore").__name__
    'FisherScore'
    """
    module, sep, attr = path.partition(":")
    if not sep:
        module, _, attr = path.rpartition(".")
    if not module or not attr:
        raise ValueError(f"{path!r}: expected 'module:name'.")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"{path!r}: cannot import module {module!r} ({exc}).") from exc
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ValueError(f"{path!r}: module {module!r} has no {attr!r}.") from None


def _is_estimator(obj: Any) -> bool:
    return hasattr(obj, "fit") and hasattr(obj, "get_params")


def make_estimator(method: Any, params: Mapping[str, Any] | None = None, *,
                   defaults: Mapping[str, Any] | None = None, what: str | None = None,
                   clone: bool = True, default: Any = None) -> Any:
    """An estimator from a method name, an import path, a class or an instance.

    Parameters
    ----------
    method : str, type or estimator
        A registered stem, class name or alias (``"fisher_score"``; see ``sparsefs methods``);
        ``"module:Class"`` (any scikit-learn style estimator); a class or a zero-argument
        factory; or an estimator instance, cloned unless ``clone=False``.
    params : mapping, optional
        Parameters set on the estimator. A name it does not take raises ``ValueError`` that
        lists the names it takes.
    defaults : mapping, optional
        The caller's own defaults: each is set only when the estimator takes that name and
        ``params`` does not give it (the CLI's ``-k`` and ``--seed``, the harness's seeds).
    what : str, optional
        How messages name the method (default: its class name).
    clone : bool, default=True
        Clone an estimator instance (``False``: set the parameters on the instance itself).
    default : str, type or callable, optional
        What ``method=None`` means: a meta-selector's own base estimator (a method as above;
        a class or zero-argument factory builds a fresh one on every call).

    Returns
    -------
    estimator

    Raises
    ------
    ValueError
        An unknown method name or import path, or a parameter the estimator does not take.
    TypeError
        ``method`` is none of the above, or does not give a scikit-learn estimator.

    Examples
    --------
    >>> est = make_estimator("fisher_score", {"n_features_to_select": 5},
    ...                      defaults={"random_state": 0, "n_features_to_select": 10})
    >>> type(est).__name__, est.n_features_to_select
    ('FisherScore', 5)
    >>> make_estimator("fisher_score", {"alpha": 1})
    Traceback (most recent call last):
    ...
    ValueError: FisherScore has no parameter alpha; it takes fdr, n_features_to_select.
    """
    if method is None and default is not None:
        method = default
    if isinstance(method, str):
        if ":" in method or "." in method:  # registry names have neither
            est = import_object(method)
        else:
            from sparsefs.utils._registry import get_method

            est = get_method(method).estimator
    else:
        est = method
    if isinstance(est, type) or (callable(est) and not _is_estimator(est)):
        est = est()
    elif _is_estimator(est) and clone:
        from sklearn.base import clone as sk_clone

        est = sk_clone(est)
    if not _is_estimator(est):
        raise TypeError(
            f"{what or repr(method)} is not a scikit-learn estimator (no fit/get_params); pass "
            "a registered method name (see `sparsefs methods`), 'module:Class' or an estimator."
        )
    what = what or type(est).__name__
    params = dict(params or {})
    accepted = est.get_params(deep=False)
    nested = est.get_params(deep=True)  # ``step__C`` of a pipeline or a meta-estimator
    unknown = sorted(k for k in params if k not in nested)
    if unknown:
        raise ValueError(
            f"{what} has no parameter {', '.join(unknown)}; it takes {', '.join(accepted)}."
        )
    merged = {k: v for k, v in (defaults or {}).items() if k in accepted and k not in params}
    merged.update(params)
    return est.set_params(**merged) if merged else est
