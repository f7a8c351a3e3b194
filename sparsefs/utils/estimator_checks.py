"""Checks that every sparsefs estimator must pass, generated from the registry.

Three layers, run by ``sparsefs/tests/test_common.py`` over every registered method and each of
its ``test_params`` settings:

1. scikit-learn's own estimator checks (``parametrize_with_checks``); checks that cannot apply are
   listed, with the reason, in :data:`EXPECTED_FAILED_CHECKS` - the only place they are skipped;
2. the sparsefs selection contract (:func:`contract_checks`);
3. the bad-input matrix (:func:`bad_input_cases`): every case ends in a clear ``ValueError`` /
   ``TypeError`` that names the parameter or the problem, or in a documented correct result.

A method added to the registry is checked by all three with no further code.
"""

import contextlib
import pickle
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from sparsefs.utils._registry import MethodInfo, build_params, list_methods

__all__ = [
    "EXPECTED_FAILED_CHECKS",
    "BadInputCase",
    "bad_input_cases",
    "contract_checks",
    "expected_warnings",
    "instances",
    "outcome_instances",
    "small_outcome_problem",
    "small_problem",
]

#: estimator class name -> {check name: reason}. Keep every entry justified.
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {}


def instances(methods: list[MethodInfo] | None = None) -> Iterator[Any]:
    """One estimator per (registered method, test setting)."""
    for info in methods if methods is not None else list_methods():
        for params in info.test_params:
            yield info.estimator(**build_params(params))


@contextlib.contextmanager
def expected_warnings(*allowed: tuple[type, str], required: bool = False) -> Iterator[list]:
    """Record every warning raised in the block and assert each is one of ``allowed``.

    For tests whose subject is not the warning but whose design provokes it (a null design on
    which a rule selects nothing, a permutation count below the procedure's floor): the
    warning is asserted to be the expected one, so a new or different warning fails the test
    instead of scrolling by in the output.

    Parameters
    ----------
    *allowed : (category, pattern)
        A warning passes when it is an instance of ``category`` and ``re.search(pattern,
        message)`` matches.
    required : bool, default=False
        Also assert that at least one warning was raised.

    Yields
    ------
    list of warnings.WarningMessage
        The records, for further assertions.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    for w in caught:
        assert any(issubclass(w.category, cat) and re.search(pattern, str(w.message))
                   for cat, pattern in allowed), f"unexpected {w.category.__name__}: {w.message}"
    if required:
        assert caught, "the expected warning was not raised"
def outcome_instances(kind: str, methods: list[MethodInfo] | None = None) -> Iterator[Any]:
    """One estimator per (method taking ``kind`` targets, setting): its ``outcome_params``
    when given, else its ``test_params``."""
    for info in methods if methods is not None else list_methods():
        if kind not in info.targets or info.supervision != "supervised":
            continue
        for params in info.outcome_params or info.test_params:
            yield info.estimator(**build_params(params))


def small_outcome_problem(
    kind: str, n_samples: int = 60, n_features: int = 8, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A small problem with a continuous (``"regression"``) or survival (``"survival"``)
    target driven by features 2 and 5 (not the first columns).

    Returns ``X``, ``y`` (float values, or the structured event / time array) and the true
    support.
    """
    from sparsefs.utils._targets import survival_target

    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    support = np.zeros(n_features, dtype=bool)
    support[[2, 5]] = True
    eta = 1.5 * X[:, 2] - 1.0 * X[:, 5]
    if kind == "regression":
        return X, eta + 0.5 * rng.normal(size=n_samples), support
    if kind != "survival":
        raise ValueError(f"kind={kind!r} is not 'regression' or 'survival'.")
    t = rng.exponential(size=n_samples) / np.exp(eta)
    c = rng.exponential(2.0, size=n_samples)
    return X, survival_target(t <= c, np.minimum(t, c)), support


