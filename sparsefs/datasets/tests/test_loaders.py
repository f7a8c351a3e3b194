"""Tests of the Dataset type and of ``load`` on small files written to tmp_path."""

from __future__ import annotations

import dataclasses
import gzip
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from sparsefs.datasets import SUPPORTED_EXTENSIONS, Dataset, load


@pytest.fixture
def small():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((6, 4))
    y = np.array([1, 2, 1, 2, 2, 1], dtype=np.uint8)
    return X, y


# --------------------------------------------------------------------------------------------
# Dataset
# --------------------------------------------------------------------------------------------


def test_dataset_fields_and_as_tuple(small):
    X, y = small
    ds = Dataset(X=X, y=y, feature_names=["a", "b", "c", "d"], support=None, name="toy")
    assert ds.as_tuple()[0] is X
    assert_array_equal(ds.as_tuple()[1], y)
    assert ds.feature_names.dtype.kind == "U"
    assert (ds.n_samples, ds.n_features) == (6, 4)
    assert ds.description == ""
    assert "toy" in repr(ds)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "other"
    assert not hasattr(ds, "__iter__")


def test_dataset_validates_shapes(small):
    X, y = small
    names = ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="feature_names must have shape"):
        Dataset(X=X, y=y, feature_names=names[:3], support=None, name="t")
    with pytest.raises(ValueError, match="y must have shape"):
        Dataset(X=X, y=y[:5], feature_names=names, support=None, name="t")
    with pytest.raises(ValueError, match="support must be a boolean array"):
        Dataset(X=X, y=y, feature_names=names, support=np.ones(4), name="t")
    with pytest.raises(ValueError, match="2-D"):
        Dataset(X=X[0], y=None, feature_names=names, support=None, name="t")
    with pytest.raises(TypeError, match="X must be"):
        Dataset(X=X.tolist(), y=None, feature_names=names, support=None, name="t")


# --------------------------------------------------------------------------------------------
# .mat
# --------------------------------------------------------------------------------------------


def test_mat_X_Y(tmp_path, small):
    X, y = small
    path = tmp_path / "toy.mat"
    scipy.io.savemat(path, {"X": X, "Y": y.reshape(-1, 1)})
    ds = load(path)
    assert_array_equal(ds.X, X)
    assert_array_equal(ds.y, y)
    assert ds.y.dtype == np.uint8 and ds.y.ndim == 1  # labels kept as stored
    assert list(ds.feature_names) == ["x0", "x1", "x2", "x3"]
    assert ds.support is None
    assert ds.name == "toy"


def test_mat_fea_gnd_sparse(tmp_path, small):
    X, y = small
    X[X < 0.5] = 0.0
    path = tmp_path / "deng.MAT"  # extension matching is case-insensitive
    scipy.io.savemat(path, {"fea": sp.csc_matrix(X), "gnd": y.astype(float).reshape(-1, 1)})
    ds = load(path)
    assert sp.issparse(ds.X) and ds.X.format == "csr"
    assert_array_equal(ds.X.toarray(), X)
    assert_array_equal(ds.y, y)


def test_mat_names_from_cell_array(tmp_path, small):
    X, y = small
    probes = np.empty((4, 1), dtype=object)
    probes[:, 0] = ["1000_at", "1001_at", "g3", "g4"]
    path = tmp_path / "named.mat"
    scipy.io.savemat(path, {"X": X, "Y": y, "probes": probes})
    ds = load(path)
    assert list(ds.feature_names) == ["1000_at", "1001_at", "g3", "g4"]


def test_mat_names_from_char_matrix(tmp_path, small):
    X, y = small
    path = tmp_path / "named.mat"
    names = np.array(["a", "bcd", "ef", "g"])  # saved as a space-padded char matrix
    scipy.io.savemat(path, {"X": X, "Y": y, "feature_names": names})
    assert load(path).feature_names.tolist() == ["a", "bcd", "ef", "g"]


def test_mat_transpose(tmp_path, small):
    X, y = small
    path = tmp_path / "genes_by_samples.mat"
    scipy.io.savemat(path, {"X": X.T, "Y": y.reshape(-1, 1)})
    with pytest.raises(ValueError, match="transpose=True"):
        load(path)
    ds = load(path, transpose=True)
    assert_array_equal(ds.X, X)
    assert_array_equal(ds.y, y)


def test_mat_target_variable_and_override_names(tmp_path, small):
    X, y = small
    path = tmp_path / "t.mat"
    scipy.io.savemat(path, {"X": X, "labels": y})
    assert load(path).y is None
    ds = load(path, target="labels", feature_names=["p", "q", "r", "s"])
    assert_array_equal(ds.y, y)
    assert list(ds.feature_names) == ["p", "q", "r", "s"]
    with pytest.raises(ValueError, match="target='nope' is not a variable"):
        load(path, target="nope")
    with pytest.raises(ValueError, match="feature_names has 2 entries"):
        load(path, feature_names=["a", "b"])


