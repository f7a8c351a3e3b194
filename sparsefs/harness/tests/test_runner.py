"""The runner: seeds, no leakage, protocols, modes, preprocessing, results I/O."""

import sys

import numpy as np
import pandas as pd
import pytest

from sparsefs.datasets import Dataset
from sparsefs.harness import (
    CVSpec,
    DataSpec,
    EstimatorSpec,
    ExperimentSpec,
    MissingDataError,
    Results,
    derive_seed,
    fit_method,
    load_dataset,
    run,
    task_seed,
)
from sparsefs.harness.tests._helpers import (
    RecordingClassifier,
    RecordingSelector,
    TopFisherCentroid,
    TopVarianceKMeans,
    read_log,
)

PLANTED = {"generator": "make_planted_classification",
           "params": {"n_samples": 60, "n_features": 40, "n_informative": 5, "n_classes": 3}}


def _numbers(results):
    t = results.table
    t = t[t["metric"] != "fit_time"].drop(columns="fit_time")
    return t.reset_index(drop=True)


def test_seed_derivation():
    seq = np.random.SeedSequence(entropy=3, spawn_key=(1, 2, 0))
    assert task_seed(3, 1, 2, 0) == int(seq.generate_state(1, dtype=np.uint32)[0])
    seeds = {derive_seed(0, i, j, f) for i in range(3) for j in range(3) for f in range(5)}
    assert len(seeds) == 45
    assert derive_seed(0, 1, 2) != derive_seed(1, 1, 2)


def test_same_numbers_with_one_and_two_jobs():
    spec = ExperimentSpec(
        datasets=[PLANTED, {**PLANTED, "label": "planted2", "params": {**PLANTED["params"],
                                                                       "n_features": 30}}],
        methods=["fisher_score",
                 {"estimator": "sklearn.ensemble:RandomForestClassifier",
                  "params": {"n_estimators": 5}, "label": "rf"}],
        k=[2, 5], cv=3, estimators=["tree", "knn"], seed=11,
    )
    one = run(spec, n_jobs=1, progress=False)
    two = run(spec, n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(_numbers(one), _numbers(two))
    other_seed = run(ExperimentSpec(**{**spec.__dict__, "seed": 12}), progress=False)
    assert not _numbers(one)["value"].equals(_numbers(other_seed)["value"])
    # every (data set, method, fold, k) is there once per estimator and metric
    t = one.table
    assert set(t["fold"]) == {0, 1, 2} and set(t["k"]) == {2, 5}
    assert set(t["estimator"]) == {"selection", "tree", "knn"}
    assert not t.duplicated(["dataset", "method", "fold", "run", "k", "estimator",
                             "metric"]).any()


def _id_dataset(n=30, p=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, p))
    X[:, 0] = np.arange(n) + 1000.0  # a unique row id
    return Dataset(X=X, y=y, feature_names=[f"f{j}" for j in range(p)], support=None,
                   name="ids")