def expected_failed_checks(estimator) -> dict[str, str]:
    """The documented check failures of ``estimator`` (for ``parametrize_with_checks``)."""
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


def small_problem(
    n_samples: int = 45, n_features: int = 8, n_classes: int = 3, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A small, well-separated problem with signal at features 2 and 5 (not the first columns).

    Returns ``X``, ``y`` (labels 0..n_classes-1, balanced) and the true support.
    """
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % n_classes
    X = rng.normal(size=(n_samples, n_features))
    support = np.zeros(n_features, dtype=bool)
    support[[2, 5]] = True
    X[:, 2] += 3.0 * y
    X[:, 5] -= 2.5 * (y == 1)
    return X, y, support


def _fit(est, X, y):
    return est.fit(X, y)


def _params(est) -> dict:
    return est.get_params(deep=False)


# --------------------------------------------------------------------------------------------
# The selection contract
# --------------------------------------------------------------------------------------------


def check_ranking_and_support(est, X, y):
    """``scores_`` numeric, ``ranking_`` a permutation consistent with it, support = its top."""
    est = _fit(clone(est), X, y)
    p = X.shape[1]
    scores, ranking, support = est.scores_, est.ranking_, est.support_
    assert scores.shape == (p,) and scores.dtype == np.float64
    assert not np.isnan(scores).any(), "scores_ contains NaN"
    assert np.array_equal(np.sort(ranking), np.arange(1, p + 1)), "ranking_ is not 1..p"
    order = np.argsort(ranking)
    assert np.all(np.diff(scores[order]) <= 0), "ranking_ does not sort scores_ best first"
    tied = np.diff(scores[order]) == 0
    assert np.all(np.diff(order)[tied] > 0), "ties are not broken by the lower index"
    assert support.dtype == bool and support.shape == (p,)
    assert np.array_equal(support, ranking <= support.sum()), "support_ is not the top ranks"
    assert np.array_equal(est.get_support(), support)
    assert est.n_features_to_select_ == support.sum()
    k = _params(est).get("n_features_to_select")
    if isinstance(k, int | np.integer):
        if getattr(est, "_per_class_selection", False):
            # class-specific methods keep k features per class; support_ is their union
            assert k <= support.sum() <= k * len(est.classes_)
        else:
            assert support.sum() == k


def check_transform_is_column_selection(est, X, y):
    """``transform(X) == X[:, support_]``, dense and (if accepted) sparse."""
    est = _fit(clone(est), X, y)
    np.testing.assert_array_equal(est.transform(X), X[:, est.support_])
    if est.__sklearn_tags__().input_tags.sparse:
        Xs = sp.csr_array(X)
        out = est.transform(Xs)
        assert sp.issparse(out)
        np.testing.assert_array_equal(out.toarray(), X[:, est.support_])


def check_pickle_roundtrip(est, X, y):
    """A pickled and restored fit gives the same selection and outputs."""
    est = _fit(clone(est), X, y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.scores_, est.scores_)
    np.testing.assert_array_equal(back.transform(X), est.transform(X))
    for method in ("predict", "decision_function"):
        if hasattr(est, method):
            np.testing.assert_array_equal(getattr(back, method)(X), getattr(est, method)(X))


def check_same_random_state_same_result(est, X, y):
    """Two fits with the same ``random_state`` agree exactly (deterministic methods always)."""
    if "random_state" in _params(est):
        est = clone(est).set_params(random_state=0)
    a, b = _fit(clone(est), X, y), _fit(clone(est), X, y)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.support_, b.support_)
    if hasattr(a, "labels_"):
        np.testing.assert_array_equal(a.labels_, b.labels_)


def check_inputs_not_mutated(est, X, y):
    """Neither X nor y (dense, Fortran-ordered, or CSR) is changed by fit/transform/predict."""
    variants = [np.array(X), np.asfortranarray(X)]
    if est.__sklearn_tags__().input_tags.sparse:
        variants.append(sp.csr_array(X))
    for Xv in variants:
        X_copy = Xv.copy()
        y_copy = np.array(y, copy=True)
        fitted = _fit(clone(est), Xv, y)
        fitted.transform(Xv)
        for method in ("predict", "decision_function"):
            if hasattr(fitted, method):
                getattr(fitted, method)(Xv)
        if sp.issparse(Xv):
            assert (Xv != X_copy).nnz == 0, "fit changed the caller's sparse X"
        else:
            np.testing.assert_array_equal(Xv, X_copy, err_msg="fit changed the caller's X")
        np.testing.assert_array_equal(y, y_copy, err_msg="fit changed the caller's y")


def check_dataframe_feature_names(est, X, y):
    """DataFrame columns become ``feature_names_in_`` and name the selected output columns."""
    import pandas as pd

    names = [f"gene_{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    fitted = _fit(clone(est), df, y)
    np.testing.assert_array_equal(fitted.feature_names_in_, names)
    expected = np.asarray(names, dtype=object)[fitted.support_]
    np.testing.assert_array_equal(fitted.get_feature_names_out(), expected)
    out = clone(est).set_output(transform="pandas").fit(df, y).transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(expected)


def check_family_interface(est, X, y):
    """Classifiers predict known classes; clusterers label every sample."""
    fitted = _fit(clone(est), X, y)
    tags = fitted.__sklearn_tags__()
    if tags.estimator_type == "classifier":
        assert set(np.unique(fitted.predict(X))) <= set(fitted.classes_)
    if tags.estimator_type == "clusterer":
        assert fitted.labels_.shape == (X.shape[0],)
        again = clone(est)
        if "random_state" in _params(est):
            again.set_params(random_state=_params(fitted)["random_state"])
        np.testing.assert_array_equal(again.fit_predict(X), fitted.labels_)


def check_declared_outputs(est, X, y):
    """Every output the class declares (``_outputs``) is set by fit with its documented shape,
    and an attribute named and shaped like an output in :data:`sparsefs.utils._results.OUTPUTS` is
    declared (what ``sparsefs.tl`` and the CLI read is what the class says it gives)."""
    from sparsefs.utils._results import OUTPUTS, declared_outputs

    fitted = _fit(clone(est), X, y)
    declared = declared_outputs(fitted)
    assert declared <= OUTPUTS.keys(), f"undocumented outputs {sorted(declared - OUTPUTS.keys())}"
    p = X.shape[1]
    per_class = (len(getattr(fitted, "classes_", ())), p)
    for name in OUTPUTS:
        shape = per_class if name.startswith("class_") else (p,)
        value = getattr(fitted, name, None)
        if name in declared:
            assert value is not None, f"{name} is declared but not set by fit"
            assert np.shape(value) == shape, f"{name} has shape {np.shape(value)}, not {shape}"
            if name == "class_centers_":
                assert np.shape(fitted.shared_center_) == (p,)
        else:
            assert value is None or np.shape(value) != shape, f"{name} is set but not declared"


def contract_checks() -> list[Callable]:
    """The sparsefs contract checks, each ``check(estimator, X, y)``."""
    return [
        check_ranking_and_support,
        check_transform_is_column_selection,
        check_pickle_roundtrip,
        check_same_random_state_same_result,
        check_inputs_not_mutated,
        check_dataframe_feature_names,
        check_family_interface,
        check_declared_outputs,
    ]


# --------------------------------------------------------------------------------------------
# The bad-input matrix
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BadInputCase:
    """One bad or unusual input and what must happen.

    ``sparse`` cases must give the dense result when the estimator declares sparse support, and a
    ``TypeError`` naming sparse input otherwise.

    ``error`` is ``None`` when fitting must succeed (then ``verify(fitted, X, y, reference)``
    checks the documented result, ``reference`` being the fit on the clean problem), or an
    ``(exception types, regex)`` pair the error message must match. ``may_fail`` cases accept
    either outcome, but an error must still be the clear one.
    """

    name: str
    X: Any
    y: Any
    params: dict
    error: tuple[tuple[type, ...], str] | None = None
    verify: Callable | None = None
    may_fail: bool = False
    supervised_only: bool = False
    sparse: bool = False


def _no_nan(fitted, X, y, ref):
    assert not np.isnan(fitted.scores_).any()


def _constant_last(cols):
    def verify(fitted, X, y, ref):
        _no_nan(fitted, X, y, ref)
        others = np.setdiff1d(np.arange(X.shape[1]), cols)
        assert fitted.scores_[cols].max() <= fitted.scores_[others].min(), (
            "a constant column must get the lowest score"
        )
        assert np.all(fitted.ranking_[cols] > len(others)), "constant columns must rank last"

    return verify


def _same_as_reference(rtol):
    def verify(fitted, X, y, ref):
        _no_nan(fitted, X, y, ref)
        np.testing.assert_allclose(fitted.scores_, ref.scores_, rtol=rtol, atol=1e-12)

    return verify


def bad_input_cases(random_state: int = 0) -> list[BadInputCase]:
    """The bad-input matrix on :func:`small_problem`."""
    X, y, _ = small_problem(random_state=random_state)
    n, p = X.shape
    v = ValueError
    cases = []

    def add(name, Xc=None, yc=None, params=None, **kw):
        cases.append(
            BadInputCase(name, X if Xc is None else Xc, y if yc is None else yc, params or {}, **kw)
        )

    Xn = X.copy()
    Xn[3, 1] = np.nan
    add("nan", Xn, error=((v,), "NaN"))
    Xi = X.copy()
    Xi[4, 6] = np.inf
    add("inf", Xi, error=((v,), "infinity"))
    Xi = X.copy()
    Xi[4, 6] = -np.inf
    add("-inf", Xi, error=((v,), "infinity"))
    Xc = X.copy()
    Xc[:, [0, 4]] = 7.0
    add("constant columns", Xc, verify=_constant_last([0, 4]))
    Xd = np.column_stack([X, X[:, 2]])
    add("duplicate columns", Xd, verify=_no_nan)
    add(
        "single class", yc=np.zeros(n, dtype=int), error=((v,), "class"), supervised_only=True
    )
    y1 = y.copy()
    y1[0] = 9
    add("class with one sample", yc=y1, verify=_no_nan, supervised_only=True)
    for k in (0, -1):
        add(f"n_features_to_select={k}", params={"n_features_to_select": k},
            error=((v,), "n_features_to_select"))
    add("n_features_to_select > n_features", params={"n_features_to_select": p + 1},
        error=((v,), f"n_features_to_select={p + 1}"))
    add("n_features_to_select=1.5", params={"n_features_to_select": 1.5},
        error=((v,), "n_features_to_select"))
    for bad in ("ten", [2], True):
        add(f"n_features_to_select={bad!r}", params={"n_features_to_select": bad},
            error=((v, TypeError), "n_features_to_select"))
    add("one sample", X[:1], y[:1], error=((v,), "sample|class"), may_fail=True)
    add("zero features", X[:, :0], error=((v,), "0 feature"))
    add("object dtype (numbers)", X.astype(object), verify=_same_as_reference(1e-12))
    Xs = X.astype(object)
    Xs[0, 0] = "high"
    add("object dtype (strings)", Xs, error=((v,), "numeric|not a number"))
    add("csr", sp.csr_array(X), verify=_same_as_reference(1e-8), sparse=True)
    add("float32", X.astype(np.float32), verify=_no_nan)
    add("fortran order", np.asfortranarray(X), verify=_same_as_reference(1e-8))
    add("dataframe", "dataframe", verify=_same_as_reference(1e-12))
    add("values of 1e300", X * 1e300, verify=_no_nan, may_fail=True)
    add("values of 1e-300", X * 1e-300, verify=_no_nan, may_fail=True)
    return cases