def test_mat_without_data_variable(tmp_path):
    path = tmp_path / "bad.mat"
    scipy.io.savemat(path, {"data": np.ones((2, 2))})
    with pytest.raises(ValueError, match="no data variable named X or fea"):
        load(path)


def _write_mat73_header(path):
    """Write the 128-byte MATLAB v7.3 header over the start of ``path``'s 512-byte userblock."""
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: test HDF5 schema 1.00 ."
    header = text.ljust(116, b" ") + b" " * 8 + b"\x00\x02" + b"IM"
    with open(path, "r+b") as f:
        f.write(header)


def test_mat73_without_h5py(tmp_path, monkeypatch):
    path = tmp_path / "v73.mat"
    path.write_bytes(b"\0" * 1024)
    _write_mat73_header(path)
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match="pip install h5py"):
        load(path)


def test_mat73_with_h5py(tmp_path, small):
    h5py = pytest.importorskip("h5py")
    X, y = small
    Xs = X.copy()
    Xs[Xs < 0.5] = 0.0
    csc = sp.csc_matrix(Xs)
    path = tmp_path / "v73.mat"
    with h5py.File(path, "w", userblock_size=512) as f:
        f["X"] = X.T  # MATLAB is column-major: HDF5 holds the transpose
        f["X"].attrs["MATLAB_class"] = np.bytes_("double")
        f["Y"] = y.reshape(1, -1).astype(float)
        f["Y"].attrs["MATLAB_class"] = np.bytes_("double")
        g = f.create_group("S")
        g.attrs["MATLAB_sparse"] = np.uint64(Xs.shape[0])
        g.attrs["MATLAB_class"] = np.bytes_("double")
        g["data"], g["ir"], g["jc"] = csc.data, csc.indices, csc.indptr
        refs = f.create_group("#refs#")
        ref_list = []
        for i, name in enumerate(["ga", "gb", "gc", "gd"]):
            refs[f"n{i}"] = np.array([[ord(c)] for c in name], dtype=np.uint16)
            refs[f"n{i}"].attrs["MATLAB_class"] = np.bytes_("char")
            ref_list.append(refs[f"n{i}"].ref)
        f.create_dataset("genes", data=np.array([ref_list]), dtype=h5py.ref_dtype)
        f["genes"].attrs["MATLAB_class"] = np.bytes_("cell")
    _write_mat73_header(path)
    assert scipy.io.matlab.matfile_version(str(path)) == (2, 0)
    ds = load(path)
    assert_array_equal(ds.X, X)
    assert_array_equal(ds.y, y)
    assert list(ds.feature_names) == ["ga", "gb", "gc", "gd"]
    # a sparse matrix variable, read as the data through fea-style lookup
    from sparsefs.datasets._loaders import _read_mat73

    S = _read_mat73(path)["S"]
    assert sp.issparse(S)
    assert_array_equal(S.toarray(), Xs)


# --------------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------------


@pytest.fixture
def frame(small):
    X, _ = small
    df = pd.DataFrame(X, columns=["gene_a", "gene_b", "gene_c", "gene_d"])
    df.insert(2, "label", ["ALL", "AML", "ALL", "AML", "AML", "ALL"])
    return df


def test_csv_target_by_name(tmp_path, frame, small):
    X, _ = small
    path = tmp_path / "expr.csv"
    frame.to_csv(path, index=False)
    ds = load(path, target="label")
    assert_array_equal(ds.X, X)
    assert list(ds.y) == ["ALL", "AML", "ALL", "AML", "AML", "ALL"]
    assert list(ds.feature_names) == ["gene_a", "gene_b", "gene_c", "gene_d"]
    assert ds.name == "expr"


def test_int_labels_stay_int(tmp_path, small):
    X, y = small
    df = pd.DataFrame(X, columns=list("abcd")).assign(cls=y.astype(int) * 2 - 3)
    path = tmp_path / "coded.csv"
    df.to_csv(path, index=False)
    ds = load(path, target="cls")
    assert ds.y.dtype.kind == "i"
    assert set(ds.y.tolist()) == {-1, 1}


def test_no_target_means_all_columns_are_features(tmp_path, small):
    X, _ = small
    path = tmp_path / "unlabelled.csv"
    pd.DataFrame(X, columns=list("abcd")).to_csv(path, index=False)
    ds = load(path)
    assert ds.y is None
    assert_array_equal(ds.X, X)


