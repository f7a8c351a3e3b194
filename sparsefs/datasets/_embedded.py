"""The default demo data set, built from data bundled with scikit-learn (no download)."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_wine
from sklearn.utils import check_random_state

from ._loaders import Dataset
from ._synthetic import _check_int

__all__ = ["load_default"]


def load_default(
    n_noise_features: int = 487,
    random_state: int | np.random.RandomState | None = 0,
) -> Dataset:
    """The wine data widened with permuted-copy noise features: the default demo data set.

    Needs no download. Starts from scikit-learn's bundled wine recognition data
    (:func:`sklearn.datasets.load_wine`: 178 samples, 13 chemical measurements, 3 cultivars)
    and adds ``n_noise_features`` pure-noise features:

    * each noise feature is a copy of a real column chosen uniformly at random, with its rows
      independently permuted, so it has a realistic marginal distribution but no relation to
      the labels (or to the other features);
    * the 13 real columns are placed at random column positions (kept in their original
      relative order), the noise fills the rest;
    * ``feature_names`` are the wine names at the real positions and ``noise_000``,
      ``noise_001``, ... (in column order) elsewhere; ``support`` marks the 13 real columns.

    With the defaults the result is 178 x 500. It is deterministic for a given
    ``random_state`` (default 0, so demos are reproducible).

    Parameters
    ----------
    n_noise_features : int, default=487
        Number of noise features to add, ``>= 0``.
    random_state : int, RandomState instance or None, default=0
        Seed or generator for the noise and the column positions.

    Returns
    -------
    Dataset
        ``X`` float64 (178, 13 + n_noise_features), ``y`` int64 in {0, 1, 2} (the cultivar),
        ``support`` the real wine columns, ``name="wine+noise"``.

    Examples
    --------
    >>> from sparsefs.datasets import load_default
    >>> ds = load_default()
    >>> ds.X.shape, int(ds.support.sum()), ds.name
    ((178, 500), 13, 'wine+noise')
    """
    n_noise = _check_int("n_noise_features", n_noise_features, 0)
    rng = check_random_state(random_state)
    wine = load_wine()
    real = np.asarray(wine.data, dtype=np.float64)
    n_samples, n_real = real.shape
    n_features = n_real + n_noise

    positions = np.sort(rng.choice(n_features, size=n_real, replace=False))
    support = np.zeros(n_features, dtype=bool)
    support[positions] = True

    sources = rng.randint(n_real, size=n_noise)
    noise = np.empty((n_samples, n_noise))
    for j, source in enumerate(sources):
        noise[:, j] = real[rng.permutation(n_samples), source]

    X = np.empty((n_samples, n_features))
    X[:, support] = real
    X[:, ~support] = noise
    names = np.empty(n_features, dtype=object)
    names[support] = list(wine.feature_names)
    width = max(3, len(str(max(n_noise - 1, 0))))
    names[~support] = [f"noise_{j:0{width}d}" for j in range(n_noise)]

    description = (
        f"scikit-learn's wine recognition data (178 samples, 13 features, 3 cultivars, labels "
        f"0/1/2; UCI, Forina et al.) widened with {n_noise} noise features. Each noise feature "
        "is a copy of a randomly chosen wine column with its rows independently permuted "
        "(realistic marginals, no relation to y). The 13 real columns sit at random positions "
        f"(original order kept; random_state={random_state!r}); support marks them."
    )
    return Dataset(
        X=X,
        y=np.asarray(wine.target, dtype=np.int64),
        feature_names=names.astype(str),
        support=support,
        name="wine+noise",
        description=description,
    )
