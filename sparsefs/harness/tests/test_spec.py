"""Experiment specs: parsing, validation, TOML, hashing, quick versions."""

import textwrap

import pytest

from sparsefs.harness import (
    CVSpec,
    DataSpec,
    EstimatorSpec,
    ExperimentSpec,
    MethodSpec,
    ReproductionSpec,
    parse_k_grid,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, (5,)),
        ("1:5", (1, 2, 3, 4, 5)),
        ("10:50:20", (10, 30, 50)),
        ("5,10, 20", (5, 10, 20)),
        ([20, "1:2", 20, 5.0], (1, 2, 5, 20)),
        ("  7 ", (7,)),
    ],
)
def test_parse_k_grid(value, expected):
    assert parse_k_grid(value) == expected


@pytest.mark.parametrize("value", ["0:3", "a:b", "1:5:0", "", [], True, "x", "1:2:3:4", -1])
def test_parse_k_grid_rejects(value):
    with pytest.raises(ValueError, match="k grid"):
        parse_k_grid(value)


def test_dataspec_needs_exactly_one_source():
    with pytest.raises(ValueError, match="exactly one"):
        DataSpec()
    with pytest.raises(ValueError, match="exactly one"):
        DataSpec(name="colon", path="x.csv")
    with pytest.raises(ValueError, match="make_"):
        DataSpec(generator="planted")


def test_dataspec_from_string(tmp_path):
    assert DataSpec.from_string("default").name == "default"
    assert DataSpec.from_string("allaml").name == "ALLAML"
    assert DataSpec.from_string("lung_small").name == "lung_discrete"
    assert DataSpec.from_string("make_kos_rings").generator == "make_kos_rings"
    f = tmp_path / "expr.csv.gz"
    assert DataSpec.from_string(str(f)).path == str(f)
    assert DataSpec.from_string(str(f)).display == "expr"
    assert DataSpec(generator="make_kos_sine").display == "kos_sine"
    assert DataSpec(name="colon", label="Colon").display == "Colon"


def test_methodspec_labels_and_modes():
    assert MethodSpec.from_value("fisher_score").display == "fisher_score"
    base = MethodSpec.from_value("all")
    assert base.display == "all features" and base.resolved_mode("supervised") == "all"
    rf = MethodSpec(estimator="sklearn.ensemble:RandomForestClassifier")
    assert rf.display == "RandomForestClassifier"
    assert rf.resolved_mode("supervised") == "rank"
    assert rf.resolved_mode("clustering") == "own"
    with pytest.raises(ValueError, match="not both"):
        MethodSpec(stem="fisher_score", estimator="a:b")
    with pytest.raises(ValueError, match="mode="):
        MethodSpec(stem="fisher_score", mode="best")
    with pytest.raises(ValueError, match="needs a stem"):
        MethodSpec(mode="rank")


def test_cvspec():
    assert CVSpec.from_value(3) == CVSpec(n_splits=3)
    assert CVSpec.from_value("none").scheme == "none"
    assert CVSpec(n_splits=5, n_repeats=2).n_folds == 10
    assert CVSpec(scheme="split", n_repeats=7).n_folds == 7
    for bad in ({"scheme": "loo"}, {"n_splits": 1}, {"train_size": 1.0}, {"n_repeats": 0}):
        with pytest.raises(ValueError, match="cv"):
            CVSpec(**bad)
    with pytest.raises(ValueError, match="unknown key"):
        CVSpec.from_value({"folds": 5})


def test_estimatorspec():
    assert EstimatorSpec.from_value("svm").name == "svm"
    with pytest.raises(ValueError, match="not built in"):
        EstimatorSpec.from_value("xgboost")
    custom = EstimatorSpec.from_value({"name": "lr", "estimator": "sklearn.linear_model:"
                                       "LogisticRegression", "params": {"C": 0.1}})
    assert custom.params == {"C": 0.1}