@pytest.mark.parametrize(
    ("name", "sep"), [("t.tsv", "\t"), ("t.txt", "   "), ("t.csv.gz", ","), ("t.TSV.gz", "\t")]
)
def test_separators_and_compression(tmp_path, small, name, sep):
    X, y = small
    lines = [sep.join(["a", "b", "c", "d", "y"])]
    lines += [sep.join([*(repr(float(v)) for v in row), str(int(t))]) for row, t in zip(X, y)]
    text = "\n".join(lines) + "\n"
    path = tmp_path / name
    if name.lower().endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    ds = load(path, target="y")
    assert_array_equal(ds.X, X)
    assert_array_equal(ds.y, y)
    assert list(ds.feature_names) == ["a", "b", "c", "d"]
    assert ds.name == "t"


def test_parquet_round_trip(tmp_path, frame, small):
    pytest.importorskip("pyarrow")
    X, _ = small
    path = tmp_path / "expr.parquet"
    frame.to_parquet(path)
    ds = load(path, target="label")
    assert_array_equal(ds.X, X)
    assert list(ds.y) == ["ALL", "AML", "ALL", "AML", "AML", "ALL"]
    assert list(ds.feature_names) == ["gene_a", "gene_b", "gene_c", "gene_d"]


def test_parquet_without_pyarrow(tmp_path, monkeypatch):
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r'pip install "sparsefs\[parquet\]"'):
        load(path)


def test_csv_transpose_with_label_row(tmp_path, small):
    X, y = small
    header = "probe," + ",".join(f"s{i}" for i in range(X.shape[0]))
    rows = ["class," + ",".join(str(int(v)) for v in y)]
    rows += [f"g{j}," + ",".join(repr(float(v)) for v in X[:, j]) for j in range(X.shape[1])]
    path = tmp_path / "genes_by_samples.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    ds = load(path, target="class", transpose=True)
    assert_array_equal(ds.X, X)
    assert_array_equal(ds.y, y)
    assert ds.y.dtype.kind == "i"
    assert list(ds.feature_names) == ["g0", "g1", "g2", "g3"]
    unlabelled = load(path, transpose=True)  # without target the numeric label row is a feature
    assert unlabelled.y is None and unlabelled.X.shape == (6, 5)
    text_rows = ["class," + ",".join("AB"[v % 2] for v in y), *rows[1:]]
    path.write_text("\n".join([header, *text_rows]) + "\n")
    with pytest.raises(ValueError, match=r"non-numeric feature row\(s\) \['class'\]"):
        load(path, transpose=True)


def test_csv_transpose_string_labels(tmp_path, small):
    X, y = small
    header = "probe," + ",".join(f"s{i}" for i in range(X.shape[0]))
    rows = ["kind," + ",".join("AB"[v % 2] for v in y)]
    rows += [f"g{j}," + ",".join(repr(float(v)) for v in X[:, j]) for j in range(X.shape[1])]
    path = tmp_path / "gs.tsv"
    path.write_text("\n".join(r.replace(",", "\t") for r in [header, *rows]) + "\n")
    ds = load(path, target="kind", transpose=True)
    assert_array_equal(ds.X, X)
    assert list(ds.y) == ["AB"[v % 2] for v in y]
    with pytest.raises(ValueError, match="target='missing' is not a row label"):
        load(path, target="missing", transpose=True)


# --------------------------------------------------------------------------------------------
# .npz
# --------------------------------------------------------------------------------------------


def test_npz_dense(tmp_path, small):
    X, y = small
    path = tmp_path / "d.npz"
    np.savez(path, X=X, y=y, feature_names=np.array(["a", "b", "c", "d"]))
    ds = load(path)
    assert_array_equal(ds.X, X)
    assert_array_equal(ds.y, y)
    assert list(ds.feature_names) == ["a", "b", "c", "d"]
    np.savez(path, X=X)
    ds = load(path)
    assert ds.y is None
    assert list(ds.feature_names) == ["x0", "x1", "x2", "x3"]


def test_npz_sparse(tmp_path, small):
    X, _ = small
    X[X < 0] = 0.0
    path = tmp_path / "s.npz"
    sp.save_npz(path, sp.csc_matrix(X))
    ds = load(path)
    assert sp.issparse(ds.X) and ds.X.format == "csr"
    assert_array_equal(ds.X.toarray(), X)
    assert ds.y is None


def test_npz_transpose_and_errors(tmp_path, small):
    X, y = small
    path = tmp_path / "t.npz"
    np.savez(path, X=X.T, y=y)
    assert_array_equal(load(path, transpose=True).X, X)
    np.savez(path, data=X)
    with pytest.raises(ValueError, match="no array named 'X'"):
        load(path)
    np.savez(path, X=X, feature_names=np.array(["a", 1, None, "d"], dtype=object))
    with pytest.raises(ValueError, match="Python objects"):
        load(path)


# --------------------------------------------------------------------------------------------
# .h5ad
# --------------------------------------------------------------------------------------------


