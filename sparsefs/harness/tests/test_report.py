"""Reports, paper comparisons, reproduction discovery and running."""

import numpy as np
import pytest

from sparsefs.harness import (
    ExperimentSpec,
    PaperTable,
    PaperValue,
    ReproductionSpec,
    find_config,
    list_reproductions,
    markdown_report,
    paper_comparison,
    reproduce,
    run,
    run_hooks,
)

PLANTED = {"generator": "make_planted_classification",
           "params": {"n_samples": 45, "n_features": 30, "n_informative": 4, "n_classes": 3}}


@pytest.fixture(scope="module")
def results():
    spec = ExperimentSpec(
        name="toy", datasets=[PLANTED, {**PLANTED, "label": "other"}],
        methods=["fisher_score", "all"], k=[1, 3, 6], cv=3, estimators=["svm", "nb"],
        metrics=["accuracy", "f1_macro"], report={"k_max": 3})
    return run(spec, progress=False)


def test_markdown_report_sections(results):
    text = markdown_report(results, title="Toy report", command="sparsefs compare x --out y",
                           figures={"toy": [("a curve", "curve.png")]})
    assert text.startswith("# Toy report\n")
    for needle in ("sparsefs compare x --out y", "## Experiment `toy` (supervised protocol)",
                   "### Data sets", "### Methods", "### Best accuracy over k, k ≤ 3",
                   "### Mean accuracy over k", "### Other metrics", "f1_macro",
                   "### Selection", "relevant kept", "### Ranks (Friedman test",
                   "Nemenyi critical difference", "![a curve](curve.png)",
                   "spec hash", "load average", "**ours**"):
        assert needle in text, needle
    # the all-features baseline (k = 30) stays in a k <= 3 table
    line = next(ln for ln in text.splitlines() if ln.startswith("| planted_classification | svm"))
    assert "(30)" in line


def test_markdown_report_flags_leaky_and_quick():
    spec = ExperimentSpec(datasets=[PLANTED], methods=["fisher_score"], k=[2], cv=3,
                          estimators=["nb"], preprocessing=["zscore"],
                          preprocessing_scope="global")
    text = markdown_report(run(spec, progress=False), title="t", quick=True)
    assert "LEAKY" in text and "Quick run" in text
    assert "needs at least 2 data sets" in text


def test_paper_comparison_scales_and_matches(results):
    table = PaperTable(id="Table 1", source="src", metric="accuracy", estimator="svm",
                       k_max=3, scale=100, values=(
                           PaperValue("planted_classification", "fisher_score", 90.0, 0.05, 3),
                           PaperValue("missing", "fisher_score", 50.0)))
    comp = paper_comparison(table, results)
    row = comp.iloc[0]
    assert row["ours"] == pytest.approx(100 * _best(results, "planted_classification"))
    assert row["difference"] == pytest.approx(row["ours"] - 90.0)
    assert row["ours_k"] <= 3
    assert np.isnan(comp.iloc[1]["ours"])
    at_k = PaperTable(id="T", source="s", metric="accuracy", estimator="svm", statistic="at_k",
                      k=6, values=(PaperValue("other", "fisher_score", 0.5),))
    assert paper_comparison(at_k, results).iloc[0]["ours_k"] == 6
    mean = PaperTable(id="T", source="s", metric="accuracy", estimator="svm",
                      statistic="mean_over_k", values=(PaperValue("other", "fisher_score", 0.5),))
    assert np.isfinite(paper_comparison(mean, results).iloc[0]["ours"])


def _best(results, dataset):
    from sparsefs.harness import best_over_k

    b = best_over_k(results, "accuracy", "svm", k_max=3)
    return b[(b["dataset"] == dataset) & (b["method"] == "fisher_score")]["value"].iloc[0]


