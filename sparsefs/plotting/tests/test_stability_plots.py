"""Stability plots on the Agg backend: inspect the artists, never show.

Independent reference: the fitted selector's own arrays (frequencies, path, threshold), read
back from the drawn artists.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from sklearn.feature_selection import SelectKBest, f_classif

from sparsefs.datasets import make_planted_classification
from sparsefs.metrics import nogueira_index
from sparsefs.plotting import (
    plot_selection_frequencies,
    plot_stability_index,
    plot_stability_path,
)
from sparsefs.selection import FisherScore, StabilitySelector


@pytest.fixture(scope="module")
def fitted():
    d = make_planted_classification(60, 80, 4, 2, shift=2.0, random_state=0)
    sel = StabilitySelector(FisherScore(n_features_to_select=6), n_resamples=10,
                            threshold=0.7, random_state=0).fit(d.X, d.y)
    return sel, d


def test_stability_path_draws_every_selected_feature_and_the_threshold(fitted):
    sel, _ = fitted
    _fig, ax = plt.subplots()
    plot_stability_path(sel, n_background=5, ax=ax)
    lines = [ln for ln in ax.get_lines() if ln.get_gid() == "path_selected"]
    assert len(lines) == sel.support_.sum()
    for ln, j in zip(lines, np.flatnonzero(sel.support_)):
        np.testing.assert_allclose(ln.get_ydata(), sel.frequency_path_[j])
        np.testing.assert_array_equal(ln.get_xdata(), sel.path_values_)
    others = [ln for ln in ax.get_lines() if ln.get_gid() == "path_other"]
    assert 0 < len(others) <= 5
    (thr,) = [ln for ln in ax.get_lines() if ln.get_gid() == "threshold"]
    assert thr.get_ydata()[0] == pytest.approx(0.7)
    plt.close("all")


def test_stability_path_needs_a_path():
    d = make_planted_classification(40, 30, 3, 2, random_state=1)
    sel = StabilitySelector(SelectKBest(f_classif, k=4), n_resamples=4, random_state=0)
    sel.fit(d.X, d.y)
    with pytest.raises(ValueError, match="no frequency_path_"):
        plot_stability_path(sel)
    with pytest.raises(TypeError, match="fitted StabilitySelector"):
        plot_stability_path(FisherScore())


def test_frequency_bars_are_the_top_frequencies(fitted):
    sel, _ = fitted
    _fig, ax = plt.subplots()
    plot_selection_frequencies(sel, top=7, ax=ax)
    heights = [r.get_height() for r in ax.patches]
    np.testing.assert_allclose(heights, np.sort(sel.frequencies_)[::-1][:7])
    plt.close("all")


def test_stability_index_errorbars_from_mapping_and_table(fitted):
    sel, _ = fitted
    rng = np.random.default_rng(0)
    other = nogueira_index(rng.random((10, 30)) < 0.2)
    _fig, ax = plt.subplots()
    plot_stability_index({"fisher": sel, "random": other}, ax=ax)
    (line,) = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    np.testing.assert_allclose(line.get_ydata(), [sel.stability_index_.value, other.value])
    table = pd.DataFrame({"method": ["a"], "value": [0.5], "ci_low": [0.4], "ci_high": [0.6]})
    ax2 = plot_stability_index(table, ax=plt.subplots()[1])
    assert [t.get_text() for t in ax2.get_xticklabels()] == ["a"]
    with pytest.raises(ValueError, match="lacks the columns"):
        plot_stability_index(table.drop(columns="ci_low"))
    plt.close("all")


def test_penalty_path_axis():
    from sparsefs.selection import LassoSelector

    d = make_planted_classification(60, 30, 3, 2, shift=2.0, random_state=2)
    from sparsefs.exceptions import NoFeatureSelectedWarning
    from sparsefs.utils.estimator_checks import expected_warnings

    with expected_warnings((NoFeatureSelectedWarning, "LassoSelector selected no feature")):
        sel = StabilitySelector(LassoSelector(), n_resamples=4, random_state=0,
                                path_param="alpha", path_values=[1.0, 0.3, 0.05]).fit(d.X, d.y)
    _fig, ax = plt.subplots()
    plot_stability_path(sel, ax=ax)
    assert ax.get_xlabel() == "alpha of the base estimator" and ax.get_xscale() == "log"
    assert not [ln for ln in ax.get_lines() if ln.get_gid() == "q"]
    plt.close("all")