def test_h5ad_round_trip(tmp_path, small):
    anndata = pytest.importorskip("anndata")
    X, _ = small
    X[X < 0] = 0.0
    obs = pd.DataFrame(
        {"cell_type": pd.Categorical(list("ABABBA"))}, index=[f"c{i}" for i in range(6)]
    )
    var = pd.DataFrame(index=["g1", "g2", "g3", "g4"])
    adata = anndata.AnnData(X=sp.csr_matrix(X), obs=obs, var=var)
    path = tmp_path / "cells.h5ad"
    adata.write_h5ad(path)
    ds = load(path, target="cell_type")
    assert sp.issparse(ds.X) and ds.X.format == "csr"
    assert_array_equal(ds.X.toarray(), X)
    assert list(ds.y) == list("ABABBA")
    assert list(ds.feature_names) == ["g1", "g2", "g3", "g4"]
    assert load(path).y is None
    with pytest.raises(ValueError, match=r"not a column of adata\.obs"):
        load(path, target="batch")
    with pytest.raises(ValueError, match="transpose=True is not supported"):
        load(path, transpose=True)


def test_h5ad_without_anndata(tmp_path, monkeypatch):
    path = tmp_path / "cells.h5ad"
    path.write_bytes(b"\x89HDF")
    monkeypatch.setitem(sys.modules, "anndata", None)
    with pytest.raises(ImportError, match=r'pip install "sparsefs\[anndata\]"'):
        load(path)


# --------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------


def test_unknown_extension_lists_supported(tmp_path):
    path = tmp_path / "data.xlsx"
    path.write_text("x")
    with pytest.raises(ValueError, match=r"Unsupported file type.*\.mat.*\.parquet.*\.h5ad"):
        load(path)
    assert ".csv.gz" in SUPPORTED_EXTENSIONS


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere" / "missing.csv"
    with pytest.raises(FileNotFoundError, match=r"missing\.csv"):
        load(path)


def test_missing_target_column(tmp_path, frame):
    path = tmp_path / "expr.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"target='class' is not a column of expr.csv"):
        load(path, target="class")


def test_non_numeric_feature_column(tmp_path, frame):
    path = tmp_path / "expr.csv"
    frame.assign(batch="b1").to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"non-numeric feature column\(s\) \['label', 'batch'\]"):
        load(path)
    with pytest.raises(ValueError, match=r"non-numeric feature column\(s\) \['batch'\]"):
        load(path, target="label")


def test_bad_argument_types(tmp_path, frame):
    path = tmp_path / "expr.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(TypeError, match="target must be a str"):
        load(path, target=3)
    with pytest.raises(TypeError, match="transpose must be a bool"):
        load(path, target="label", transpose="yes")
    with pytest.raises(TypeError, match="feature_names must be an array-like"):
        load(path, target="label", feature_names="abcd")


def test_survival_columns_of_a_table(tmp_path):
    """time= / event= build the structured survival target and drop both columns."""
    import pandas as pd

    from sparsefs.datasets import load

    frame = pd.DataFrame({"g1": [1.0, 2.0, 3.0], "days": [5, 8, 2], "dead": [1, 0, 1],
                          "g2": [0.5, 0.1, 0.3]})
    path = tmp_path / "surv.csv"
    frame.to_csv(path, index=False)
    ds = load(path, time="days", event="dead")
    assert list(ds.feature_names) == ["g1", "g2"]
    np.testing.assert_array_equal(ds.y["time"], [5.0, 8.0, 2.0])
    np.testing.assert_array_equal(ds.y["event"], [True, False, True])
    with pytest.raises(ValueError, match="needs both"):
        load(path, time="days")
    with pytest.raises(ValueError, match="not a column"):
        load(path, time="days", event="status")
    with pytest.raises(ValueError, match="not both"):
        load(path, target="g1", time="days", event="dead")


def test_chiaretti_endpoints():
    """The worked example's targets: 88 patients / 64 relapses, 123 ages, 95 B / 33 T."""
    from sparsefs.datasets import load_chiaretti
    from sparsefs.datasets._asu import shared_data_dir

    root = shared_data_dir()
    if root is None or not (root / "ALL_Chiaretti_pheno.csv").is_file():
        pytest.skip("ALL_Chiaretti files not in SPARSEFS_DATA")
    rel = load_chiaretti("relapse")
    assert rel.X.shape == (88, 12625) and int(rel.y["event"].sum()) == 64
    assert rel.y["time"].min() > 0
    age = load_chiaretti("age")
    assert age.X.shape[0] == 123 and age.y.dtype == np.float64
    bt = load_chiaretti("bt")
    assert sorted(np.unique(bt.y, return_counts=True)[1]) == [33, 95]
    with pytest.raises(ValueError, match="endpoint"):
        load_chiaretti("os")
