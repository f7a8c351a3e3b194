"""The regression and survival protocols of the harness (issue #32).

Independent references: each fold recomputed by hand with scikit-learn (KFold /
StratifiedKFold on the event, ``RidgeCV``, ``r2_score``) and lifelines' ``concordance_index``
(C-index of the fold's Cox risk score).
"""

import numpy as np
import pytest
from sklearn.linear_model import RidgeCV
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparsefs.datasets import make_planted_regression, make_planted_survival
from sparsefs.harness import ExperimentSpec, markdown_report, run
from sparsefs.harness._protocols import CoxRidge
from sparsefs.harness._runner import _splits
from sparsefs.harness._seeds import SPLIT_STREAM, derive_seed
from sparsefs.selection import UnivariateScore

REG = {"generator": "make_planted_regression",
       "params": {"n_samples": 60, "n_features": 40, "n_informative": 4, "effect": 1.5,
                  "random_state": 0}}
SURV = {"generator": "make_planted_survival",
        "params": {"n_samples": 90, "n_features": 40, "n_informative": 4, "effect": 1.0,
                   "random_state": 0}}


def _fold_values(res, metric, k, fold):
    t = res.table
    row = t[(t.metric == metric) & (t.k == k) & (t.fold == fold) & (t.method == "univariate_score")]
    return float(row.value.iloc[0])


def test_regression_protocol_equals_a_hand_made_fold():
    spec = ExperimentSpec(datasets=[REG], methods=["univariate_score"], protocol="regression",
                          k=[3], cv=3, seed=4)
    res = run(spec)
    assert set(res.table.metric) >= {"r2", "rmse"}
    d = make_planted_regression(**REG["params"])
    folds = _splits(spec, d.y, derive_seed(4, 0, SPLIT_STREAM, 0), 0, 60)
    for fold, train, test in folds:
        assert not set(train) & set(test)
        sel = UnivariateScore(n_features_to_select=3).fit(d.X[train], d.y[train])
        cols = np.flatnonzero(sel.support_)
        model = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-3, 3, 13)))
        pred = model.fit(d.X[train][:, cols], d.y[train]).predict(d.X[test][:, cols])
        assert _fold_values(res, "r2", 3, fold) == pytest.approx(r2_score(d.y[test], pred))
        assert _fold_values(res, "rmse", 3, fold) == pytest.approx(
            np.sqrt(mean_squared_error(d.y[test], pred)))


def test_survival_protocol_folds_are_stratified_on_the_event_and_scored_by_c_index():
    lifelines_utils = pytest.importorskip("lifelines.utils")
    spec = ExperimentSpec(datasets=[SURV], methods=["univariate_score"], protocol="survival",
                          k=[4], cv=3, seed=2)
    res = run(spec)
    d = make_planted_survival(**SURV["params"])
    folds = _splits(spec, d.y, derive_seed(2, 0, SPLIT_STREAM, 0), 0, 90)
    share = d.y["event"].mean()
    for fold, train, test in folds:
        assert abs(d.y["event"][test].mean() - share) <= 1.0 / len(test) + 1e-12
        sel = UnivariateScore(n_features_to_select=4).fit(d.X[train], d.y[train])
        cols = np.flatnonzero(sel.support_)
        risk = CoxRidge().fit(d.X[train][:, cols], d.y[train]).predict(d.X[test][:, cols])
        ref = lifelines_utils.concordance_index(d.y["time"][test], -risk, d.y["event"][test])
        assert _fold_values(res, "c_index", 4, fold) == pytest.approx(ref, rel=1e-12)
    assert res.table[res.table.metric == "c_index"].value.mean() > 0.6
    text = markdown_report([res], title="survival")
    assert "| events |" in text
    assert "stratified by the event indicator" in text


def test_integer_targets_are_numbers_in_the_regression_protocol():
    """Ages in whole years: the protocol tells the methods that take both kinds of target."""
    spec = ExperimentSpec(datasets=[{"loader": "sparsefs.harness.tests.test_outcome_protocols:"
                                               "_integer_ages"}],
                          methods=["mutual_info", "lasso"], protocol="regression", k=[3], cv=3)
    res = run(spec)
    assert np.isfinite(res.table[res.table.metric == "r2"].value).all()


def _integer_ages():
    d = make_planted_regression(**REG["params"])
    return d.X, np.rint(10 * d.y + 40).astype(int)


@pytest.mark.parametrize(("protocol", "kw", "match"), [
    ("survival", {"estimators": ["svm"]}, "built-in estimator is 'cox'"),
    ("regression", {"estimators": ["cox"]}, "built-in estimator is 'ridge'"),
    ("survival", {"cv": "none"}, "needs held-out rows"),
    ("regression", {"metrics": ["accuracy"]}, "computes r2, rmse"),
])
def test_spec_errors(protocol, kw, match):
    with pytest.raises(ValueError, match=match):
        ExperimentSpec(datasets=[REG], methods=["univariate_score"], protocol=protocol, **kw)


def test_class_labels_for_the_survival_protocol_are_refused():
    spec = ExperimentSpec(datasets=[REG], methods=["univariate_score"], protocol="survival",
                          k=[3], cv=3)
    with pytest.raises(ValueError, match="time= and event="):
        run(spec)
