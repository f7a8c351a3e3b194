"""The donor Monte Carlo (harness._donors): one trial's bookkeeping (fast) and the guarantees
over seeded data sets (slow).

Independent reference for the bookkeeping: the selections recomputed directly from the
estimators and scanpy on the same data set. The slow test is the reduced version of
``benchmarks/bench_donors.py``: the FDR / PFER guarantees themselves, as scikit-learn's
``SelectFdr`` Monte-Carlo test.
"""

import warnings

import numpy as np
import pytest

from sparsefs.datasets import make_multi_donor_counts
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.harness._donors import donor_error_control_trial, donor_monte_carlo
from sparsefs.selection import ErrorControlSelector


def test_trial_counts_match_the_estimators():
    data = make_multi_donor_counts(n_genes=300, n_groups=2, design="nested", n_donors=10,
                                   cells_per_donor=(40, 100), n_markers=10, log_fc=2.5,
                                   random_state=0)
    procs = ("cell_f", "donor_f", "donor_per_group", "stability_donor")
    out = donor_error_control_trial(data, q=0.1, procedures=procs, n_resamples=10)
    assert set(out) == set(procs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoFeatureSelectedWarning)
        donor = ErrorControlSelector(level=0.1).fit(data.X, data.y, groups=data.donors)
    sel = donor.support_
    assert out["donor_f"]["n_selected"] == sel.sum()
    assert out["donor_f"]["n_false"] == (sel & ~data.support).sum()
    assert out["donor_f"]["power"] == pytest.approx((sel & data.support).sum() / 20)
    assert out["donor_f"]["fdp"] == pytest.approx(
        out["donor_f"]["n_false"] / max(1, out["donor_f"]["n_selected"]))
    assert out["cell_f"]["fdp"] > out["donor_f"]["fdp"]
    assert out["stability_donor"]["bound"] > 0 and "q" in out["stability_donor"]
    with pytest.raises(ValueError, match="unknown procedure"):
        donor_error_control_trial(data, procedures=("nope",))


def test_trial_scanpy_counts():
    sc = pytest.importorskip("scanpy")
    data = make_multi_donor_counts(n_genes=200, n_groups=3, design="crossed", n_donors=4,
                                   cells_per_donor=(40, 80), n_markers=5, random_state=1)
    out = donor_error_control_trial(data, procedures=("scanpy_ttest",))
    adata = data.to_anndata()
    sc.tl.rank_genes_groups(adata, "group", method="t-test", n_genes=adata.n_vars)
    fdp = []
    for g in data.markers:
        df = sc.get.rank_genes_groups_df(adata, group=g)
        hit = np.isin(data.feature_names, df.loc[df["pvals_adj"] <= 0.1, "names"])
        fdp.append((hit & ~data.support).sum() / max(1, hit.sum()))
    assert out["scanpy_ttest"]["fdp"] == pytest.approx(np.mean(fdp))


@pytest.mark.slow
@pytest.mark.parametrize("design", ["nested", "crossed"])
def test_donor_level_error_control_monte_carlo(design):
    """20 data sets, 4 donors per class, q = 0.1 (about 1-2 minutes): the donor-level BH holds
    its FDR (mean FDP <= q + 2 SE) and donor-level stability its PFER bound (mean false
    selections <= bound), where the cell-level F test's FDP is far above q."""
    procs = ("cell_f", "donor_f", "donor_per_group", "stability_donor")
    summary, _ = donor_monte_carlo(design, 20, 4, q=0.1, procedures=procs, n_genes=1000,
                                   n_markers=15, log_fc=2.0, donor_sd=0.5)
    rows = {r["procedure"]: r for r in summary}
    for proc in ("donor_f", "donor_per_group"):
        assert rows[proc]["mean_fdp"] <= 0.1 + 2 * rows[proc]["se_fdp"], rows[proc]
    assert rows["stability_donor"]["mean_false"] <= rows["stability_donor"]["bound"]
    assert rows["cell_f"]["mean_fdp"] > 0.5
    assert rows["donor_f"]["power"] > 0.02  # not vacuous: it finds markers