def test_selection_never_sees_a_test_row(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    ds = _id_dataset()
    monkeypatch.setattr("sparsefs.harness._data.load", lambda *a, **k: ds)
    spec = ExperimentSpec(
        datasets=[{"path": "ids.csv"}],
        methods=[{"estimator": RecordingSelector, "params": {"log": str(log)}, "label": "rec"}],
        estimators=[{"name": "spy", "estimator": RecordingClassifier,
                     "params": {"log": str(log)}}],
        k=[1, 2], cv=5, metrics=["accuracy"], seed=5,
    )
    run(spec, progress=False)
    entries = read_log(log)
    fits = [e for e in entries if e["who"] == "selector"]
    assert len(fits) == 5
    all_ids = set(ds.X[:, 0])
    held_out = []
    for fold in range(5):
        sel = [e for e in fits if e["seed"] == task_seed(5, 0, 0, fold)]
        assert len(sel) == 1
        train_ids = set(sel[0]["ids"])
        spy_seed = derive_seed(5, 0, 0, fold, 1, 0)
        spy = [e for e in entries if e["who"] != "selector" and e["seed"] == spy_seed]
        assert spy, "the downstream estimator was not called"
        for e in spy:
            if e["who"] == "fit":
                assert set(e["ids"]) == train_ids
            else:  # predict: only test rows, none of them seen by the selector
                assert set(e["ids"]).isdisjoint(train_ids)
                assert set(e["ids"]) == all_ids - train_ids
        held_out.append(all_ids - train_ids)
    # the test folds partition the data
    assert sorted(i for s in held_out for i in s) == sorted(all_ids)


def test_zscore_is_fitted_on_training_rows_only(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    ds = _id_dataset(n=36, seed=1)
    monkeypatch.setattr("sparsefs.harness._data.load", lambda *a, **k: ds)
    spec = ExperimentSpec(
        datasets=[{"path": "ids.csv"}],
        methods=[{"estimator": RecordingSelector, "params": {"log": str(log)}, "label": "rec"}],
        k=[2], cv=3, estimators=["nb"], metrics=["accuracy"], preprocessing=["zscore"],
    )
    run(spec, progress=False)
    for e in read_log(log):
        # standardised with the statistics of exactly the rows the selector sees
        assert np.allclose(e["means"], 0.0, atol=1e-12)


def test_global_preprocessing_is_flagged(tmp_path):
    spec = ExperimentSpec(datasets=[PLANTED], methods=["fisher_score"], k=[3], cv=3,
                          estimators=["nb"], preprocessing=["zscore"],
                          preprocessing_scope="global")
    res = run(spec, progress=False)
    assert res.meta["leaky_preprocessing"] is True
    assert run(ExperimentSpec(**{**spec.__dict__, "preprocessing_scope": "fold"}),
               progress=False).meta["leaky_preprocessing"] is False


def test_smote_inside_the_fold():
    pytest.importorskip("imblearn")
    spec = ExperimentSpec(
        datasets=[{"generator": "make_planted_classification",
                   "params": {"n_samples": 45, "n_features": 20, "n_classes": 3}}],
        methods=["fisher_score"], k=[3], cv=3, estimators=["nb"], preprocessing=["smote"],
        metrics=["accuracy"])
    res = run(spec, progress=False)
    assert res.table["value"].notna().all()


def test_smote_missing_dependency_message(monkeypatch):
    from sparsefs.harness._protocols import smote

    monkeypatch.setitem(sys.modules, "imblearn", None)
    monkeypatch.setitem(sys.modules, "imblearn.over_sampling", None)
    with pytest.raises(ImportError, match=r'pip install "sparsefs\[smote\]"'):
        smote(np.zeros((4, 2)), np.array([0, 0, 0, 1]), 0)


def test_smote_is_imbalanced_learns_and_unit_free():
    """The harness's SMOTE is the package's one SMOTE (selection._class_specific): equal bit
    for bit to imbalanced-learn's own call, at any scale, and skipped for a lone class."""
    pytest.importorskip("imblearn")
    from imblearn.over_sampling import SMOTE

    from sparsefs.harness._protocols import smote

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 4)), np.array([0] * 20 + [1] * 10)
    ref = SMOTE(k_neighbors=5, random_state=3).fit_resample(X, y)
    got = smote(X, y, 3)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    tiny = smote(X * 2.0**-1000, y, 3)[0]
    assert np.array_equal(tiny, ref[0] * 2.0**-1000)
    lone = np.array([0] * 29 + [1])
    assert smote(X, lone, 3)[0] is X


def test_results_metadata_and_round_trip(tmp_path):
    spec = ExperimentSpec(datasets=[PLANTED], methods=["fisher_score", "all"], k=[1, 4],
                          cv=CVSpec(scheme="split", n_repeats=2, train_size=0.7),
                          estimators=["nb"], record_support=True)
    res = run(spec, progress=False)
    meta = res.meta
    assert meta["spec_hash"] == spec.spec_hash() and meta["spec"] == spec.to_dict()
    assert {"sparsefs", "numpy", "scikit-learn"} <= set(meta["versions"])
    assert {"loadavg_before", "loadavg_after", "busy_share", "wall_s"} <= set(meta["load"])
    assert meta["datasets"][0]["n_relevant"] == 5
    t = res.table
    assert list(t.columns) == ["experiment", "dataset", "method", "fold", "run", "k",
                               "estimator", "metric", "value", "fit_time"]
    assert set(t["fold"]) == {0, 1}
    # truth is known: relevant/noise counts of the selection are recorded
    sel = t[(t["estimator"] == "selection") & (t["method"] == "all features")]
    assert set(sel["metric"]) >= {"fit_time", "n_selected", "relevant_kept", "noise_kept"}
    assert sel[sel["metric"] == "noise_kept"]["value"].eq(35).all()
    # one fitted selector per fold (the all-features baseline fits nothing)
    assert res.supports is not None and len(res.supports) == 2 * 40
    for name in ("r.csv", "r.parquet", "g.csv.gz"):
        path = res.save(tmp_path / name)
        back = Results.load(path)
        pd.testing.assert_frame_equal(back.table, t, check_dtype=False)
        assert back.meta["spec_hash"] == meta["spec_hash"]
        assert back.supports is not None and len(back.supports) == len(res.supports)
    assert (tmp_path / "r.meta.json").exists()
    with pytest.raises(ValueError, match=r"\.csv, \.csv\.gz or \.parquet"):
        res.save(tmp_path / "r.xlsx")