def test_experiment_defaults_by_protocol():
    sup = ExperimentSpec(datasets=["default"], methods=["fisher_score"])
    assert sup.cv == CVSpec() and [e.name for e in sup.estimators] == ["svm", "nb", "knn", "tree"]
    assert sup.k == tuple(range(1, 81)) and "error" not in sup.metrics
    uns = ExperimentSpec(datasets=["default"], methods=["fisher_score"],
                         protocol="unsupervised", cv=5)
    assert [e.name for e in uns.estimators] == ["kmeans"] and uns.metrics == ("acc", "nmi")
    clu = ExperimentSpec(datasets=["make_kos_rings"], methods=[
        {"estimator": "sklearn.cluster:KMeans", "mode": "all"}], protocol="clustering")
    assert clu.cv.scheme == "none" and clu.metrics == ("cer", "acc", "nmi")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"protocol": "semi"}, "protocol="),
        ({"cv": "none"}, "held-out rows"),
        ({"estimators": ["self"]}, "mode = 'refit'"),
        ({"estimators": ["kmeans"]}, "unsupervised"),
        ({"metrics": ["cer"]}, "computes"),
        ({"preprocessing": ["pca"]}, "known steps"),
        ({"preprocessing_scope": "all"}, "preprocessing_scope"),
        ({"n_runs": 0}, "n_runs"),
        ({"seed": -1}, "seed"),
        ({"missing_data": "warn"}, "missing_data"),
        ({"methods": ["fisher_score", "fisher_score"]}, "duplicate method"),
        ({"datasets": []}, "at least one data set"),
        ({"estimators": ["svm", "svm"]}, "duplicate estimator"),
        ({"quick": {"foo": 1}}, "unknown key"),
    ],
)
def test_experiment_validation(kwargs, match):
    base = {"datasets": ["default"], "methods": ["fisher_score"]}
    with pytest.raises(ValueError, match=match):
        ExperimentSpec(**{**base, **kwargs})


def test_protocol_specific_validation():
    with pytest.raises(ValueError, match="clustering protocol"):
        ExperimentSpec(datasets=["default"], methods=["fisher_score"], protocol="clustering",
                       cv=3)
    with pytest.raises(ValueError, match="SMOTE"):
        ExperimentSpec(datasets=["default"], methods=["fisher_score"], protocol="unsupervised",
                       preprocessing=["smote"])
    with pytest.raises(ValueError, match="kmeans"):
        ExperimentSpec(datasets=["default"], methods=["fisher_score"], protocol="unsupervised",
                       estimators=["svm"])


TOML = """
name = "demo"
protocol = "supervised"
k = "1:10"
cv = {scheme = "kfold", n_splits = 3}
estimators = ["svm", {name = "lr", estimator = "sklearn.linear_model:LogisticRegression"}]
preprocessing = ["zscore"]
seed = 7

[[datasets]]
name = "default"
params = {n_noise_features = 20}

[[datasets]]
path = "data/expr.csv"
target = "diagnosis"

[[methods]]
stem = "fisher_score"
label = "Fisher"

[[methods]]
label = "all features"
mode = "all"
"""


