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

from sparsefs.utils import list_methods
from sparsefs.utils.estimator_checks import (
    bad_input_cases,
    contract_checks,
    expected_failed_checks,
    instances,
    small_problem,
)

ESTIMATORS = list(instances())


def _id(est):
    return re.sub(r"\s+", "", repr(est))


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
@pytest.mark.parametrize("check", contract_checks(), ids=lambda c: c.__name__)
def test_contract(estimator, check):
    X, y, _ = small_problem()
    check(estimator, X, y)


def _info(est):
    return next(m for m in list_methods() if m.name == type(est).__name__)


BAD = bad_input_cases()


@pytest.mark.parametrize("estimator", [instances([m]).__next__() for m in list_methods()], ids=_id)
@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_bad_input(estimator, case):
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
