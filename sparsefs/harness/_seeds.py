"""Seeds derived from the root seed alone, so results depend neither on order nor on n_jobs.

Every (data set, method, fold) gets ``SeedSequence(entropy=root, spawn_key=(i_data, i_method,
fold))``; things shared by all methods of a data set (the data draw, the CV splits, SMOTE) use
the reserved stream numbers below in the method's place, so every method sees the same folds.
"""

import numpy as np

__all__ = ["DATA_STREAM", "SPLIT_STREAM", "derive_seed", "task_seed"]

DATA_STREAM = 2**31 - 2
"""Reserved second key entry for the data draw of a generator: ``(i_data, DATA_STREAM, rep)``."""
SPLIT_STREAM = 2**31 - 1
"""Reserved second key entry for the CV splits: ``(i_data, SPLIT_STREAM, rep)``, and the
in-fold resampling (SMOTE): ``(i_data, SPLIT_STREAM, fold, 1)``."""


def derive_seed(root: int, *key: int) -> int:
    """A 32-bit seed from ``SeedSequence(entropy=root, spawn_key=key)``.

    Parameters
    ----------
    root : int
        The experiment's root seed.
    *key : int
        Non-negative ints naming the stream, e.g. ``(i_data, i_method, fold)``.

    Returns
    -------
    int
        In ``[0, 2**32)``; usable as any scikit-learn ``random_state``.

    Examples
    --------
    >>> derive_seed(0, 1, 2, 3) == derive_seed(0, 1, 2, 3) != derive_seed(0, 1, 2, 4)
    True
    """
    seq = np.random.SeedSequence(entropy=int(root), spawn_key=tuple(int(k) for k in key))
    return int(seq.generate_state(1, dtype=np.uint32)[0])


def task_seed(root: int, i_data: int, i_method: int, fold: int) -> int:
    """The seed of one (data set, method, fold): ``derive_seed(root, i_data, i_method, fold)``."""
    return derive_seed(root, i_data, i_method, fold)
