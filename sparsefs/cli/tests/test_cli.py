"""The command line, end to end through ``main(argv)``."""

import json

import numpy as np
import pandas as pd
import pytest
import scipy.io

from sparsefs.cli import main
from sparsefs.cli.tests.conftest import write_expression_csv


@pytest.fixture
def csv_file(tmp_path):
    """30 x 12 with a label column; gene7 separates the classes."""
    return write_expression_csv(tmp_path, 15, 12, {7: 3.0})[0]


def test_methods_table_and_json(capsys):
    assert main(["methods"]) == 0
    assert "FisherScore" in capsys.readouterr().out
    assert main(["methods", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert any(r["stem"] == "fisher_score" and r["family"] == "selector" for r in rows)


def test_select_csv_writes_ranked_features(csv_file, tmp_path, capsys):
    out = tmp_path / "genes.csv"
    code = main(["select", str(csv_file), "--target", "diagnosis", "-m", "fisher_score",
                 "-k", "3", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    # the base columns first; methods with p-values add pvalue / qvalue after them
    assert list(table.columns)[:5] == ["feature", "index", "score", "rank", "selected"]
    assert table.loc[0, "feature"] == "gene7" and table["selected"].sum() == 3
    assert "kept 3 of 12" in capsys.readouterr().out


def test_select_json_fraction_and_param(csv_file, tmp_path):
    out = tmp_path / "genes.json"
    assert main(["select", str(csv_file), "-t", "diagnosis", "-m", "FisherScore", "-k", "0.25",
                 "-p", "fdr=0.1", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert len(rows) == 12 and sum(r["selected"] for r in rows) == 3


def test_select_mat_file_has_labels(tmp_path):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(20, 6)), np.repeat([1, 2], 10)[:, None]
    scipy.io.savemat(tmp_path / "d.mat", {"X": X, "Y": y})
    out = tmp_path / "r.tsv"
    assert main(["select", str(tmp_path / "d.mat"), "-m", "fisher_score", "-k", "2",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out, sep="\t")
    assert table.shape[0] == 6 and list(table.columns)[:5] == ["feature", "index", "score",
                                                               "rank", "selected"]


def test_select_refuses_to_overwrite_and_force(csv_file, tmp_path, capsys):
    out = tmp_path / "genes.csv"
    out.write_text("precious\n")
    args = ["select", str(csv_file), "-t", "diagnosis", "-m", "fisher_score", "-k", "2",
            "--out", str(out)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "exists" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert out.read_text() == "precious\n"
    assert main([*args, "--force"]) == 0
    assert "feature" in out.read_text()
    assert not list(tmp_path.glob(".genes.csv.*")), "temporary file left behind"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-k", "99"], "-k 99 exceeds"),
        (["-m", "nope"], "unknown method"),
        (["-p", "alpha=1"], "no parameter alpha"),
        (["--out-ext"], None),
    ],
)
def test_select_bad_input_is_one_clear_line(csv_file, tmp_path, capsys, extra, message):
    args = ["select", str(csv_file), "-t", "diagnosis", "-m", "fisher_score",
            "--out", str(tmp_path / "o.csv")]
    if extra == ["--out-ext"]:
        args[-1] = str(tmp_path / "o.xlsx")
        message = "extension"
    else:
        args += extra
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("sparsefs: error:") and message in err and "\n" not in err


def test_select_missing_target_and_missing_file(csv_file, tmp_path, capsys):
    assert main(["select", str(csv_file), "-m", "fisher_score", "--out",
                 str(tmp_path / "o.csv")]) == 1
    assert capsys.readouterr().err.startswith("sparsefs: error:")
    assert main(["select", str(tmp_path / "absent.csv"), "-t", "y", "-m", "fisher_score",
                 "--out", str(tmp_path / "o.csv")]) == 1
    assert "absent.csv" in capsys.readouterr().err


def test_usage_error_exits_2():
    with pytest.raises(SystemExit) as exc:
        main(["select"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["select", "x.csv", "-m", "fisher_score", "-k", "many", "--out", "o.csv"])
    assert exc.value.code == 2


def test_demo_runs_on_embedded_default(capsys):
    # the full demo (every registered method) is the README's first command; here two methods
    assert main(["demo", "--no-progress", "--methods", "fisher_score,lasso"]) == 0
    out = capsys.readouterr().out
    assert "FisherScore" in out and "13/13" in out and "178 samples x 500 features" in out
    assert "LassoSelector" in out and "z-scored" in out


def test_demo_rejects_bad_k(capsys):
    with pytest.raises(SystemExit) as exc:  # a usage error, before any import or data
        main(["demo", "-k", "0", "--no-progress"])
    assert exc.value.code == 2
    assert "argument -k: 0: must be >= 1" in capsys.readouterr().err
