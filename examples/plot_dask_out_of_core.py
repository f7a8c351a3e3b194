"""
Out of core with Dask
=====================

When X does not fit in memory, the per-feature methods of sparsefs fit a
:class:`dask.array.Array` block by block: here X is written to a Zarr store on disk and read
back lazily, in blocks of 1000 samples, and never loaded whole. The result equals the
in-memory fit. See :doc:`/dask` for clusters.
"""

# %%
import tempfile
from pathlib import Path

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np

from sparsefs.classification import SparseCenterClassifier
from sparsefs.datasets import make_planted_classification
from sparsefs.selection import FisherScore

data = make_planted_classification(n_samples=6000, n_features=500, n_informative=20,
                                   n_classes=3, shift=0.4, random_state=0)
store = Path(tempfile.mkdtemp()) / "cohort.zarr"
da.from_array(data.X, chunks=(1000, 500)).to_zarr(str(store))

X = da.from_zarr(str(store))  # lazy: 6 blocks of 1000 x 500 on disk
print(X)

# %%
# Fit on the dask array
# ---------------------
fs = FisherScore(n_features_to_select=20).fit(X, data.y)
in_memory = FisherScore(n_features_to_select=20).fit(data.X, data.y)
print("same scores as in memory:", np.allclose(fs.scores_, in_memory.scores_))
print("planted features found:", int((fs.support_ & data.support).sum()), "of 20")

clf = SparseCenterClassifier(n_features_to_select=20).fit(X, data.y)
pred = clf.predict(X[:1000])  # a lazy dask array
print(type(pred).__name__, "-> accuracy on the first block:",
      float((pred.compute() == data.y[:1000]).mean()))

# %%
# The scores, computed out of core
# --------------------------------
fig, ax = plt.subplots(figsize=(7, 3))
ax.bar(np.arange(X.shape[1]), fs.scores_, color=np.where(data.support, "tab:blue", "0.7"))
ax.set(xlabel="feature", ylabel="Fisher score",
       title="blue: the 20 planted features (Fisher scores from the Zarr store)")
