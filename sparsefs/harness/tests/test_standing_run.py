"""The standing benchmarks: configs, cells, the store (resumability), budgets, the page."""

import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score
from sklearn.neighbors import KNeighborsClassifier

from sparsefs.harness.standing import (
    ResultStore,
    StandingMethod,
    StandingSpec,
    analyse,
    cell_seed,
    compute_cell,
    load_standing_spec,
    pending_cells,
    render_page,
    run_cells,
)
from sparsefs.harness.standing._defaults import policy_decision
from sparsefs.harness.standing._microarray import _best_k, balanced_accuracy, knn_predictions
from sparsefs.harness.tests import _standing_helpers as helpers
from sparsefs.utils import list_methods

REPO = Path(__file__).resolve().parents[3]


def _tiny(tmp_path: Path | None = None) -> StandingSpec:
    import tomllib

    return StandingSpec.from_dict(tomllib.loads(helpers.TINY_MICROARRAY))


# --------------------------------------------------------------------------------------------
# configs
# --------------------------------------------------------------------------------------------


def test_configs_cover_every_registered_method_and_enough_peers():
    a = load_standing_spec("a", config_dir=REPO / "configs")
    b = load_standing_spec("b", config_dir=REPO / "configs")
    c = load_standing_spec("c", config_dir=REPO / "configs")
    # the benchmarks (a) and (b) classify: every supervised method that takes class labels
    # (univariate_score, for continuous and survival targets only, has no place in them)
    supervised = {m.stem for m in list_methods(supervision="supervised")
                  if "classification" in m.targets}
    assert len(supervised) >= 15
    unsupervised = {m.stem for m in list_methods(supervision="unsupervised")}
    assert supervised <= {m.stem for m in a.methods}
    assert supervised <= {m.stem for m in b.methods}
    assert unsupervised <= {m.stem for m in c.methods}
    assert sum(m.kind == "peer" for m in a.methods) >= 5
    assert sum(m.kind == "peer" for m in c.methods) >= 2
    scanpy = {m.params.get("method") for m in b.methods
              if m.estimator and m.estimator.endswith("ScanpyRankGenes")}
    assert scanpy == {"t-test", "wilcoxon", "logreg"}
    assert len(a.datasets) >= 8
    assert {d.half for d in a.datasets} == {"A", "B"}
    for spec in (a, b, c):
        quick = spec.quick_version()
        assert quick.is_quick and quick.datasets and quick.methods
        assert set(quick.simple) <= {m.label for m in quick.methods}


def test_spec_errors_are_loud():
    import tomllib

    data = tomllib.loads(helpers.TINY_MICROARRAY)
    with pytest.raises(ValueError, match="unknown key"):
        StandingSpec.from_dict({**data, "extra": 1})
    bad = {**data, "methods": [*data["methods"], data["methods"][0]]}
    with pytest.raises(ValueError, match="duplicate method"):
        StandingSpec.from_dict(bad)
    with pytest.raises(ValueError, match="simple"):
        StandingSpec.from_dict({**data, "standing": {**data["standing"], "simple": ["zz"]}})
    with pytest.raises(ValueError, match="kind"):
        StandingMethod(label="x", stem="fisher_score", kind="other")
    with pytest.raises(ValueError, match="quick"):
        StandingSpec.from_dict({**data, "quick": {"datasets": ["nope"]}}).quick_version()


def test_cell_hash_changes_only_with_the_cell_definition():
    spec = _tiny()
    d, m = spec.datasets[0], spec.method("fisher_score")
    h = spec.cell_hash(d, m)
    assert h == _tiny().cell_hash(d, m)
    other = replace(spec, methods=tuple(replace(x, params={"n_jobs": 1}) if x.label == "f_classif"
                                        else x for x in spec.methods))
    assert other.cell_hash(d, m) == h  # another method's change leaves this cell alone
    assert replace(spec, protocol={**spec.protocol, "inner_splits": 4}).cell_hash(d, m) != h
    assert spec.cell_hash(d, replace(m, note="a new note")) == h  # notes are not numbers
    assert cell_seed(0, "P1", "a", 0) != cell_seed(0, "P1", "b", 0) != cell_seed(1, "P1", "b", 0)


# --------------------------------------------------------------------------------------------
# pieces of the microarray cell
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3])
def test_knn_predictions_equal_scikit_learn(n_classes):
    rng = np.random.default_rng(n_classes)
    A, B = rng.standard_normal((35, 20)), rng.standard_normal((12, 20))
    ya = rng.integers(0, n_classes, 35)
    order = rng.permutation(20)
    grid = [1, 3, 8, 20]
    for k, pred in zip(grid, knn_predictions(A, ya, B, order, grid, n_classes)):
        cols = np.sort(order[:k])
        ref = KNeighborsClassifier(5).fit(A[:, cols], ya).predict(B[:, cols])
        assert (pred == ref).all(), k


