"""The harness for SMBA-CSFS: the paper's leaky SMOTE, its k, and one-fit-per-fold paths.

Independent references: a recording selector that logs the row ids (column 0) it is fitted
on — rows made by SMOTE carry interpolated, non-integer ids — and the harness's own per-k loop
(``refit`` without ``fit_path``) for the shared-fit path.
"""

import numpy as np
import pandas as pd
import pytest

from sparsefs.classification import ClassSpecificEnsembleClassifier
from sparsefs.datasets import Dataset
from sparsefs.harness import ExperimentSpec, run
from sparsefs.harness.tests._helpers import RecordingSelector, read_log


def _imbalanced_ids(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [24, 9, 6])
    X = rng.normal(size=(y.size, 6))
    X[:, 1] += 2.0 * y
    X[:, 0] = np.arange(y.size) + 1000.0  # a unique integer row id
    return Dataset(X=X, y=y, feature_names=[f"f{j}" for j in range(6)], support=None,
                   name="ids")


def _spec(log, scope):
    return ExperimentSpec(
        datasets=[{"path": "ids.csv"}],
        methods=[{"estimator": RecordingSelector, "params": {"log": str(log)}, "label": "rec"}],
        k=[1], cv=3, estimators=["nb"], metrics=["accuracy"], preprocessing=["smote"],
        preprocessing_scope=scope, smote_k_neighbors="smallest", seed=3,
    )


def test_global_smote_changes_the_rows_the_selection_and_the_tests_see(tmp_path, monkeypatch):
    pytest.importorskip("imblearn")
    ds = _imbalanced_ids()
    monkeypatch.setattr("sparsefs.harness._data.load", lambda *a, **k: ds)
    original = set(ds.X[:, 0])

    log_fold = tmp_path / "fold.jsonl"
    leak_free = run(_spec(log_fold, "fold"), progress=False)
    log_global = tmp_path / "global.jsonl"
    leaky = run(_spec(log_global, "global"), progress=False)
    assert leaky.meta["leaky_preprocessing"] and not leak_free.meta["leaky_preprocessing"]

    # leak-free: SMOTE runs on the training rows only, so the test rows are original rows;
    # every fold tests 1/3 of the 39 original rows
    fold_fits = read_log(log_fold)
    assert len(fold_fits) == 3
    seen_originals = [set(e["ids"]) & original for e in fold_fits]
    # each original row is held out exactly once: missing from exactly one fold's selection
    for rid in original:
        assert sum(rid not in s for s in seen_originals) == 1
    # global: SMOTE first (24 rows per class = 72), then the split: the folds are drawn from
    # the balanced data, so synthetic rows are held out and the selector sees more rows
    global_fits = read_log(log_global)
    n_seen = sorted(len(e["ids"]) for e in global_fits)
    assert sum(n_seen) == 2 * 72  # each of the 72 rows is a training row in 2 of 3 folds
    synthetic = [set(e["ids"]) - original for e in global_fits]
    assert all(s for s in synthetic)
    # a synthetic row held out in one fold has its originals' neighbours in training: the
    # held-out rows are not all original rows any more
    all_seen = set().union(*(set(e["ids"]) for e in global_fits))
    assert len(all_seen - original) == 72 - 39


def test_smote_k_neighbors_option():
    base = {"datasets": ["default"], "methods": ["fisher_score"], "k": [2], "cv": 3,
            "preprocessing": ["smote"]}
    plain = ExperimentSpec(**base)
    assert "smote_k_neighbors" not in plain.to_dict()  # old hashes unchanged
    paper = ExperimentSpec(**base, smote_k_neighbors="smallest")
    assert paper.to_dict()["smote_k_neighbors"] == "smallest"
    assert paper.spec_hash() != plain.spec_hash()
    for bad in (0, "all", True):
        with pytest.raises(ValueError, match="smote_k_neighbors"):
            ExperimentSpec(**base, smote_k_neighbors=bad)


