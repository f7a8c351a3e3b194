"""``sparsefs compare`` and ``sparsefs reproduce`` end to end through ``main(argv)``."""

import json
import time

import numpy as np
import pandas as pd
import pytest

from sparsefs.cli import main

pytest.importorskip("matplotlib")


@pytest.fixture(autouse=True)
def _agg():
    import matplotlib

    matplotlib.use("Agg")


def test_compare_on_the_embedded_default_writes_three_kinds_of_output(tmp_path, capsys):
    out = tmp_path / "cmp"
    start = time.perf_counter()
    code = main(["compare", "default", "--methods", "fisher_score,all", "--k", "1:6",
                 "--cv", "3", "--estimators", "svm,nb", "--out", str(out), "--no-progress"])
    elapsed = time.perf_counter() - start
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert elapsed < 60
    table = pd.read_csv(out / "results.csv")
    assert {"dataset", "method", "k", "fold", "metric", "value", "fit_time"} <= set(table.columns)
    assert set(table["method"]) == {"fisher_score", "all features"}
    meta = json.loads((out / "results.meta.json").read_text())
    assert meta["spec"]["preprocessing"] == ["zscore"] and meta["spec_hash"]
    report = (out / "report.md").read_text()
    assert "sparsefs compare default --methods fisher_score,all --k 1:6 --cv 3" in report
    assert "| default | svm |" in report
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["default_accuracy_vs_k.png", "default_roc.png", "default_scores.png"]
    for name in pngs:
        assert f"]({name})" in report
    assert "Best accuracy over k (svm)" in captured.out and "fisher_score" in captured.out


def test_compare_refuses_to_overwrite_and_force(tmp_path, capsys):
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "results.csv").write_text("precious\n")
    args = ["compare", "default", "--methods", "fisher_score", "--k", "2", "--cv", "2",
            "--estimators", "nb", "--out", str(out), "--no-figures", "--no-progress"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "exists" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert (out / "results.csv").read_text() == "precious\n"
    assert main([*args, "--force", "--parquet"]) == 0
    assert (out / "results.parquet").exists() and not list(out.glob("*.png"))


def test_compare_csv_file_unsupervised(tmp_path):
    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b", "c"], 12)
    X = rng.normal(size=(36, 8))
    X[:, :2] += 3 * np.eye(3)[np.searchsorted(["a", "b", "c"], y)][:, :2]
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(8)]).assign(kind=y)
    path = tmp_path / "expr.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "u"
    assert main(["compare", str(path), "--target", "kind", "--methods", "fisher_score",
                 "--unsupervised", "--runs", "3", "--k", "2,4", "--cv", "3", "--out", str(out),
                 "--no-progress"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert set(table["estimator"]) == {"selection", "kmeans"} and set(table["run"]) == {0, 1, 2}
    assert "(unsupervised protocol)" in (out / "report.md").read_text()


def test_compare_mat_file_with_labels_inside(tmp_path):
    import scipy.io

    rng = np.random.default_rng(2)
    y = np.repeat([1, 2], 15)
    X = rng.normal(size=(30, 10))
    X[:, 4] += 2.5 * (y == 2)
    scipy.io.savemat(tmp_path / "d.mat", {"X": X, "Y": y[:, None]})
    out = tmp_path / "m"
    assert main(["compare", str(tmp_path / "d.mat"), "--methods", "fisher_score", "--k", "1,3",
                 "--cv", "split", "--repeats", "3", "--estimators", "knn", "--out", str(out),
                 "--no-figures", "--no-progress"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert set(table["dataset"]) == {"d"} and set(table["fold"]) == {0, 1, 2}
    assert "3 random stratified splits" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--cv", "abc"], "--cv: 'abc'"),
        (["--methods", "nope"], "unknown method 'nope'"),
        (["--k", "0:3"], "k grid"),
        (["--cv", "none"], "held-out rows"),
        (["--metrics", "cer"], "computes"),
    ],
)
def test_compare_errors_are_one_line(tmp_path, capsys, extra, message):
    args = ["compare", "default", "--methods", "fisher_score", "--out", str(tmp_path / "o"),
            "--no-progress", *extra]
    try:
        code = main(args)
    except SystemExit as exc:  # a bad value of one flag is a usage error (status 2)
        code = exc.code
    err = capsys.readouterr().err
    assert message in err
    if code == 2:
        assert err.strip().splitlines()[-1].startswith("sparsefs compare: error: argument ")
    else:
        assert code == 1 and len(err.strip().splitlines()) == 1


def test_compare_needs_methods(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", "default", "--out", "x"])
    assert exc.value.code == 2
    assert "--methods" in capsys.readouterr().err


CONFIG = """
[reproduction]
title = "Toy paper"
reference = "Doe et al. 2020"

[[experiments]]
name = "main"
k = [1, 3]
cv = 3
estimators = ["nb"]
metrics = ["accuracy"]
[[experiments.datasets]]
name = "default"
params = {n_noise_features = 30}
[[experiments.methods]]
stem = "fisher_score"
label = "Fisher"

[[paper.tables]]
id = "Table 2"
source = "Doe et al. 2020, Table 2"
metric = "accuracy"
estimator = "nb"
scale = 100
values = [{dataset = "default", method = "Fisher", value = 93.0, k = 3}]
"""


def test_reproduce_writes_report_beside_paper(tmp_path, capsys):
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "toy.toml").write_text(CONFIG)
    out = tmp_path / "repro"
    assert main(["reproduce", "--list", "--config-dir", str(configs)]) == 0
    assert "toy" in capsys.readouterr().out.split()
    assert main(["reproduce", "toy", "--quick", "--config-dir", str(configs), "--out", str(out),
                 "--no-progress"]) == 0
    report = (out / "toy.md").read_text()
    assert report.startswith("# Reproduction: Toy paper (quick run)")
    assert f"sparsefs reproduce toy --quick --out {out}" in report
    assert "| data set | method | paper (Table 2) | ours (accuracy, `nb` best over k, ×100)" \
        in report
    assert "93.00 (3)" in report
    assert (out / "toy" / "main.csv.gz").exists() and (out / "toy" / "main.meta.json").exists()
    assert "](toy/main_default_accuracy_vs_k.png)" in report
    assert (out / "toy" / "main_default_accuracy_vs_k.png").exists()


def test_reproduce_errors(tmp_path, capsys):
    assert main(["reproduce", "nope", "--config-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no reproduction config 'nope'" in err and len(err.strip().splitlines()) == 1
    assert main(["reproduce"]) == 1
    assert "STEM" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_defaults_on_the_embedded_default_under_a_minute(tmp_path):
    start = time.perf_counter()
    assert main(["compare", "default", "--methods", "fisher_score,all", "--out",
                 str(tmp_path / "o"), "--no-progress"]) == 0
    assert time.perf_counter() - start < 60
