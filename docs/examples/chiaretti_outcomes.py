"""The worked example of docs/outcomes.md: relapse-free time and age on Chiaretti's ALL data.

Reads ``ALL_Chiaretti.mat`` and ``ALL_Chiaretti_pheno.csv`` from ``$SPARSEFS_DATA`` (the
project's shared data; never downloaded), prints the numbers the page quotes and writes its
figures into ``docs/outcomes/``. Run (a few minutes on two cores)::

    SPARSEFS_DATA=/path/to/shared/data python docs/examples/chiaretti_outcomes.py
"""

import time
import warnings
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")

from sparsefs.datasets import load_chiaretti
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.harness import ExperimentSpec, best_over_k, run
from sparsefs.plotting import report_figures
from sparsefs.selection import (
    ErrorControlSelector,
    LassoSelector,
    StabilitySelector,
    UnivariateScore,
    VarianceScore,
)

OUT = Path(__file__).resolve().parent.parent / "outcomes"
OUT.mkdir(exist_ok=True)
warnings.simplefilter("ignore", NoFeatureSelectedWarning)


def show(title, est, names, k=10):
    top = np.argsort(est.ranking_)[:k]
    print(f"  {title}: " + ", ".join(names[top]))


# --- 1. relapse-free time: a survival target -------------------------------------------------
rel = load_chiaretti("relapse")
names = rel.feature_names
e, t = rel.y["event"], rel.y["time"]
print(f"relapse-free time: {rel.X.shape[0]} patients x {rel.X.shape[1]} probes, "
      f"{int(e.sum())} relapses, median follow-up {np.median(t):.0f} days")

start = time.perf_counter()
cox = UnivariateScore(n_features_to_select=10).fit(rel.X, rel.y)
print(f"  Cox score tests of all probes: {time.perf_counter() - start:.2f} s; smallest p-values "
      + ", ".join(f"{p:.1e}" for p in np.sort(cox.pvalues_)[:3]))
show("top 10 by the Cox score test", cox, names)
for method in ("bh", "by", "holm"):
    ec = ErrorControlSelector(method=method).fit(rel.X, rel.y)
    print(f"  {method.upper()} at 0.05 on the Cox p-values: {int(ec.support_.sum())} probes "
          f"(smallest q-value {ec.qvalues_.min():.3f})")
start = time.perf_counter()
lasso = LassoSelector(n_features_to_select=10).fit(rel.X, rel.y)
print(f"  Cox lasso path to 10 probes: {time.perf_counter() - start:.2f} s, penalty "
      f"{lasso.alpha_:.3f} x lambda_max, {len(lasso.alphas_)} penalties fitted")
show("Cox lasso (10)", lasso, names)
start = time.perf_counter()
stab = StabilitySelector(LassoSelector(n_features_to_select=10), n_resamples=50, pfer=1.0,
                         random_state=0).fit(rel.X, rel.y)
print(f"  stability over the Cox lasso (q = 10, 25 pairs of halves stratified on the event, "
      f"PFER <= 1): {int(stab.support_.sum())} probes at threshold {stab.threshold_:.2f} "
      f"({time.perf_counter() - start:.0f} s); largest frequencies "
      + ", ".join(f"{f:.2f}" for f in np.sort(stab.frequencies_)[::-1][:5])
      + f"; stability index {stab.stability_index_.value:.2f}")
var = VarianceScore(n_features_to_select=10).fit(rel.X)
overlap = len(set(np.flatnonzero(var.support_)) & set(np.flatnonzero(cox.support_)))
print(f"  variance filter (10): {overlap} in common with the Cox top 10")

surv = ExperimentSpec(
    name="chiaretti_relapse",
    datasets=[{"loader": "sparsefs.datasets:load_chiaretti", "params": {"endpoint": "relapse"},
               "label": "ALL relapse"}],
    methods=["variance", "univariate_score", "lasso"], protocol="survival",
    k=[1, 2, 5, 10, 20, 50], cv={"scheme": "kfold", "n_splits": 5, "n_repeats": 4}, seed=0)
start = time.perf_counter()
res = run(surv)
print(f"  survival protocol (5-fold CV stratified on the event, 4 repeats; ridge Cox on the "
      f"selected probes; {time.perf_counter() - start:.0f} s): best C-index over k")
best = best_over_k(res.table, "c_index")
for _, row in best.iterrows():
    print(f"    {row['method']:>17}: {row['value']:.3f} +- {row['sd']:.3f} at k = {row['k']}")
report_figures(res, OUT, prefix="relapse_")

# --- 2. age: a continuous target --------------------------------------------------------------
age = load_chiaretti("age")
print(f"age: {age.X.shape[0]} patients, {age.y.min():.0f}-{age.y.max():.0f} years")
for test in ("f", "spearman"):
    ec = ErrorControlSelector(pvalues=test).fit(age.X, age.y)
    print(f"  BH at 0.05 on the {test} p-values: {int(ec.support_.sum())} probes")
f = UnivariateScore(n_features_to_select=10).fit(age.X, age.y)
show("top 10 by |r| with age", f, age.feature_names)
reg = ExperimentSpec(
    name="chiaretti_age",
    datasets=[{"loader": "sparsefs.datasets:load_chiaretti", "params": {"endpoint": "age"},
               "label": "ALL age"}],
    methods=["variance", "univariate_score", "lasso"], protocol="regression",
    k=[1, 2, 5, 10, 20, 50], cv={"scheme": "kfold", "n_splits": 5, "n_repeats": 4}, seed=0)
res = run(reg)
print("  regression protocol (5-fold CV x 4, ridge with LOO-tuned penalty): best R2 over k")
best = best_over_k(res.table, "r2")
for _, row in best.iterrows():
    print(f"    {row['method']:>17}: {row['value']:.3f} +- {row['sd']:.3f} at k = {row['k']}")
report_figures(res, OUT, prefix="age_")
print(f"figures in {OUT}")
