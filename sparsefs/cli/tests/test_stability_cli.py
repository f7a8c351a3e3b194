"""``sparsefs select --stability [N]``: frequencies beside the method's scores and ranks.

Independent reference: the library (a StabilitySelector with the same seed and settings, and
the method fitted on all the data) computed in the test.
"""

import json

import numpy as np
import pandas as pd
import pytest

from sparsefs.cli import main
from sparsefs.cli.tests.conftest import write_expression_csv
from sparsefs.selection import FisherScore, StabilitySelector


@pytest.fixture
def csv_file(tmp_path):
    return write_expression_csv(tmp_path, 20, 15, {7: 3.0, 2: -2.0})


def test_select_stability_writes_frequencies_beside_scores(csv_file, tmp_path, capsys):
    path, X, y = csv_file
    out = tmp_path / "genes.csv"
    code = main(["select", str(path), "-t", "diagnosis", "-m", "fisher_score", "-k", "3",
                 "--stability", "20", "--seed", "4", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    assert list(table.columns) == ["feature", "index", "score", "rank", "selected",
                                   "frequency", "stable"]
    # scores, ranks, selection: the method on all the data
    full = FisherScore(n_features_to_select=3).fit(X, y)
    by_index = table.set_index("index").sort_index()
    np.testing.assert_allclose(by_index["score"], full.scores_)
    np.testing.assert_array_equal(by_index["selected"], full.support_)
    # frequencies: a StabilitySelector with the same seed (labels sorted as the CLI reads them)
    labels = np.unique(np.where(y == 1, "tumour", "normal"), return_inverse=True)[1]
    sel = StabilitySelector(FisherScore(n_features_to_select=3), n_resamples=20,
                            random_state=4).fit(X, labels)
    np.testing.assert_allclose(by_index["frequency"], sel.frequencies_)
    np.testing.assert_array_equal(by_index["stable"], sel.support_)
    assert set(table.loc[table["stable"], "feature"]) >= {"gene7", "gene2"}
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["stability"]["n_resamples"] == 20 and meta["stability"]["threshold"] == 0.6
    assert meta["n_selected"] == int(sel.support_.sum())


def test_select_stability_default_count_pfer_and_plot(csv_file, tmp_path, capsys):
    path, _, _ = csv_file
    out, fig = tmp_path / "g.json", tmp_path / "path.png"
    assert main(["select", str(path), "-t", "diagnosis", "-m", "fisher_score", "-k", "2",
                 "--stability", "--pfer", "1", "--stability-plot", str(fig),
                 "--out", str(out)]) == 0, capsys.readouterr().err
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["stability"]["n_resamples"] == 50 and meta["stability"]["pfer"] == 1
    assert meta["stability"]["pfer_bound"] <= 1
    assert fig.exists() and fig.stat().st_size > 1000


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [(["--stability", "7"], "even"),
     (["--pfer", "1"], "needs --stability"),
     (["--stability", "--pfer", "0"], "number > 0")],
)
def test_select_stability_errors(csv_file, tmp_path, capsys, extra, pattern):
    path, _, _ = csv_file
    argv = ["select", str(path), "-t", "diagnosis", "-m", "fisher_score", "-k", "2",
            "--out", str(tmp_path / "x.csv"), *extra]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    assert code != 0
    assert pattern in capsys.readouterr().err


def test_compare_stability_flag_adds_section_and_figure(tmp_path, capsys):
    out = tmp_path / "cmp"
    code = main(["compare", "default", "--methods", "fisher_score,relieff", "--k", "5",
                 "--cv", "3", "--estimators", "nb", "--metrics", "accuracy", "--stability",
                 "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    report = (out / "report.md").read_text()
    assert "### Stability across folds" in report and "--stability" in report
    assert "fisher_score" in report.split("### Stability across folds", 1)[1]
    assert (out / "stability_default.png").stat().st_size > 1000
