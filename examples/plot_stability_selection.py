"""
Stability selection with an error bound
=======================================

A top-50 list from one fit says nothing about how much it depends on the particular patients
in the study. :class:`~sparsefs.selection.StabilitySelector` refits a selector on many
half-samples (Meinshausen & Bühlmann 2010, complementary pairs as in Shah & Samworth 2013),
keeps the genes selected in at least a fraction :math:`\\tau` of them, and bounds the expected
number of false selections :math:`E[V]` (the PFER). The Nogueira stability index (with a 95 %
confidence interval) says how reproducible the selection is.

ALLAML from the shared data folder; a simulated microarray of the same shape stands in when it
is absent.
"""

# %%
import matplotlib.pyplot as plt

from sparsefs.datasets import fetch_asu, make_planted_classification
from sparsefs.plotting import plot_selection_frequencies, plot_stability_path
from sparsefs.selection import FisherScore, StabilitySelector

try:
    data = fetch_asu("ALLAML", download=False)
except FileNotFoundError:
    data = make_planted_classification(n_samples=72, n_features=7129, n_informative=20,
                                       n_classes=2, shift=1.0, random_state=0)

# %%
# Fit
# ---
# The base selector keeps its top 50 genes on each half-sample (:math:`q = 50`); ``pfer=1``
# asks for the smallest threshold :math:`\tau` whose bound gives :math:`E[V] \le 1`.
selector = StabilitySelector(FisherScore(n_features_to_select=50), n_resamples=50, pfer=1,
                             random_state=0).fit(data.X, data.y)
print(f"q = {selector.q_}, threshold tau = {selector.threshold_:.2f}, "
      f"bound on E[V] = {selector.pfer_bound_:.3f}")
phi = selector.stability_index_
print(f"{selector.support_.sum()} genes kept; Nogueira stability index {phi.value:.3f} "
      f"[{phi.ci_low:.3f}, {phi.ci_high:.3f}]")

# %%
# Selection frequencies
# ---------------------
# Each gene's frequency over the 50 half-samples (25 complementary pairs), against the
# threshold (left: every gene, as the stability path; right: the 25 most frequent).
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
plot_stability_path(selector, ax=axes[0])
plot_selection_frequencies(selector, top=25, feature_names=data.feature_names, ax=axes[1])
fig.tight_layout()
