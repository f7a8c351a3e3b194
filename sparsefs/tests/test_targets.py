"""Targets beyond classes, over the whole registry (issue #32).

Independent references: scikit-learn's ``type_of_target`` (what a continuous target is), the
selection contract of :mod:`sparsefs.utils.estimator_checks` run on continuous and survival
targets, and hand-made structured arrays (what a survival target is).
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sparsefs.utils import list_methods
from sparsefs.utils._targets import (
    SURVIVAL_DTYPE,
    resolve_target,
    survival_arrays,
    survival_target,
)
from sparsefs.utils.estimator_checks import (
    contract_checks,
    instances,
    outcome_instances,
    small_outcome_problem,
    small_problem,
)

SUPERVISED = list_methods(supervision="supervised")


def test_survival_target_builds_the_structured_layout():
    y = survival_target([1, 0, 1], np.array([3, 1.5, 2]))
    assert y.dtype == SURVIVAL_DTYPE
    np.testing.assert_array_equal(y["event"], [True, False, True])
    np.testing.assert_array_equal(y["time"], [3.0, 1.5, 2.0])
    y2 = survival_target(pd.Series(["True", "false", "1"]), pd.Series([1, 2, 3]))
    np.testing.assert_array_equal(y2["event"], [True, False, True])


@pytest.mark.parametrize(
    ("event", "time", "match"),
    [
        ([1, 2], [1.0, 2.0], "boolean or 0/1"),
        ([1, 0], [1.0], "one value per sample"),
        ([1, 0], [1.0, np.nan], "finite"),
        ([1, 0], [1.0, -2.0], "non-negative"),
        (["yes", "no"], [1.0, 2.0], "boolean or 0/1"),
    ],
)
def test_survival_target_rejects_bad_columns(event, time, match):
    with pytest.raises(ValueError, match=match):
        survival_target(event, time)


def test_any_field_names_are_read_like_scikit_survival_arrays():
    """A (bool, float) record array with other names and order is a survival target."""
    y = np.array([(2.5, True), (1.0, False)], dtype=[("days", "f8"), ("dead", "?")])
    event, time = survival_arrays(y)
    np.testing.assert_array_equal(event, [True, False])
    np.testing.assert_array_equal(time, [2.5, 1.0])
    bad = np.array([(1.0, 2.0)], dtype=[("a", "f8"), ("b", "f8")])
    with pytest.raises(ValueError, match="one boolean event field"):
        survival_arrays(bad)


def test_kind_follows_type_of_target():
    both = ("classification", "regression")
    assert resolve_target(np.array([0, 1, 1]), both, name="E").kind == "classification"
    assert resolve_target(np.array([0.5, 1.2, 3.3]), both, name="E").kind == "regression"
    # integer values are classes to type_of_target, numbers when the method takes no classes
    ages = np.array([34, 51, 23, 60])
    assert resolve_target(ages, ("regression",), name="E").kind == "regression"
    assert resolve_target(ages, both, name="E").kind == "classification"
    assert resolve_target(ages, both, name="E", target_type="regression").kind == "regression"
    y = survival_target([True, False], [1.0, 2.0])
    assert resolve_target(y, ("survival",), name="E").kind == "survival"


@pytest.mark.parametrize("info", SUPERVISED, ids=lambda m: m.stem)
def test_registry_targets_match_the_estimators(info):
    est = next(instances([info]))
    if "estimator" in est.get_params(deep=False) and info.targets != ("classification",):
        # meta-estimators take what their base estimator takes: the registry lists the union
        assert set(est._targets) <= set(info.targets)
        assert set(info.targets) == {"classification", "regression", "survival"}
    else:
        assert tuple(info.targets) == tuple(est._targets)


@pytest.mark.parametrize("info", SUPERVISED, ids=lambda m: m.stem)
def test_a_structured_y_is_never_taken_as_labels(info):
    """Every supervised method either fits a survival target as one or refuses it with an
    error naming what it accepts (the issue: 14 estimators used to fit (event, time) pairs
    as class labels without a word)."""
    X, _, _ = small_problem()
    _, y_surv, _ = small_outcome_problem("survival", n_samples=X.shape[0])
    est = next(instances([info]))
    if "survival" in info.targets:
        return  # fitted as survival by the tests below
    with pytest.raises(ValueError, match=r"accepts .*survival|accepts .*class labels"):
        clone(est).fit(X, y_surv)


@pytest.mark.parametrize("info", SUPERVISED, ids=lambda m: m.stem)
def test_a_continuous_y_is_refused_clearly_by_class_only_methods(info):
    X, _, _ = small_problem()
    y = np.linspace(0.1, 3.3, X.shape[0])
    est = next(instances([info]))
    if "regression" in info.targets:
        return
    with pytest.raises(ValueError, match=r"accepts class labels.*got a continuous target"):
        clone(est).fit(X, y)


@pytest.mark.parametrize("kind", ["regression", "survival"])
def test_outcome_estimators_follow_the_contract(kind):
    """The selection contract on continuous / survival targets, for every method taking them.

    One test per kind over all such methods (their number grows with the registry)."""
    X, y, _support = small_outcome_problem(kind)
    ests = list(outcome_instances(kind))
    assert ests, f"no registered method takes {kind} targets"
    for est in ests:
        for check in contract_checks():
            if check.__name__ == "check_family_interface":
                continue
            check(est, X, y)
        fitted = clone(est).fit(X, y)
        assert fitted.target_type_ == kind
        # the signal (features 2 and 5) ranks first on this easy problem
        assert set(np.argsort(fitted.ranking_)[:2]) == {2, 5}, type(est).__name__


def test_dask_input_refuses_a_survival_target_clearly():
    da = pytest.importorskip("dask.array")
    from sparsefs.selection import FisherScore

    X, _, _ = small_problem()
    _, y, _ = small_outcome_problem("survival", n_samples=X.shape[0])
    with pytest.raises(ValueError, match=r"accepts class labels.*survival"):
        FisherScore(n_features_to_select=2).fit(da.from_array(X, chunks=(20, 4)), y)
