"""Group-aware folds (issue #30): no group (donor) in the training and the test rows of a fold.

Independent reference: the rows each fit saw (logged by a recording selector) against the
group labels, by set arithmetic.
"""

import numpy as np
import pytest

from sparsefs.datasets import Dataset
from sparsefs.harness import ExperimentSpec, run, task_seed
from sparsefs.harness._runner import _splits
from sparsefs.harness.tests._helpers import RecordingSelector, read_log


def _grouped_dataset(n=120, p=6, n_groups=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 0] = np.arange(n)  # row ids
    groups = np.repeat([f"donor{g}" for g in range(n_groups)], n // n_groups)
    y = np.tile([0, 1, 2], n // 3)
    return Dataset(X=X, y=y, feature_names=[f"f{j}" for j in range(p)], support=None,
                   name="ids", groups=groups)


@pytest.mark.parametrize("cv", [4, {"scheme": "split", "train_size": 0.6}])
def test_folds_keep_every_group_whole(tmp_path, monkeypatch, cv):
    log = tmp_path / "log.jsonl"
    ds = _grouped_dataset()
    monkeypatch.setattr("sparsefs.harness._data.load", lambda *a, **k: ds)
    spec = ExperimentSpec(
        datasets=[{"path": "ids.csv", "groups": "donor"}],
        methods=[{"estimator": RecordingSelector, "params": {"log": str(log)}, "label": "rec"}],
        k=[1], cv=cv, metrics=["accuracy"], estimators=["knn"], seed=3,
    )
    res = run(spec, progress=False)
    assert res.meta["datasets"][0]["n_groups"] == 12
    fits = [e for e in read_log(log) if e["who"] == "selector"]
    n_folds = 4 if cv == 4 else 1
    assert len(fits) == n_folds
    group_of = dict(zip(ds.X[:, 0].astype(int), ds.groups))
    tested = []
    for fold in range(n_folds):
        (fit,) = [e for e in fits if e["seed"] == task_seed(3, 0, 0, fold)]
        train = {int(i) for i in fit["ids"]}
        test = set(group_of) - train
        assert {group_of[i] for i in train}.isdisjoint({group_of[i] for i in test})
        tested.append(test)
    if n_folds == 4:  # the test folds partition the rows
        assert sorted(i for t in tested for i in t) == sorted(group_of)


def test_splits_refuse_too_few_groups():
    spec = ExperimentSpec(datasets=["default"], methods=["fisher_score"], cv=5)
    y = np.tile([0, 1], 20)
    with pytest.raises(ValueError, match="3 groups cannot make 5 folds"):
        _splits(spec, y, 0, 0, 40, "x", np.repeat(["a", "b", "c", "c"], 10))


def test_generator_groups_are_used(monkeypatch):
    """make_multi_donor_counts carries its donors as Dataset.groups: folds keep donors whole."""
    seen = []

    def spy(spec, y, seed, rep, n, label="", groups=None):
        seen.append(groups)
        return _splits(spec, y, seed, rep, n, label, groups)

    monkeypatch.setattr("sparsefs.harness._runner._splits", spy)
    spec = ExperimentSpec(
        datasets=[{"generator": "make_multi_donor_counts",
                   "params": {"n_genes": 60, "n_groups": 2, "n_donors": 6,
                              "cells_per_donor": (20, 30), "n_markers": 3}}],
        methods=["fisher_score"], k=[3], cv=3, metrics=["accuracy"], estimators=["knn"],
    )
    run(spec, progress=False)
    assert seen and seen[0] is not None and set(seen[0]) == {f"donor{d}" for d in range(6)}


def test_groups_name_a_file_column_only():
    from sparsefs.harness import DataSpec, load_dataset

    with pytest.raises(ValueError, match="names a column of a data file"):
        load_dataset(DataSpec(generator="make_planted_classification", groups="donor"))


@pytest.mark.parametrize("protocol", ["regression", "survival"])
@pytest.mark.parametrize("cv", [4, {"scheme": "split", "train_size": 0.6}])
def test_outcome_folds_keep_every_group_whole(protocol, cv):
    """Continuous (group k-fold) and survival (stratified group k-fold on the event) targets:
    the test folds partition the rows and no group is on both sides of a fold."""
    from sparsefs.utils import survival_target

    rng = np.random.default_rng(1)
    n = 120
    groups = np.repeat([f"donor{g}" for g in range(12)], n // 12)
    y = (rng.normal(size=n) if protocol == "regression"
         else survival_target(rng.random(n) < 0.5, rng.exponential(5.0, size=n)))
    spec = ExperimentSpec(datasets=["default"], methods=["univariate_score"], cv=cv,
                          protocol=protocol)
    folds = _splits(spec, y, 7, 0, n, "x", groups)
    assert len(folds) == (4 if cv == 4 else 1)
    for _, train, test in folds:
        assert set(groups[train]).isdisjoint(groups[test])
    if cv == 4:
        assert sorted(np.concatenate([te for _, _, te in folds]).tolist()) == list(range(n))