def test_balanced_accuracy_and_tie_rule():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    assert balanced_accuracy(y, p) == pytest.approx(balanced_accuracy_score(y, p))
    assert _best_k([1, 2, 5], [0.8, 0.9, 0.9]) == 2
    assert _best_k([1, 2, 5], [0.9, 0.9 + 1e-12, 0.7]) == 1  # within rounding: the smaller k


def test_outer_test_rows_never_reach_the_selector():
    helpers.SEEN.clear()
    spec = replace(_tiny(), datasets=(replace(
        _tiny().datasets[0], loader="sparsefs.harness.tests._standing_helpers:with_row_ids",
        params={}),))
    method = StandingMethod(label="rec", estimator="sparsefs.harness.tests._standing_helpers:"
                            "RecordingSelector", input="raw")
    rec = compute_cell(spec, spec.datasets[0], method, single_thread=False)
    assert rec["status"] == "ok", rec["message"]
    from sparsefs.harness.standing._microarray import _splits

    y = np.unique(helpers.with_row_ids().y, return_inverse=True)[1]
    folds = _splits(y, 3, cell_seed(spec.seed, spec.datasets[0].label, "", 0))
    assert len(helpers.SEEN) == len(folds)
    for seen, (train, test) in zip(helpers.SEEN, folds):
        assert set(seen.astype(int)) == set(train) and not set(seen.astype(int)) & set(test)


def test_microarray_cell_contents():
    spec = _tiny()
    rec = compute_cell(spec, spec.datasets[0], spec.method("sparse_centers"), single_thread=False)
    assert rec["status"] == "ok", rec["message"]
    r = rec["result"]
    assert r["grid"] == [1, 3, 10] and len(r["folds"]) == 3
    for f in r["folds"]:
        assert len(f["order"]) == 10 and len(set(f["order"])) == 10
        for c in ("svm", "knn"):
            k = f[c]["k_star"]
            assert k in r["grid"]
            assert f[c]["acc"] == f[c]["outer_acc"][r["grid"].index(k)]
            # the chosen k is the best inner accuracy (ties: smallest k)
            assert k == _best_k(r["grid"], f[c]["inner"])
        assert f["own"]["k_star"] in r["grid"] and 0 <= f["own"]["acc"] <= 1


def test_raw_input_ranks_raw_data_but_classifiers_see_z_scores():
    """Independent check by invariance: the F statistic is unchanged by a per-feature affine
    map, so f_classif on the stored data (``input = "raw"``) gives the same ranking as on the
    z-scored data; with the classifiers on z-scores both ways, the two cells are identical.
    The stored features get scales from 1 to 1e4 and offsets, so that a classifier fed the
    raw values would answer differently (k-NN's distances are dominated by the largest
    scales)."""
    spec = _tiny()
    d = spec.datasets[0]
    d = replace(d, loader="sparsefs.harness.tests._standing_helpers:scaled_planted",
                params=dict(d.params))
    spec = replace(spec, datasets=(d,))
    z = StandingMethod(label="f", estimator="sparsefs.harness.peers:FClassif")
    raw = replace(z, input="raw")
    a = compute_cell(spec, d, z, single_thread=False)["result"]
    b = compute_cell(spec, d, raw, single_thread=False)["result"]
    for fa, fb in zip(a["folds"], b["folds"]):
        assert fa["order"] == fb["order"]
        for c in ("svm", "knn"):
            assert fa[c] == fb[c]
    assert spec.cell_hash(d, raw) != spec.cell_hash(d, replace(raw, input="zscore"))