def test_rank_and_refit_agree_for_a_nested_ranking():
    common = {"datasets": [PLANTED], "k": [1, 3, 6], "cv": 3, "estimators": ["svm"]}
    rank = run(ExperimentSpec(methods=["fisher_score"], **common), progress=False)
    refit = run(ExperimentSpec(methods=[{"stem": "fisher_score", "mode": "refit"}], **common),
                progress=False)
    pd.testing.assert_frame_equal(_numbers(rank), _numbers(refit))


def test_self_estimator_with_refit_and_own_modes():
    spec = ExperimentSpec(
        datasets=[PLANTED],
        methods=[{"estimator": TopFisherCentroid, "mode": "refit", "label": "centroid"},
                 {"estimator": TopFisherCentroid, "mode": "own", "label": "own",
                  "params": {"n_features_to_select": 4}}],
        k=[2, 5], cv=3, estimators=["self", "nb"], metrics=["accuracy", "roc_auc"],
    )
    res = run(spec, progress=False, keep_predictions=True)
    t = res.table
    own = t[t["method"] == "own"]
    assert set(own["k"]) == {0}  # the method's own rule
    n_sel = own[(own["metric"] == "n_selected")]["value"]
    assert n_sel.eq(4).all()
    acc = t[(t["estimator"] == "self") & (t["metric"] == "accuracy")]
    assert acc["value"].between(0, 1).all() and len(acc) == 3 * 2 + 3
    assert ("planted_classification", "centroid", "self", 5) in res.predictions
    y_true, scores = res.predictions[("planted_classification", "centroid", "self", 5)]
    assert y_true.shape == (60,) and scores.shape == (60, 3)


def test_self_needs_a_classifier():
    spec = ExperimentSpec(datasets=[PLANTED], methods=[{"stem": "fisher_score", "mode": "refit"}],
                          k=[2], cv=3, estimators=["self"])
    with pytest.raises(TypeError, match="no predict"):
        run(spec, progress=False)


def test_unsupervised_protocol():
    data = {"generator": "make_sparse_clusters_exp3", "params": {"design": "a"}}
    spec = ExperimentSpec(
        datasets=[data], protocol="unsupervised", n_runs=4, k=[3, 5],
        methods=[{"estimator": TopVarianceKMeans, "label": "topvar"}, "all"], cv="none")
    res = run(spec, progress=False)
    t = res.table
    km = t[t["estimator"] == "kmeans"]
    assert set(km["metric"]) == {"acc", "nmi"} and set(km["run"]) == {0, 1, 2, 3}
    assert km["value"].between(0, 1).all()
    # a supervised method cannot be scored on the rows it saw
    bad = ExperimentSpec(datasets=[data], protocol="unsupervised", methods=["fisher_score"],
                         cv="none")
    with pytest.raises(ValueError, match="supervised"):
        run(bad, progress=False)
    # ... but can with held-out rows
    ok = ExperimentSpec(datasets=[data], protocol="unsupervised", methods=["fisher_score"],
                        cv=3, k=[5], n_runs=2)
    assert len(run(ok, progress=False).table) > 0


def test_clustering_protocol_redraws_generated_data():
    data = {"generator": "make_sparse_clusters_exp3", "params": {"design": "a"}}
    spec = ExperimentSpec(
        datasets=[data], protocol="clustering", cv={"scheme": "none", "n_repeats": 3},
        preprocessing=["zscore"],
        methods=[{"estimator": TopVarianceKMeans, "label": "topvar",
                  "params": {"n_features_to_select": 5}},
                 {"estimator": "sklearn.cluster:KMeans", "mode": "all", "label": "kmeans",
                  "params": {"n_init": 5}}])
    res = run(spec, progress=False)
    t = res.table
    assert set(t["fold"]) == {0, 1, 2}
    cer = t[(t["metric"] == "cer") & (t["method"] == "topvar")]["value"].to_numpy()
    assert cer.shape == (3,) and np.all((cer >= 0) & (cer <= 1))
    kept = t[(t["metric"] == "relevant_kept") & (t["method"] == "topvar")]["value"]
    assert kept.between(0, 5).all()
    noise = t[(t["metric"] == "noise_kept") & (t["method"] == "kmeans")]["value"]
    assert noise.eq(20).all()  # plain k-means keeps every feature
    assert res.meta["datasets"][0]["redrawn"] is True
    with pytest.raises(ValueError, match="not a clusterer"):
        run(ExperimentSpec(datasets=[data], protocol="clustering", methods=["fisher_score"]),
            progress=False)


