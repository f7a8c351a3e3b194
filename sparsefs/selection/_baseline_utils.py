"""Glue shared by the baseline selectors: seeds, label matrices, the sparse linear base class."""

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils import check_random_state

from sparsefs.base import BaseSelector
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["SparseLinearSelector", "one_hot_labels", "rng_from", "seed_from"]


def rng_from(random_state) -> np.random.RandomState:
    """A ``RandomState`` for ``random_state``; ``None`` gives a freshly seeded one.

    Unlike :func:`sklearn.utils.check_random_state`, ``None`` does not return NumPy's global
    generator, so fitting never reads or advances the global random state (specs/peers.md §5.2
    item 14).
    """
    if random_state is None:
        return np.random.RandomState(np.random.SeedSequence().generate_state(1)[0])
    return check_random_state(random_state)


def seed_from(random_state) -> int:
    """An int seed drawn from :func:`rng_from`."""
    return int(rng_from(random_state).randint(np.iinfo(np.int32).max))


def one_hot_labels(y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    """Dense n_samples x n_classes 0/1 indicator matrix."""
    Y = np.zeros((y_idx.shape[0], n_classes))
    Y[np.arange(y_idx.shape[0]), y_idx] = 1.0
    return Y


class SparseLinearSelector(BaseSelector):
    """Shared parameters and bookkeeping of the penalised linear selectors.

    Subclasses set ``coef_``, ``n_iter_``, ``objective_`` and call :meth:`_finish`.
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }
