"""make_estimator: the one way from a method name to an estimator (issue #34), used by the CLI,
sparsefs.tl, the harness and the error-control meta-selectors."""

import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparsefs.selection import FisherScore
from sparsefs.utils import get_method
from sparsefs.utils._factory import import_object, make_estimator


@pytest.mark.parametrize("name", ["fisher_score", "FisherScore", "FISHER_SCORE",
                                  "sparsefs.selection:FisherScore",
                                  "sparsefs.selection.FisherScore", FisherScore])
def test_every_spelling_gives_the_same_estimator(name):
    est = make_estimator(name, {"n_features_to_select": 3})
    assert type(est) is FisherScore and est.n_features_to_select == 3


def test_aliases_follow_the_registry():
    assert type(make_estimator("sparse_kmeans")) is get_method("sparse_kmeans").estimator


def test_instances_are_cloned_unless_asked_not_to():
    base = FisherScore(4)
    made = make_estimator(base, {"n_features_to_select": 2})
    assert made is not base and base.n_features_to_select == 4 and made.n_features_to_select == 2
    assert make_estimator(base, clone=False) is base


def test_defaults_fill_only_what_the_estimator_takes_and_params_leave_open():
    est = make_estimator("fisher_score", {"n_features_to_select": 5},
                         defaults={"n_features_to_select": 10, "random_state": 0,
                                   "n_clusters": 3})
    assert est.n_features_to_select == 5 and "random_state" not in est.get_params()
    est = make_estimator("l0_kmeans", defaults={"random_state": 7, "n_clusters": 3})
    assert est.random_state == 7 and est.n_clusters == 3


def test_unknown_parameter_names_the_ones_it_takes():
    with pytest.raises(ValueError, match=r"method 'x' has no parameter alpha, beta; it takes "
                                         r"fdr, n_features_to_select\."):
        make_estimator("fisher_score", {"beta": 1, "alpha": 2}, what="method 'x'")


def test_nested_parameters_reach_the_inner_estimator():
    pipe = make_estimator(make_pipeline(StandardScaler(), LogisticRegression()),
                          {"logisticregression__C": 0.5})
    assert pipe.get_params()["logisticregression__C"] == 0.5
    with pytest.raises(ValueError, match="has no parameter nope__C"):
        make_estimator(make_pipeline(StandardScaler()), {"nope__C": 1})


def test_bad_methods_are_clear():
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        make_estimator("nope")
    with pytest.raises(ValueError, match="cannot import module"):
        make_estimator("no_such_module:Thing")
    with pytest.raises(TypeError, match="not a scikit-learn estimator"):
        make_estimator(5)
    with pytest.raises(TypeError, match="not a scikit-learn estimator"):
        make_estimator("sparsefs.utils._factory:__all__")
    assert import_object("sparsefs.utils:get_method") is get_method


def test_none_means_the_callers_default_and_the_meta_selectors_use_it():
    """``default=`` is what ``None`` means (a fresh estimator from a factory each time); the
    error-control, knockoff and class-specific selectors resolve their base through it."""
    from sparsefs.selection._class_specific import resolve_selector
    from sparsefs.selection._error_control import base_estimator

    a = make_estimator(None, default=lambda: FisherScore(1))
    b = make_estimator(None, default=lambda: FisherScore(1))
    assert type(a) is FisherScore and a.n_features_to_select == 1 and a is not b
    assert type(make_estimator(None, default="fisher_score")) is FisherScore
    assert make_estimator("fisher_score", default=LogisticRegression).__class__ is FisherScore
    with pytest.raises(TypeError, match="not a scikit-learn estimator"):
        make_estimator(None)
    base = base_estimator(None)
    assert type(base) is FisherScore and base.n_features_to_select == 1
    est = FisherScore(3)
    assert base_estimator(est) is est and resolve_selector(est) is est
    assert type(resolve_selector(None)).__name__ == "SMBA"
