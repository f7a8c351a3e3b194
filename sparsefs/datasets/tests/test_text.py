"""Tests of the sentiment text loader (real corpora: skipped when the files are absent)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsefs.datasets import list_text_corpora, load_text_corpus

# (name, documents, positives) from ../shared/data/MANIFEST.md section 2
EXPECTED = {
    "rt-polarity": (10662, 5331),
    "review-polarity": (2000, 1000),
    "amazon": (1000, 500),
    "imdb": (1000, 500),
    "yelp": (1000, 500),
    "rotten-tomatoes": (4866, 2455),
}


def _load_or_skip(name, **kw):
    try:
        return load_text_corpus(name, **kw)
    except FileNotFoundError as exc:
        pytest.skip(f"text corpus not available: {exc}")


def test_names():
    assert list_text_corpora() == list(EXPECTED)


def test_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown text corpus"):
        load_text_corpus("nope")
    with pytest.raises(ValueError, match="representation"):
        load_text_corpus("imdb", representation="bm25")
    monkeypatch.setenv("SPARSEFS_DATA", str(tmp_path))  # an empty directory
    with pytest.raises(FileNotFoundError, match=r"imdb_labelled\.txt"):
        load_text_corpus("imdb")


def test_uci_format_from_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSEFS_DATA", str(tmp_path / "absent"))
    (tmp_path / "yelp_labelled.txt").write_text(
        "Great food, great service!\t1\nThe food was bad.\t0\n\nBad bad service\t0\n",
        encoding="utf-8",
    )
    ds = load_text_corpus("yelp", data_home=tmp_path)
    assert sp.issparse(ds.X) and ds.X.format == "csr" and ds.X.dtype == np.float64
    assert ds.y.tolist() == [1, 0, 0]
    names = ds.feature_names.tolist()
    assert names == ["bad", "food", "great", "service", "the", "was"]
    assert ds.X[2, names.index("bad")] == 2.0
    binary = load_text_corpus("yelp", data_home=tmp_path, representation="binary")
    assert binary.X.max() == 1.0
    tfidf = load_text_corpus("yelp", data_home=tmp_path, representation="tfidf")
    np.testing.assert_allclose(sp.linalg.norm(tfidf.X, axis=1), 1.0)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_real_corpora(name):
    ds = _load_or_skip(name)
    n_docs, n_pos = EXPECTED[name]
    assert ds.X.shape[0] == n_docs and ds.y.shape == (n_docs,)
    assert int(ds.y.sum()) == n_pos and set(np.unique(ds.y)) == {0, 1}
    assert sp.issparse(ds.X) and ds.X.format == "csr"
    assert ds.X.shape[1] == ds.feature_names.shape[0] > 1000
    assert np.all(np.asarray(ds.X.sum(axis=1)).ravel() >= 0)
    assert np.all(ds.X.data == np.round(ds.X.data))  # counts
