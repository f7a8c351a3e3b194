"""
Select genes on a microarray
============================

ALLAML (Golub et al., Science 1999): 72 leukaemia patients, 7129 genes, two classes (ALL and
AML). With 100 times more genes than patients, which genes separate the classes, and how many
does a classifier need?

The data come from the shared data folder (``SPARSEFS_DATA``, see :doc:`/datasets`); where it
is absent, a simulated microarray of the same shape with 20 informative genes stands in.
"""

# %%
# Load the data
# -------------
import numpy as np

from sparsefs.datasets import fetch_asu, make_planted_classification

try:
    data = fetch_asu("ALLAML", download=False)
except FileNotFoundError:
    data = make_planted_classification(n_samples=72, n_features=7129, n_informative=20,
                                       n_classes=2, shift=1.0, random_state=0)
X, y = data.X, data.y
classes, counts = np.unique(y, return_counts=True)
print(data.name, X.shape, "samples per class:", dict(zip(classes.tolist(), counts.tolist())))

# %%
# Rank the genes
# --------------
# :class:`~sparsefs.selection.FisherScore` scores each gene by its between-class over its
# within-class scatter (rank-identical to the ANOVA F test). Without ``n_features_to_select``
# it keeps the genes that pass the Benjamini-Hochberg FDR rule at 5 %.
from sparsefs.plotting import plot_feature_scores
from sparsefs.selection import FisherScore
from sparsefs.utils import scores_frame

fdr_rule = FisherScore().fit(X, y)
print(f"{fdr_rule.n_features_to_select_} genes pass the FDR rule at 5 %")

selector = FisherScore(n_features_to_select=50).fit(X, y)
print(scores_frame(selector, data.feature_names).head(10).to_string(index=False))
plot_feature_scores(selector.scores_, support=selector.support_, top=100)

# %%
# How many genes does a classifier need?
# --------------------------------------
# The selection is a step of the pipeline, so cross-validation refits it inside every training
# fold: the test folds never inform which genes are kept.
import matplotlib.pyplot as plt
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
ks = [1, 2, 5, 10, 20, 50, 100, 200]
accuracy = [
    cross_val_score(make_pipeline(FisherScore(n_features_to_select=k), StandardScaler(),
                                  LinearSVC()), X, y, cv=cv).mean()
    for k in ks
]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogx(ks, accuracy, marker="o")
ax.set(xlabel="genes kept (Fisher score, top k)", ylabel="5-fold CV accuracy",
       title=f"{data.name}: linear SVM on the top-k genes")
ax.grid(alpha=0.3)
for k, acc in zip(ks, accuracy):
    print(f"k = {k:4d}: accuracy {acc:.3f}")
