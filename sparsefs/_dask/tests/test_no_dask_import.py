"""sparsefs never imports dask unless it is given a dask collection (runs without the extra)."""

import subprocess
import sys


def test_import_sparsefs_does_not_import_dask():
    code = (
        "import sys, numpy as np\n"
        "import sparsefs, sparsefs.classification, sparsefs.selection, sparsefs.clustering\n"
        "from sparsefs.selection import FisherScore\n"
        "X = np.random.default_rng(0).standard_normal((20, 5)); y = np.arange(20) % 2\n"
        "FisherScore(2).fit(X, y)\n"
        "assert 'dask' not in sys.modules, 'dask imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_is_dask_collection_without_dask_loaded():
    from sparsefs._dask import is_dask_collection

    assert not is_dask_collection([[1.0]])