CONFIG = """
[reproduction]
title = "Toy paper"
reference = "Doe et al., Journal of Toys, 2020"
hooks = ["sparsefs.harness.tests._hook:section"]

[[experiments]]
name = "main"
k = "1:12"
cv = 4
estimators = ["svm", "nb"]
metrics = ["accuracy"]
[[experiments.datasets]]
generator = "make_planted_classification"
params = {n_samples = 40, n_features = 25, n_classes = 2}
label = "planted"
[[experiments.methods]]
stem = "fisher_score"
label = "Fisher"
[experiments.quick]
k = [2, 4]
estimators = ["nb"]

[[paper.tables]]
id = "Table 3"
source = "Doe et al. 2020, Table 3 (NB accuracy, best over k)"
metric = "accuracy"
estimator = "nb"
scale = 100
values = [{dataset = "planted", method = "Fisher", value = 88.8, sd = 0.03, k = 4}]

[[paper.claims]]
text = "Fisher finds the informative genes."
source = "Doe et al. 2020, section 4"
verdict = "not attempted"
why = "no gene list in the toy data."
"""


@pytest.fixture
def config_dir(tmp_path):
    d = tmp_path / "configs"
    d.mkdir()
    (d / "toy_paper.toml").write_text(CONFIG)
    return d


def test_find_and_list_configs(config_dir, monkeypatch):
    assert find_config("toy_paper", config_dir) == config_dir / "toy_paper.toml"
    assert find_config(str(config_dir / "toy_paper.toml")) == config_dir / "toy_paper.toml"
    assert "toy_paper" in list_reproductions(config_dir)
    monkeypatch.setenv("SPARSEFS_CONFIGS", str(config_dir))
    assert find_config("toy_paper") == config_dir / "toy_paper.toml"
    with pytest.raises(FileNotFoundError, match=r"available: .*toy_paper"):
        find_config("nope", config_dir)


def test_reproduce_quick_with_paper_values_and_hooks(config_dir, tmp_path):
    repro = reproduce("toy_paper", quick=True, config_dir=config_dir, progress=False)
    assert repro.quick and len(repro.results) == 1
    t = repro.results[0].table
    assert set(t["k"]) == {2, 4} and set(t["fold"]) == {0, 1, 2}
    assert set(repro.combined_table()["experiment"]) == {"main"}
    sections = run_hooks(repro, tmp_path)
    assert sections and "rows seen by the hook" in sections[0]
    assert (tmp_path / "hook.txt").read_text() == "called"
    text = markdown_report(repro.results, title="Repro", reproduction=repro.spec, quick=True,
                           extra_sections=sections)
    assert "Paper: Doe et al., Journal of Toys, 2020" in text
    assert "## The paper's numbers beside ours" in text
    assert "| data set | method | paper (Table 3) | ours (accuracy, `nb` best over k, ×100)" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| planted | Fisher |"))
    assert "88.80 ± 0.03 (4)" in row
    assert ("| 1 | Fisher finds the informative genes. *(Doe et al. 2020, section 4)* | — | — | "
            "**not attempted** | no gene list in the toy data. |") in text
    assert "## Hook section" in text


def test_reproduction_without_paper_values_says_ours(tmp_path):
    spec = ReproductionSpec.from_dict(
        {"reproduction": {"title": "x"}, "experiments": [
            {"datasets": [PLANTED], "methods": ["fisher_score"], "k": [2], "cv": 3,
             "estimators": ["nb"]}]}, stem="x")
    repro = reproduce(spec, progress=False)
    text = markdown_report(repro.results, title="x", reproduction=repro.spec)
    assert "every number in this report is ours" in text


def test_report_words_follow_the_protocol():
    # Clustering methods use their own rule: the report must not print the (unused) k grid,
    # and the ± is over redrawn repetitions, not folds. Unsupervised: over k-means runs.
    from sparsefs.harness._report import _best_caption, _spread_words, _uses_k_grid

    own = {"methods": [{"stem": "sparse_kmeans"}, {"estimator": "x:KMeans", "mode": "all"}],
           "cv": {"n_repeats": 3}, "k": [1, 2]}
    assert not _uses_k_grid(own, "clustering")
    assert _spread_words(own, "clustering") == "repetitions"
    assert "own number of features" in _best_caption(own, "clustering")
    unsup = {"methods": [{"stem": "laplacian_score"}], "n_runs": 20, "cv": {"n_repeats": 1}}
    assert _uses_k_grid(unsup, "unsupervised")
    assert _spread_words(unsup, "unsupervised") == "20 k-means runs"
    assert "folds" not in _best_caption(unsup, "unsupervised")
    assert _spread_words({"methods": []}, "supervised") == "folds"
