"""
Selection with a false discovery rate guarantee
===============================================

"Which of these features would I be wrong about?" :class:`~sparsefs.selection.ErrorControlSelector`
computes a p-value per feature and keeps those rejected by Benjamini-Hochberg (false discovery
rate), Benjamini-Yekutieli, Holm or Bonferroni (family-wise error rate);
:class:`~sparsefs.selection.KnockoffSelector` controls the FDR of the conditional question
with model-X knockoffs, without p-values.

On simulated data the truth is known, so the false discovery proportion of each selection can
be counted: 2000 features, 20 of them shifted between three classes, 100 samples.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sparsefs.datasets import make_planted_classification
from sparsefs.selection import ErrorControlSelector, KnockoffSelector

data = make_planted_classification(n_samples=100, n_features=2000, n_informative=20,
                                   n_classes=3, shift=1.0, random_state=0)
truth = data.support


def report(name, support):
    kept = int(support.sum())
    false = int((support & ~truth).sum())
    fdp = false / max(kept, 1)
    print(f"{name:<34} kept {kept:3d}, false {false:2d} (FDP {fdp:.2f}), "
          f"found {int((support & truth).sum()):2d} of {int(truth.sum())}")


# %%
# p-values and multiple testing
# -----------------------------
# The F test per feature (``pvalues="auto"``), then each procedure at level 0.1.
for method in ["bh", "by", "holm", "bonferroni"]:
    sel = ErrorControlSelector(method=method, level=0.1).fit(data.X, data.y)
    report(f"ErrorControlSelector({method!r})", sel.support_)

bh = ErrorControlSelector(method="bh", level=0.1).fit(data.X, data.y)

# %%
# Model-X knockoffs
# -----------------
# Built for p >> n: low-rank Gaussian knockoffs, a lasso statistic, the knockoff+ threshold.
knock = KnockoffSelector(fdr=0.1, random_state=0).fit(data.X, data.y)
report("KnockoffSelector(fdr=0.1)", knock.support_)

# %%
# The Benjamini-Hochberg line
# ---------------------------
# BH keeps the features whose sorted p-values fall below the line :math:`i \alpha / m`.
m = data.X.shape[1]
order = np.argsort(bh.pvalues_)
rank = np.arange(1, m + 1)
fig, ax = plt.subplots(figsize=(6, 4))
shown = 60
colors = np.where(truth[order[:shown]], "tab:blue", "tab:red")
ax.scatter(rank[:shown], bh.pvalues_[order[:shown]], c=colors, s=14)
ax.plot(rank[:shown], 0.1 * rank[:shown] / m, "k--", label=r"$i\,\alpha/m$, $\alpha = 0.1$")
ax.set(yscale="log", xlabel="rank of the p-value", ylabel="p-value",
       title="60 smallest p-values (blue: truly informative, red: noise)")
ax.legend()