# --------------------------------------------------------------------------------------------
# the store and the runner
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The tiny spec run once (in this process) into a store shared by the tests below."""
    root = tmp_path_factory.mktemp("standing")
    outcomes = run_cells(_tiny(), ResultStore(root / "microarray"), n_jobs=0)
    return root, outcomes


def test_a_second_run_computes_nothing(tiny_run, tmp_path):
    import shutil

    root, first = tiny_run
    spec = _tiny()
    assert len(first) == len(spec.datasets) * len(spec.methods)
    assert {o.status for o in first} == {"ok"}
    shutil.copytree(root / "microarray", tmp_path / "microarray")
    assert run_cells(spec, ResultStore(tmp_path / "microarray"), n_jobs=0) == []
    # one method changed: only its cells are recomputed
    changed = replace(spec, methods=tuple(
        replace(m, params={"n_features_to_select": None}) if m.label == "f_classif" else m
        for m in spec.methods))
    again = run_cells(changed, ResultStore(tmp_path / "microarray"), n_jobs=0)
    assert sorted({o.method for o in again}) == ["f_classif"] and len(again) == 3
    # stored compressed, one file per data set with every method
    store = ResultStore(tmp_path / "microarray")
    with gzip.open(store.path("P1"), "rt") as fh:
        doc = json.load(fh)
    assert doc["dataset"] == "P1" and set(doc["cells"]) == {m.label for m in spec.methods}
    # a reused store copies cells with the same hash instead of computing them
    fresh = ResultStore(tmp_path / "study")
    assert run_cells(changed, fresh, n_jobs=0, reuse=[store]) == []
    assert fresh.records("P2").keys() == store.records("P2").keys()


def test_failures_are_records_not_crashes(tmp_path):
    spec = replace(_tiny(), datasets=_tiny().datasets[:1], simple=(), methods=(
        StandingMethod(label="boom", estimator="sparsefs.harness.tests._standing_helpers:"
                       "FailingSelector"),
        StandingMethod(label="absent", estimator="sparsefs.harness.peers:FClassif",
                       package="no_such_package_here"),
        StandingMethod(label="slow", estimator="sparsefs.harness.tests._standing_helpers:"
                       "RecordingSelector", params={"burn": 0.3}, budget_s=0.2),
    ))
    store = ResultStore(tmp_path)
    out = {o.method: o.status for o in run_cells(spec, store, n_jobs=0)}
    assert out == {"boom": "error", "absent": "missing", "slow": "budget"}
    assert "always fails" in store.get("P1", "boom")["message"]
    assert "no_such_package_here" in store.get("P1", "absent")["message"]
    assert pending_cells(spec, store) == []
    assert len(pending_cells(spec, store, retry=("budget",))) == 1


def test_missing_data_skips_the_data_set(tmp_path):
    spec = replace(_tiny(), datasets=(replace(_tiny().datasets[0], loader=None,
                                              file="no_such_file.mat", params={}),))
    assert run_cells(spec, ResultStore(tmp_path), n_jobs=0) == []


@pytest.mark.slow
def test_worker_stops_a_cell_at_its_budget(tmp_path):
    spec = replace(_tiny(), datasets=_tiny().datasets[:1], simple=(), methods=(
        StandingMethod(label="busy", estimator="sparsefs.harness.tests._standing_helpers:"
                       "RecordingSelector", params={"burn": 120.0}, budget_s=3),
        StandingMethod(label="quick", estimator="sparsefs.harness.peers:FClassif"),
    ))
    store = ResultStore(tmp_path)
    out = {o.method: o for o in run_cells(spec, store, n_jobs=2)}
    # the watchdog ends the busy worker at its CPU budget (one long fit: no fold boundary)
    assert out["busy"].status == "budget"
    assert "CPU s" in store.get("P1", "busy")["message"]
    assert out["quick"].status == "ok"


# --------------------------------------------------------------------------------------------
# analysis and page
# --------------------------------------------------------------------------------------------


def test_page_from_a_tiny_stored_run(tiny_run):
    spec = _tiny()
    store = ResultStore(tiny_run[0] / "microarray")
    a = analyse(spec, store)
    svm = a.headlines[0]
    # the table is the mean over the outer folds of the stored nested accuracies
    r = store.get("P2", "fisher_score")["result"]
    assert svm.scores.loc["P2", "fisher_score"] == pytest.approx(
        np.mean([f["svm"]["acc"] for f in r["folds"]]))
    assert svm.winner in ("f_classif", "variance")
    assert set(svm.ranked) == {"fisher_score", "sparse_centers", "f_classif", "variance"}
    # Fisher's score and f_classif rank the features identically
    assert a.tables["similarity"].loc["fisher_score", "f_classif"] == pytest.approx(1.0)
    assert set(a.tables["own"].columns) == {"sparse_centers"}
    text = render_page({"microarray": a, "markers": None, "clustering": None})
    assert "## (a) tiny microarray" in text and "not run yet" in text
    assert f"the simple winner is **{svm.winner}**" in text
    assert "**fisher_score**" in text and "Friedman" in text
    assert f"{svm.scores.loc['P2', 'fisher_score']:.3f}" in text


def test_a_partly_run_data_set_is_left_out_of_the_tests_not_the_methods(tiny_run, tmp_path):
    """A resumed run stops mid data set: the tests keep every method on the data sets every
    method ran on, and show the partial one apart (rather than dropping each method not yet
    run there)."""
    import shutil

    spec = _tiny()
    shutil.copytree(tiny_run[0] / "microarray", tmp_path / "microarray")
    store = ResultStore(tmp_path / "microarray")
    doc = store._load("P3")
    del doc["cells"]["fisher_score"]
    store._cache.clear()
    with gzip.open(store.path("P3"), "wt", encoding="utf-8") as fh:
        json.dump(doc, fh)
    full = analyse(spec, ResultStore(tiny_run[0] / "microarray")).headlines[0]
    part = analyse(spec, ResultStore(tmp_path / "microarray")).headlines[0]
    assert part.left_out == {"P3": "1 of 6 cells not run yet"} and not full.left_out
    assert set(part.ranked) == set(full.ranked) and not part.excluded
    assert part.tests.n_datasets == 2 and full.tests.n_datasets == 3
    # the partial data set is still shown, with the scores of the methods run on it
    assert np.isnan(part.scores.loc["P3", "fisher_score"])
    assert part.scores.loc["P3", "f_classif"] == full.scores.loc["P3", "f_classif"]
    text = render_page({"microarray": analyse(spec, ResultStore(tmp_path / "microarray")),
                        "markers": None, "clustering": None})
    assert "P3 (1 of 6 cells not run yet)" in text


def test_cli_runs_resumes_and_rerenders(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from sparsefs.cli import main

    configs = tmp_path / "configs" / "standing"
    configs.mkdir(parents=True)
    text = helpers.TINY_MICROARRAY.replace('outer_splits = 3', 'outer_splits = 2')
    (configs / "microarray.toml").write_text(text)
    args = ["standing", "a", "--out", str(tmp_path / "docs"), "--config-dir",
            str(tmp_path / "configs"), "-j", "0", "--no-progress"]
    assert main([*args, "--no-figures"]) == 0
    assert "computed 18 cell(s) (18 ok)" in capsys.readouterr().out
    assert main([*args, "--no-figures"]) == 0
    assert "computed 0 cell(s) (nothing new)" in capsys.readouterr().out
    assert main([*args, "--from-results"]) == 0
    page = (tmp_path / "docs" / "standing.md").read_text()
    figs = sorted(p.name for p in (tmp_path / "docs" / "standing" / "figures").glob("*.png"))
    assert "microarray_cd_svm.png" in figs and "microarray_similarity.png" in figs
    assert "standing/figures/microarray_cd_svm.png" in page
    assert "sparsefs standing all --from-results" in page


def test_policy_decision_rule():
    import pandas as pd

    scores = pd.DataFrame({"cur": [0.8, 0.7, 0.6, 0.9], "new": [0.85, 0.72, 0.6, 0.88]},
                          index=["a1", "a2", "b1", "b2"])
    halves = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    dec = policy_decision(scores, halves, "cur", "new")
    assert dec.chosen_on_a and not dec.confirmed_on_b and dec.keep == "current"
    assert dec.mean_a == pytest.approx((0.75, 0.785)) and dec.wins_b == (0, 1)
    scores.loc["b2", "new"] = 0.95
    assert policy_decision(scores, halves, "cur", "new").keep == "candidate"
    scores["new"] = scores["cur"]
    assert policy_decision(scores, halves, "cur", "new").keep == "current"  # ties keep it


@pytest.mark.slow
def test_quick_standing_run_of_all_three(tmp_path, capsys):
    """`sparsefs standing all --quick`: the three reduced benchmarks end to end (under ten
    minutes on a quiet 2-core machine), then a second run computes nothing."""
    pytest.importorskip("scanpy")
    pytest.importorskip("matplotlib")
    from sparsefs.datasets._asu import shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("the shared data sets (SPARSEFS_DATA) are not available")
    from sparsefs.cli import main

    args = ["standing", "all", "--quick", "--out", str(tmp_path), "-j", "2", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    for bench in ("microarray", "markers", "clustering"):
        assert f"{bench}: computed" in out
    page = (tmp_path / "standing-quick.md").read_text()
    for title in ("## (a) Microarray", "## (b) Marker genes", "## (c) Unsupervised"):
        assert title in page
    assert "Wilcoxon signed-rank" in page and "Nemenyi" in page
    assert main([*args, "--no-figures"]) == 0
    assert capsys.readouterr().out.count("computed 0 cell(s)") == 3
