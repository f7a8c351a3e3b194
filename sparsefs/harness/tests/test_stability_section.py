"""The harness's stability section: Nogueira index across folds and the features chosen in
>= 80 % of the folds.

Independent references: hand-made per-fold supports (identical supports -> 1; the closed-form
example of ``sparsefs/metrics/tests/test_stability.py``, Phi = 1/3); the planted truth of an
end-to-end run.
"""

import numpy as np
import pandas as pd
import pytest

from sparsefs.datasets import make_planted_classification
from sparsefs.harness import ExperimentSpec, Results, run
from sparsefs.harness._results import SUPPORT_COLUMNS
from sparsefs.harness._stability import stability_markdown, stability_table


def _results(fold_sets, p, method="m", k=2):
    rows = []
    for fold, chosen in enumerate(fold_sets):
        for j in range(p):
            rows.append(("e", "d", method, fold, k, j, 0.0, -1, j in chosen))
    return Results(table=pd.DataFrame(), meta={}, supports=pd.DataFrame(
        rows, columns=list(SUPPORT_COLUMNS)))


def test_hand_made_fold_supports():
    same = stability_table(_results([{0, 1}, {0, 1}, {0, 1}], 4))
    assert same.loc[0, "value"] == pytest.approx(1.0)
    assert same.loc[0, "stable_features"] == [0, 1] and same.loc[0, "n_folds"] == 3
    mixed = stability_table(_results([{0, 1}, {0, 1}, {0, 2}], 4))
    assert mixed.loc[0, "value"] == pytest.approx(1 / 3)
    assert mixed.loc[0, "stable_features"] == [0]  # feature 1 in 2/3 < 80 % of the folds
    assert mixed.loc[0, "ci_low"] <= mixed.loc[0, "value"] <= mixed.loc[0, "ci_high"]
    empty = stability_table(_results([set(), set()], 3))
    assert np.isnan(empty.loc[0, "value"])
    lines = stability_markdown(_results([{0, 1}, {0, 2}, {0, 1}], 4), feature_names=list("abcd"))
    text = "\n".join(lines)
    assert "### Stability across folds" in text and "| d | m | 2 | 3 |" in text
    assert "| a |" in text or "| a" in text


def test_no_supports():
    res = Results(table=pd.DataFrame(), meta={})
    assert stability_markdown(res) == []
    with pytest.raises(ValueError, match="record_support"):
        stability_table(res)


def test_end_to_end_planted_run():
    """Five folds of a planted design: the stable features are the planted ones."""
    params = {"n_samples": 90, "n_features": 60, "n_informative": 4, "n_classes": 2,
              "shift": 2.5, "random_state": 3}
    spec = ExperimentSpec(
        datasets=[{"generator": "make_planted_classification", "params": params}],
        methods=["fisher_score"], k=[4], cv=5, estimators=["nb"], seed=0, record_support=True)
    res = run(spec, progress=False)
    table = stability_table(res)
    assert len(table) == 1 and table.loc[0, "n_folds"] == 5 and table.loc[0, "k"] == 4
    truth = np.flatnonzero(make_planted_classification(**params).support)
    assert set(table.loc[0, "stable_features"]) == set(truth)
    assert table.loc[0, "value"] > 0.8


def test_report_has_the_stability_section_when_supports_are_recorded():
    from sparsefs.harness import markdown_report

    def spec(record):
        return ExperimentSpec(
            datasets=[{"generator": "make_planted_classification",
                       "params": {"n_samples": 60, "n_features": 30, "n_informative": 3,
                                  "n_classes": 2, "shift": 2.5, "random_state": 0}}],
            methods=["fisher_score"], k=[3], cv=3, estimators=["nb"], seed=0,
            record_support=record)

    text = markdown_report(run(spec(True), progress=False), title="t")
    assert "### Stability across folds" in text and "| fisher_score | 3 | 3 |" in text
    assert "### Stability" not in markdown_report(run(spec(False), progress=False), title="t")
