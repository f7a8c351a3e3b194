"""
A selector in a scikit-learn pipeline
=====================================

Every sparsefs estimator is a scikit-learn estimator: a selector is a transformer that drops
into a :class:`~sklearn.pipeline.Pipeline`, its ``n_features_to_select`` is a parameter that
:class:`~sklearn.model_selection.GridSearchCV` can tune, and the selection is refitted inside
every training fold, so the test folds never leak into it. With
``set_output(transform="pandas")`` the selected columns keep their names.
"""

# %%
import matplotlib.pyplot as plt
import pandas as pd
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from sparsefs.datasets import load_default
from sparsefs.selection import FisherScore, ReliefF

data = load_default()
X = pd.DataFrame(data.X, columns=data.feature_names)

pipe = Pipeline([
    ("select", FisherScore()),
    ("scale", StandardScaler()),
    ("model", LinearSVC()),
])
grid = GridSearchCV(
    pipe,
    {"select": [FisherScore(), ReliefF()],
     "select__n_features_to_select": [1, 2, 3, 5, 8, 13, 20, 50]},
    cv=StratifiedKFold(5, shuffle=True, random_state=0),
).fit(X, data.y)
print("best:", grid.best_params_, f"accuracy {grid.best_score_:.3f}")

# %%
# Accuracy against the number of features
# ---------------------------------------
res = pd.DataFrame(grid.cv_results_)
res["selector"] = res["param_select"].map(lambda est: type(est).__name__)
fig, ax = plt.subplots(figsize=(6, 3.5))
for name, part in res.groupby("selector"):
    ax.errorbar(part["param_select__n_features_to_select"], part["mean_test_score"],
                part["std_test_score"], marker="o", capsize=3, label=name)
ax.set(xscale="log", xlabel="features kept", ylabel="5-fold CV accuracy",
       title="linear SVM on the selected features")
ax.legend()

# %%
# Named columns out
# -----------------
# The refitted best pipeline's selector, with pandas output: the names of the kept columns
# (the 13 real features carry the wine data's names, the noise features are ``noise_…``).
best_selector = grid.best_estimator_.named_steps["select"].set_output(transform="pandas")
print(best_selector.transform(X).columns.tolist())
print("real features kept:", int((best_selector.support_ & data.support).sum()))