def test_smallest_k_is_passed_to_smote(monkeypatch):
    imblearn = pytest.importorskip("imblearn.over_sampling")
    from sparsefs.harness._protocols import smote

    seen = []

    class Spy(imblearn.SMOTE):
        def __init__(self, *, k_neighbors=5, random_state=None):
            seen.append(k_neighbors)
            super().__init__(k_neighbors=k_neighbors, random_state=random_state)

    monkeypatch.setattr(imblearn, "SMOTE", Spy)
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.repeat([0, 1], [28, 12])
    smote(X, y, 0, "smallest")
    smote(X, y, 0)
    assert seen == [11, 5]


def test_refit_mode_uses_fit_path_with_the_same_numbers(monkeypatch):
    pytest.importorskip("imblearn")
    spec = ExperimentSpec(
        datasets=[{"generator": "make_planted_classification",
                   "params": {"n_samples": 45, "n_features": 20, "n_classes": 3}}],
        methods=[{"stem": "class_specific_ensemble", "label": "GF-CSFS Fisher",
                  "params": {"selector": "fisher_score"}, "mode": "refit"}],
        k=[1, 2, 4], cv=3, estimators=["self"], metrics=["accuracy"], seed=1,
    )
    calls = []
    original = ClassSpecificEnsembleClassifier.fit_path

    def counting(self, X, y, grid):
        calls.append(list(grid))
        return original(self, X, y, grid)

    monkeypatch.setattr(ClassSpecificEnsembleClassifier, "fit_path", counting)
    fast = run(spec, progress=False)
    assert calls == [[1, 2, 4]] * 3  # one shared fit per fold
    monkeypatch.delattr(ClassSpecificEnsembleClassifier, "fit_path")
    slow = run(spec, progress=False)

    def numbers(res):
        t = res.table
        return t[t["metric"] != "fit_time"].drop(columns="fit_time").reset_index(drop=True)

    pd.testing.assert_frame_equal(numbers(fast), numbers(slow))
    acc = numbers(fast)
    assert acc[acc["metric"] == "accuracy"]["value"].mean() > 0.6


def test_report_hook_puts_both_protocols_side_by_side():
    pytest.importorskip("imblearn")
    from sparsefs.harness import Reproduction, ReproductionSpec
    from sparsefs.harness.hooks.smba_csfs import extra_sections

    data = {"generator": "make_planted_classification", "label": "planted",
            "params": {"n_samples": 40, "n_features": 15, "n_classes": 3,
                       "n_informative": 4}}
    common = {"datasets": [data], "k": [1, 3], "cv": 3, "metrics": ["accuracy"],
              "smote_k_neighbors": "smallest"}
    tfs = {**common, "methods": [{"stem": "fisher_score", "label": "Fisher"}],
           "estimators": ["svm"], "preprocessing": ["zscore", "smote"]}
    csfs = {**common, "estimators": ["self"],
            "methods": [{"stem": "class_specific_ensemble", "label": "SMBA-CSFS",
                         "params": {"selector": "fisher_score"}, "mode": "refit"}]}
    experiments = [
        ExperimentSpec(name="tfs_leak_free", **tfs),
        ExperimentSpec(name="csfs_leak_free", preprocessing=["zscore"], **csfs),
        ExperimentSpec(name="tfs_paper", preprocessing_scope="global", **tfs),
        ExperimentSpec(name="csfs_paper", preprocessing=["zscore", "smote"],
                       preprocessing_scope="global", **csfs),
    ]
    spec = ReproductionSpec(stem="t", title="t", experiments=tuple(experiments))
    repro = Reproduction(spec=spec, results=[run(e, progress=False) for e in experiments])
    text = extra_sections(repro, None)
    assert "| planted | Fisher |" in text and "| planted | SMBA-CSFS |" in text
    assert "| leak-free | planted | 3 |" in text and "| paper | planted | 3 |" in text
