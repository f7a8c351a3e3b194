"""
Sparse centers as a classifier
==============================

:class:`~sparsefs.classification.SparseCenterClassifier` (Calafiore & Fracastoro, IEEE TNNLS
2022) is a nearest-center classifier whose class centers differ on exactly :math:`k` features:
it selects features while it learns, and the choice of the :math:`k` features is exact (by
the per-feature gain in the objective). :class:`~sparsefs.classification.SparseCenterClassifierCV`
picks :math:`k` by stratified cross-validation.

The embedded default data: scikit-learn's wine data (178 samples, 3 cultivars, 13 real
features) hidden at random positions among 487 noise features.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

from sparsefs.classification import SparseCenterClassifier, SparseCenterClassifierCV
from sparsefs.datasets import load_default
from sparsefs.plotting import plot_cv_curve

data = load_default()
X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, test_size=0.3,
                                                    stratify=data.y, random_state=0)

# %%
# A fixed number of features
# --------------------------
clf = SparseCenterClassifier(n_features_to_select=10, standardize=True).fit(X_train, y_train)
print(f"test accuracy with 10 features: {clf.score(X_test, y_test):.3f}")
print(f"real features among the 10: {(clf.support_ & data.support).sum()}")

# %%
# k by cross-validation
# ---------------------
# One fit per fold covers every k: the ranking of the features is nested in k.
cv = SparseCenterClassifierCV(n_features_grid=[1, 2, 3, 5, 8, 10, 13, 20, 30, 50, 100, 500],
                              standardize=True, random_state=0).fit(X_train, y_train)
res = cv.cv_results_
print(f"chosen k = {cv.best_n_features_}, test accuracy {cv.score(X_test, y_test):.3f}")
print(f"real features among them: {(cv.support_ & data.support).sum()} of {cv.support_.sum()}")
fig, ax = plt.subplots(figsize=(6, 3.5))
plot_cv_curve(res["n_features"], 1 - res["mean_test_score"], res["std_test_score"],
              chosen_k=cv.best_n_features_, ylabel="CV error", ax=ax)
ax.set_xscale("log")

# %%
# The centers on the selected features
# ------------------------------------
# Away from the support every class shares one center; on it, each class has its own.
import numpy as np

cols = np.flatnonzero(clf.support_)
fig, ax = plt.subplots(figsize=(6, 3))
im = ax.imshow(clf.centers_[:, cols], aspect="auto", cmap="RdBu_r")
ax.set(xticks=range(len(cols)), xticklabels=[data.feature_names[j] for j in cols],
       yticks=range(len(clf.classes_)), yticklabels=[f"class {c}" for c in clf.classes_],
       title="class centers on the 10 selected features (standardised)")
ax.tick_params(axis="x", rotation=60)
fig.colorbar(im, ax=ax)
fig.tight_layout()
