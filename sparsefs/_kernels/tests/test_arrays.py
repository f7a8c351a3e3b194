"""The array-type dispatch (sparsefs/_kernels/arrays.py): each operation against the direct
numpy / scipy computation on every array type, the lazy registration by package, and the
estimators' routing of dask input (checked against the estimator's in-memory result)."""

import subprocess
import sys
import types

import numpy as np
import pytest
import scipy.sparse as sp

from sparsefs._kernels import arrays

DENSE = np.array([[0.0, -3.0, 0.0], [2.0, 0.5, 0.0], [-1.0, 0.0, 0.0]])
TYPES = [np.asarray, sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array]


@pytest.mark.parametrize("make", TYPES, ids=lambda f: f.__name__)
def test_operations_match_numpy_on_every_type(make):
    X = make(DENSE)
    np.testing.assert_array_equal(arrays.to_dense(X), DENSE)
    assert arrays.to_dense(X, np.float32).dtype == np.float32
    np.testing.assert_array_equal(arrays.column_max_abs(X), np.abs(DENSE).max(axis=0))
    assert not arrays.is_lazy(X)
    values = arrays.stored_values(X)
    # dense: every entry; sparse: the stored (nonzero) ones
    expected = DENSE.ravel() if isinstance(X, np.ndarray) else DENSE[DENSE != 0]
    np.testing.assert_array_equal(np.sort(np.ravel(values)), np.sort(expected))
    if not isinstance(X, np.ndarray):
        assert np.shares_memory(values, X.data)  # no copy of the stored values


def test_lists_and_float32_take_the_default():
    assert arrays.to_dense([[1, 2]]).tolist() == [[1, 2]]
    X32 = DENSE.astype(np.float32)
    assert arrays.column_max_abs(X32).dtype == np.float32  # the caller chooses the precision
    assert arrays.column_max_abs(sp.csr_array(X32)).dtype == np.float32


def test_lazy_registration_runs_once_for_its_package():
    calls = []
    mod = types.ModuleType("toypkg_arrays.sub")
    Toy = type("Toy", (), {"__module__": "toypkg_arrays.sub"})
    mod.Toy = Toy

    def hook():
        calls.append(1)
        arrays.is_lazy.register(Toy, lambda X: True)

    arrays.register_lazy("toypkg_arrays", hook)
    assert not arrays.is_lazy(np.zeros(1))  # another package: the hook waits
    assert calls == []
    assert arrays.is_lazy(Toy()) and arrays.is_lazy(Toy())
    assert calls == [1]


def test_dask_registration_without_importing_dask_early():
    code = (
        "import sys, numpy as np\n"
        "from sparsefs._kernels import arrays\n"
        "import sparsefs._dask\n"
        "assert not arrays.is_lazy(np.zeros(2)) and 'dask' not in sys.modules\n"
        "import dask.array as da\n"
        "X = da.from_array(np.arange(6.0).reshape(3, 2), chunks=2)\n"
        "assert arrays.is_lazy(X)\n"
        "m = arrays.class_moments(X, np.array([0, 1, 1]), 2, within=False)\n"
        "np.testing.assert_allclose(m.means, [[0, 1], [3, 4]])\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_estimators_route_dask_input():
    da = pytest.importorskip("dask.array")
    from sparsefs.classification import ClassSpecificEnsembleClassifier, SparseNaiveBayes
    from sparsefs.clustering import L0KMeans
    from sparsefs.datasets import make_planted_classification

    d = make_planted_classification(60, 12, 3, 2, random_state=0)
    X = np.abs(d.X)
    nb = SparseNaiveBayes(3).fit(X, d.y)
    with pytest.raises(TypeError, match=r"SparseNaiveBayes\.predict does not accept dask"):
        nb.predict(da.from_array(X, chunks=20))  # never computed into memory behind the back
    km = L0KMeans(2, n_features_to_select=3, random_state=0).fit(X)
    np.testing.assert_array_equal(km.predict(da.from_array(X, chunks=20)).compute(),
                                  km.predict(X))
    # the public method is the base's, documented by the estimator's own implementation
    assert SparseNaiveBayes.predict.__doc__ == SparseNaiveBayes._predict_in_memory.__doc__
    assert not hasattr(ClassSpecificEnsembleClassifier(), "decision_function")
