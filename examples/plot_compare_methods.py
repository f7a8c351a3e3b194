"""
Comparing methods with the harness
==================================

:mod:`sparsefs.harness` runs the papers' evaluation protocol as a declarative, seeded
experiment: every selection is fitted inside the training folds only, a downstream classifier
is trained on the top-:math:`k` features for every :math:`k`, and the results come back as one
tidy table. :mod:`sparsefs.plotting` draws them. ``sparsefs compare`` does the same from the
shell (:doc:`/harness`).

Here: four selectors on the embedded default data and on a simulated data set, a linear SVM
on the top 1..30 features, 5-fold cross-validation.
"""

# %%
from sparsefs.harness import ExperimentSpec, best_over_k, friedman_nemenyi, run, score_matrix
from sparsefs.plotting import plot_critical_difference, plot_metric_vs_k

spec = ExperimentSpec(
    datasets=["default",
              {"generator": "make_planted_classification",
               "params": {"n_samples": 120, "n_features": 300, "n_informative": 10,
                          "random_state": 0}}],
    methods=["fisher_score", "relieff", "mutual_info", "lasso", "all"],
    k="1:30", cv=5, estimators=["svm"], preprocessing=["zscore"], seed=0,
)
results = run(spec, n_jobs=1)
print(len(results.table), "rows, one per data set, method, fold, k, estimator and metric:")
print(results.table.head(3).to_string())

# %%
# Accuracy against the number of features
# ---------------------------------------
# ``all`` is the classifier on every feature (a horizontal line).
plot_metric_vs_k(results, "accuracy", estimator="svm", dataset="default")

# %%
# Best accuracy over k, per data set
# ----------------------------------
best = best_over_k(results, "accuracy", "svm")
print(best[["dataset", "method", "value", "sd", "k"]].round(3).to_string(index=False))

# %%
# Average ranks over the data sets
# --------------------------------
# The Friedman test and the Nemenyi critical difference (two data sets are far too few for a
# verdict: a real comparison uses ten or more, as ``sparsefs reproduce`` does).
ranks = friedman_nemenyi(score_matrix(best))
print(ranks.average_ranks.sort_values().round(2).to_string())
plot_critical_difference(ranks.average_ranks, ranks.critical_difference)
