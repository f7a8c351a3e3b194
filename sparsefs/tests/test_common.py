"""Common tests, generated from the registry: every method, every test setting.

Independent references: scikit-learn's own estimator checks; the contract and bad-input matrix
of :mod:`sparsefs.utils.estimator_checks`.
"""

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from sparsefs.exceptions import ConvergenceWarning, NoFeatureSelectedWarning
from sparsefs.utils import list_methods
from sparsefs.utils.estimator_checks import (
    bad_input_cases,
    contract_checks,
    expected_failed_checks,
    expected_warnings,
    instances,
    small_problem,
)

ESTIMATORS = list(instances())

#: The warnings that scikit-learn's checks, the contract and the bad-input matrix provoke by
#: design, each asserted to be one of these (anything else fails the test): the methods' own
#: rules keep nothing on pure-noise check data (the contract says: warn), scikit-learn's
#: transform then warns too, knockoff+ says when it cannot select, the test settings' tiny
#: max_iter stop early, and a class with one sample is smaller than the CV folds.
BY_DESIGN = (
    (NoFeatureSelectedWarning, r"selected no feature"),
    (UserWarning, r"^No features were selected"),
    (UserWarning, r"knockoff\+ at q=[0-9.]+ cannot select any feature"),
    (ConvergenceWarning, r"stopped at max_iter="),
    (UserWarning, r"The least populated class in y has only 1 members"),
)


def _id(est):
    return re.sub(r"\s+", "", repr(est))


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    with expected_warnings(*BY_DESIGN):
        check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
@pytest.mark.parametrize("check", contract_checks(), ids=lambda c: c.__name__)
def test_contract(estimator, check):
    X, y, _ = small_problem()
    with expected_warnings(*BY_DESIGN):
        check(estimator, X, y)


def _info(est):
    return next(m for m in list_methods() if m.name == type(est).__name__)


BAD = bad_input_cases()


@pytest.mark.parametrize("estimator", [instances([m]).__next__() for m in list_methods()], ids=_id)
@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_bad_input(estimator, case):
    with expected_warnings(*BY_DESIGN):
        _bad_input(estimator, case)


def _bad_input(estimator, case):
    info = _info(estimator)
    if case.supervised_only and info.supervision == "unsupervised":
        pytest.skip("labels are not used by unsupervised methods")
    if "n_features_to_select" in case.params and "n_features_to_select" not in (
        estimator.get_params()
    ):
        pytest.skip("the method has no n_features_to_select")
    if case.name == "single class" and "classification" not in info.targets:
        # a method for continuous targets reads the labels as numbers: one value is constant
        case = dataclasses.replace(case, error=((ValueError,), "constant"))
    X, y, _ = small_problem()
    reference = clone(estimator).fit(X, y)
    est = clone(estimator).set_params(**case.params)
    Xc = case.X
    if isinstance(Xc, str) and Xc == "dataframe":
        Xc = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    yc = case.y if info.supervision == "supervised" else None
    if case.sparse and not est.__sklearn_tags__().input_tags.sparse:
        with pytest.raises(TypeError, match=r"[Ss]parse"):
            est.fit(Xc, yc)
        return
    if case.error is not None:
        types, pattern = case.error
        try:
            est.fit(Xc, yc)
        except types as exc:
            assert re.search(pattern, str(exc)), f"unclear error for {case.name}: {exc}"
            return
        if not case.may_fail:
            pytest.fail(f"{case.name}: expected {types} matching {pattern!r}, fit succeeded")
        assert not np.isnan(est.scores_).any()
        return
    fitted = est.fit(Xc, yc)
    case.verify(fitted, np.asarray(Xc.toarray() if hasattr(Xc, "toarray") else Xc), yc, reference)