def test_missing_data_skip_or_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSEFS_DATA", str(tmp_path))
    spec = ExperimentSpec(datasets=["colon", PLANTED], methods=["fisher_score"], k=[2], cv=3,
                          estimators=["nb"], missing_data="skip")
    res = run(spec, progress=False)
    assert [s["dataset"] for s in res.meta["skipped"]] == ["colon"]
    assert set(res.table["dataset"]) == {"planted_classification"}
    with pytest.raises(MissingDataError, match="SPARSEFS_DATA"):
        run(ExperimentSpec(**{**spec.__dict__, "missing_data": "error"}), progress=False)


def test_missing_data_from_a_custom_loader_is_skipped(tmp_path, monkeypatch):
    # The sparse KOS UCI loaders raise FileNotFoundError without SPARSEFS_DATA; the runner
    # must skip them like a missing ASU set instead of failing the whole experiment.
    monkeypatch.setenv("SPARSEFS_DATA", str(tmp_path))
    blood = {"loader": "sparsefs.datasets:load_blood_transfusion"}
    spec = ExperimentSpec(datasets=[blood, PLANTED], methods=["fisher_score"], k=[2], cv=3,
                          estimators=["nb"], missing_data="skip")
    res = run(spec, progress=False)
    assert len(res.meta["skipped"]) == 1
    assert "not found" in res.meta["skipped"][0]["reason"]
    assert set(res.table["dataset"]) == {"planted_classification"}


def test_unknown_parameter_and_ranking_errors():
    spec = ExperimentSpec(datasets=[PLANTED], methods=[{"stem": "fisher_score",
                                                       "params": {"alpha": 1}}], k=[2], cv=3)
    with pytest.raises(ValueError, match="no parameter alpha"):
        run(spec, progress=False)
    spec = ExperimentSpec(datasets=[PLANTED], k=[2], cv=3, estimators=["nb"], methods=[
        {"estimator": "sklearn.neighbors:KNeighborsClassifier"}])
    with pytest.raises(TypeError, match="exposes no ranking"):
        run(spec, progress=False)


def test_load_dataset_sources(tmp_path):
    path = tmp_path / "toy.csv"
    pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [0.0, 1, 0, 1], "lab": ["x", "y", "x", "y"]}).to_csv(
        path, index=False)
    ds = load_dataset(DataSpec(path=str(path), target="lab", label="Toy"))
    assert ds.name == "Toy" and ds.X.shape == (4, 2)
    g1 = load_dataset(DataSpec(generator="make_kos_sine"), seed=1)
    g2 = load_dataset(DataSpec(generator="make_kos_sine"), seed=2)
    assert not np.array_equal(g1.X, g2.X)
    fixed = DataSpec(generator="make_kos_sine", params={"random_state": 0})
    assert np.array_equal(load_dataset(fixed, seed=1).X, load_dataset(fixed, seed=2).X)
    loader = load_dataset(DataSpec(loader="sklearn.datasets:load_iris",
                                   params={"return_X_y": True}))
    assert loader.X.shape == (150, 4) and loader.name == "load_iris"
    with pytest.raises(ValueError, match="unknown data set name"):
        load_dataset(DataSpec(name="nope"))
    with pytest.raises(ValueError, match="unknown generator"):
        load_dataset(DataSpec(generator="make_nothing"))
    with pytest.raises(ValueError, match="cannot import"):
        load_dataset(DataSpec(loader="no_such_module:f"))


def test_fit_method_on_all_rows():
    spec = ExperimentSpec(datasets=[PLANTED], methods=["fisher_score", "all"], k=[3, 7], cv=3,
                          preprocessing=["zscore"])
    ds = load_dataset(spec.datasets[0], seed=0)
    est = fit_method(spec, "fisher_score", ds, k=3)
    assert est.support_.sum() == 3
    assert fit_method(spec, 0, ds).support_.sum() == 7
    assert fit_method(spec, "all features", ds) is None


def test_progress_bar_runs(capsys):
    spec = ExperimentSpec(datasets=[PLANTED], methods=["fisher_score"], k=[2], cv=2,
                          estimators=["nb"], metrics=["accuracy"])
    run(spec, progress=True)
    assert "task" in capsys.readouterr().err
    with pytest.raises(TypeError, match="ExperimentSpec"):
        run({"datasets": []})


def test_estimator_spec_custom_downstream():
    spec = ExperimentSpec(datasets=[PLANTED], methods=["fisher_score"], k=[3], cv=3,
                          estimators=[EstimatorSpec(name="lr", estimator="sklearn.linear_model:"
                                                    "LogisticRegression", params={"C": 0.5})],
                          metrics=["accuracy", "roc_auc"])
    t = run(spec, progress=False).table
    assert set(t[t["estimator"] != "selection"]["estimator"]) == {"lr"}
    assert t[t["metric"] == "roc_auc"]["value"].between(0, 1).all()
