"""Random states that never touch NumPy's global generator."""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["rng_from"]


def rng_from(random_state) -> np.random.RandomState:
    """A ``RandomState`` for ``random_state``; ``None`` gives a freshly seeded one.

    Unlike :func:`sklearn.utils.check_random_state`, ``None`` does not return NumPy's global
    generator, so fitting never reads or advances the global random state (specs/peers.md §5.2
    item 14).

    Examples
    --------
    >>> rng_from(0).randint(100) == rng_from(0).randint(100)
    True
    >>> rng_from(None) is not np.random.mtrand._rand
    True
    """
    if random_state is None:
        return np.random.RandomState(np.random.SeedSequence().generate_state(1)[0])
    return check_random_state(random_state)