def test_from_toml_resolves_paths_and_round_trips(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(TOML)
    spec = ExperimentSpec.from_toml(path)
    assert spec.name == "demo" and spec.seed == 7 and spec.k == tuple(range(1, 11))
    assert spec.datasets[1].path == str(tmp_path / "data" / "expr.csv")
    assert [m.display for m in spec.methods] == ["Fisher", "all features"]
    again = ExperimentSpec.from_dict(spec.to_dict())
    assert again.to_dict() == spec.to_dict()
    assert again.spec_hash() == spec.spec_hash()
    from dataclasses import replace

    assert replace(spec, seed=8).spec_hash() != spec.spec_hash()


def test_hash_leaves_out_a_parameter_named_at_its_former_default():
    """Reference: the stored sparse KOS reproduction (docs/reproductions/sparse_kos/*.meta.json)
    was hashed when ``sigma2_selection="joint"`` was the default; its config now names it
    (issue #31), and the stored hashes still match. Any other value is a different run."""
    import json
    from dataclasses import replace
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    spec = ReproductionSpec.from_toml(root / "configs" / "sparse_kos.toml")
    for exp in spec.experiments:
        stored = json.loads((root / "docs" / "reproductions" / "sparse_kos"
                             / f"{exp.name}.meta.json").read_text())
        named = [m for m in exp.methods if m.params.get("sigma2_selection") == "joint"]
        assert named, exp.name  # the config names the paper's tuning
        assert exp.spec_hash() == stored["spec_hash"], exp.name
        plain = [replace(m, params={k: v for k, v in m.params.items()
                                    if k != "sigma2_selection"}) for m in exp.methods]
        assert replace(exp, methods=plain).spec_hash() == exp.spec_hash()
        other = [replace(m, params={**m.params, "sigma2_selection": "kos"})
                 if m.params.get("sigma2_selection") else m for m in exp.methods]
        assert replace(exp, methods=other).spec_hash() != exp.spec_hash()


def test_hash_leaves_out_the_paper_algorithm_named_after_the_default_moved():
    """Reference: the stored sparse KOS runs used the plain Algorithm 1, the default until the
    extrapolated loop; the config names ``acceleration = "none"`` and the stored hashes still
    match, while the new default would be a different run."""
    import json
    from dataclasses import replace
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    spec = ReproductionSpec.from_toml(root / "configs" / "sparse_kos.toml")
    for exp in spec.experiments:
        stored = json.loads((root / "docs" / "reproductions" / "sparse_kos"
                             / f"{exp.name}.meta.json").read_text())
        named = [m for m in exp.methods if m.params.get("acceleration") == "none"]
        assert named, exp.name
        assert exp.spec_hash() == stored["spec_hash"], exp.name
        other = [replace(m, params={**m.params, "acceleration": "extrapolate"})
                 if m.params.get("acceleration") else m for m in exp.methods]
        assert replace(exp, methods=other).spec_hash() != exp.spec_hash()


def test_hash_leaves_out_the_former_gap_path_of_the_sparse_kmeans_reproduction():
    """Reference: the stored sparse k-means runs (docs/reproductions/sparse_kmeans/*.meta.json)
    tuned by the former gap path; the config names ``gap_path = "restarts"`` for every tuned
    method and the stored hashes still match, while the chain path would be a different run."""
    import json
    from dataclasses import replace
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    spec = ReproductionSpec.from_toml(root / "configs" / "sparse_kmeans.toml")
    for exp in spec.experiments:
        path = root / "docs" / "reproductions" / "sparse_kmeans" / f"{exp.name}.meta.json"
        named = [m for m in exp.methods if m.params.get("gap_path") == "restarts"]
        assert named, exp.name
        if path.exists():
            assert exp.spec_hash() == json.loads(path.read_text())["spec_hash"], exp.name
        other = [replace(m, params={**m.params, "gap_path": "chains"})
                 if m.params.get("gap_path") else m for m in exp.methods]
        assert replace(exp, methods=other).spec_hash() != exp.spec_hash()


def test_every_stored_reproduction_run_matches_its_config():
    """Reference: the stored runs themselves (docs/reproductions/<stem>/<experiment>.meta.json,
    each with the hash of the spec it ran). Every experiment of every config with a stored run
    hashes to the stored value, so ``--from-results`` reports them as the config's runs; a
    renamed import path, or a parameter named at the default it had when the run was stored,
    must not break this (the SMBA-CSFS TFS runs were stored with SMBA's then default alpha =
    10, which the config now names), while any real change of an experiment does."""
    import json
    from dataclasses import replace
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    checked = 0
    for config in sorted((root / "configs").glob("*.toml")):
        spec = ReproductionSpec.from_toml(config)
        for exp in spec.experiments:
            path = root / "docs" / "reproductions" / config.stem / f"{exp.name}.meta.json"
            if not path.exists():
                continue
            assert exp.spec_hash() == json.loads(path.read_text())["spec_hash"], (
                config.stem, exp.name)
            assert replace(exp, seed=exp.seed + 1).spec_hash() != exp.spec_hash()
            checked += 1
    assert checked >= 20
    tfs = {e.name: e for e in ReproductionSpec.from_toml(
        root / "configs" / "smba_csfs.toml").experiments}["tfs_paper"]
    smba = [m for m in tfs.methods if m.stem == "smba"]
    assert smba and smba[0].params.get("alpha") == 10.0
    other = [replace(m, params={**m.params, "alpha": 2.0}) if m.stem == "smba" else m
             for m in tfs.methods]
    assert replace(tfs, methods=other).spec_hash() != tfs.spec_hash()


def test_from_toml_rejects_typos(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(TOML.replace("seed = 7", "sede = 7"))
    with pytest.raises(ValueError, match=r"unknown key.*'sede'"):
        ExperimentSpec.from_toml(path)
    path.write_text(TOML.replace('target = "diagnosis"', 'tagret = "diagnosis"'))
    with pytest.raises(ValueError, match="tagret"):
        ExperimentSpec.from_toml(path)


def test_quick_version_default_shrink():
    spec = ExperimentSpec(datasets=["default", "make_kos_rings", "make_kos_sine"],
                          methods=["fisher_score"], k="1:80", cv={"n_splits": 10, "n_repeats": 3})
    q = spec.quick_version()
    assert len(q.datasets) == 2 and len(q.k) == 4 and q.k[0] == 1 and q.k[-1] == 80
    assert q.cv.n_splits == 3 and q.cv.n_repeats == 1 and q.n_runs == 5


def test_quick_version_overrides():
    spec = ExperimentSpec(datasets=["default", "make_kos_rings", "make_kos_sine"],
                          methods=["fisher_score", "all"], k="1:80",
                          quick={"datasets": ["kos_sine"], "methods": ["fisher_score"],
                                 "k": [2, 4], "cv": {"n_splits": 2}, "estimators": ["nb"]})
    q = spec.quick_version()
    assert [d.display for d in q.datasets] == ["kos_sine"]
    assert [m.display for m in q.methods] == ["fisher_score"]
    assert q.k == (2, 4) and q.cv.n_splits == 2 and [e.name for e in q.estimators] == ["nb"]
    bad = ExperimentSpec(datasets=["default"], methods=["fisher_score"],
                         quick={"datasets": ["nope"]})
    with pytest.raises(ValueError, match="nope"):
        bad.quick_version()


REPRO = """
[reproduction]
title = "Toy"
reference = "Someone, 2020"

[[experiments]]
name = "main"
k = "1:3"
cv = 3
[[experiments.datasets]]
name = "default"
[[experiments.methods]]
stem = "fisher_score"

[[paper.tables]]
id = "Table 9"
source = "Someone 2020, Table 9"
metric = "accuracy"
estimator = "svm"
scale = 100
values = [{dataset = "default", method = "fisher_score", value = 95.5, sd = 0.02, k = 3}]

[[paper.tables]]
id = "Table 10"
source = "sidecar"
metric = "accuracy"
file = "toy_values.csv"

[[paper.claims]]
text = "It works."
source = "Section 5"
verdict = "partly"
why = "a toy."
"""


def test_reproduction_spec_from_toml(tmp_path):
    (tmp_path / "toy_values.csv").write_text("dataset,method,value,k\ndefault,fisher_score,0.9,2\n")
    path = tmp_path / "toy.toml"
    path.write_text(REPRO)
    spec = ReproductionSpec.from_toml(path)
    assert spec.stem == "toy" and spec.title == "Toy" and len(spec.experiments) == 1
    t9, t10 = spec.tables
    assert t9.values[0].value == 95.5 and t9.values[0].k == 3 and t9.scale == 100
    assert t10.values[0].k == 2 and t10.values[0].sd is None
    assert spec.claims[0].text == "It works."
    assert spec.quick_version().experiments[0].cv.n_splits == 3


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (('name = "main"', 'name = "main"\nfoo = 1'), "foo"),
        (('id = "Table 9"', 'id = "Table 9"\nexperiment = "other"'), "experiment 'other'"),
        (('metric = "accuracy"\nestimator', 'statistic = "max"\nmetric = "accuracy"\nestimator'),
         "statistic="),
        (('value = 95.5', 'valu = 95.5'), "valu"),
    ],
)
def test_reproduction_spec_errors(tmp_path, edit, match):
    (tmp_path / "toy_values.csv").write_text("dataset,method,value\ndefault,fisher_score,0.9\n")
    path = tmp_path / "toy.toml"
    path.write_text(REPRO.replace(*edit, 1))
    with pytest.raises(ValueError, match=match):
        ReproductionSpec.from_toml(path)


def test_reproduction_needs_experiments(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text(textwrap.dedent("""
        [reproduction]
        title = "x"
    """))
    with pytest.raises(ValueError, match="no \\[\\[experiments\\]\\]"):
        ReproductionSpec.from_toml(path)
