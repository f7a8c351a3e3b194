r"""Class-specific feature selection: combining per-class rankings, and the ensemble's vote.

Pure array functions (no scikit-learn) behind
:class:`sparsefs.selection.ClassSpecificSelector` and
:class:`sparsefs.classification.ClassSpecificEnsembleClassifier`.

Two pieces of the class-specific pipeline of Nardone, Ciaramella & Staiano (PeerJ Comput. Sci.
5:e237, 2019, Algorithm 1 and the "Classification" step) and of the general framework of
Pineda-Bautista, Carrasco-Ochoa & Martinez-Trinidad (Expert Syst. Appl. 38(8), 2011):

* :func:`combine_class_rankings` / :func:`union_support`: ``c`` per-class rankings
  :math:`\pi_1..\pi_c` (rank 1 = best) into one global order whose top sets are exactly the
  unions of the per-class top-:math:`m` sets;
* :func:`ensemble_decision`: the decision rule that turns the ``c`` class-specific
  classifiers' predictions into one label (specs/smba-csfs.md A.8), with both tie rules and a
  reproducible random last resort.
"""

import numpy as np

__all__ = [
    "TIE_RULES",
    "combine_class_rankings",
    "ensemble_decision",
    "tie_copies",
    "union_support",
    "vote_counts",
]

TIE_RULES = ("code", "restricted")
"""``code``: the authors' code (votes over all classes when not exactly one claimant);
``restricted``: the paper's wording (with several claimants, only claimed classes can win)."""


def combine_class_rankings(rankings: np.ndarray) -> np.ndarray:
    r"""One global sort key from ``c`` per-class rankings (smaller key = better feature).

    Feature :math:`j` is ordered by its **best** per-class rank
    :math:`b_j = \min_i \pi_i(j)`, ties by the **sum** of its ranks
    :math:`s_j = \sum_i \pi_i(j)` (a feature good for several classes first); the caller breaks
    remaining ties by the lower index. The key is the exact integer
    :math:`b_j (c p + 1) + s_j` (lexicographic in :math:`(b_j, s_j)` because
    :math:`s_j \le c p`), returned as int64.

    Consequence (see :func:`union_support`): for every :math:`m`, the features with
    :math:`b_j \le m` — the union of the per-class top-:math:`m` sets — are exactly the first
    features of this order, so the union is a top set of the global ranking.

    Parameters
    ----------
    rankings : ndarray of shape (n_classes, n_features)
        Row :math:`i` is a permutation of ``1..n_features`` (1 = best for class :math:`i`).

    Returns
    -------
    key : ndarray of shape (n_features,), dtype int64

    Examples
    --------
    >>> import numpy as np
    >>> combine_class_rankings(np.array([[1, 2, 3], [3, 1, 2]])).tolist()
    [11, 10, 19]
    """
    rankings = np.asarray(rankings, dtype=np.int64)
    if rankings.ndim != 2 or rankings.shape[0] < 1:
        raise ValueError(f"rankings must be (n_classes, n_features); got {rankings.shape}.")
    c, p = rankings.shape
    best = rankings.min(axis=0)
    total = rankings.sum(axis=0)
    return best * (c * p + 1) + total


def tie_copies(rankings: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each class's ranks with every group of identical columns at the group's best rank.

    ``first[j]`` is the first column equal to column ``j`` (itself if none; e.g.
    :func:`sparsefs._kernels.columns.duplicate_column_groups`). Copies are equally good for
    every class, so in :func:`combine_class_rankings` they get one key (ties by the lower
    index). ``rankings`` itself when there is no copy.
    """
    rankings = np.asarray(rankings, dtype=np.int64)
    first = np.asarray(first, dtype=np.intp)
    if np.array_equal(first, np.arange(first.shape[0])):
        return rankings
    best = np.full(rankings.shape, np.iinfo(np.int64).max, dtype=np.int64)
    for i in range(rankings.shape[0]):
        np.minimum.at(best[i], first, rankings[i])
    return best[:, first]


def union_support(rankings: np.ndarray, m: int) -> np.ndarray:
    """The union of the per-class top-``m`` sets: features whose best rank is ``<= m``.

    Parameters
    ----------
    rankings : ndarray of shape (n_classes, n_features)
    m : int
        Features per class.

    Returns
    -------
    ndarray of bool, shape (n_features,)
    """
    return np.asarray(rankings).min(axis=0) <= m


def vote_counts(predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """``votes[r, k]`` = how many of the ``c`` classifiers predict class ``k`` for row ``r``.

    Parameters
    ----------
    predictions : ndarray of int, shape (n_samples, n_classifiers)
        Class indices ``0..n_classes-1``.
    n_classes : int

    Returns
    -------
    ndarray of int64, shape (n_samples, n_classes)
    """
    predictions = np.asarray(predictions, dtype=np.intp)
    n = predictions.shape[0]
    votes = np.zeros((n, n_classes), dtype=np.int64)
    rows = np.repeat(np.arange(n), predictions.shape[1])
    np.add.at(votes, (rows, predictions.ravel()), 1)
    return votes


def ensemble_decision(
    predictions: np.ndarray, uniform: np.ndarray, tie_rule: str = "code"
) -> np.ndarray:
    r"""The class-specific ensemble's decision rule (Nardone et al. 2019; specs A.8).

    Classifier :math:`e_i` was trained on the features chosen for class :math:`c_i`; row
    :math:`r` gets the predictions :math:`\hat y_1..\hat y_c`. The claimants are
    :math:`H = \{i : \hat y_i = c_i\}`; the votes :math:`v(k) = \#\{i : \hat y_i = k\}` count
    all ``c`` predictions.

    * :math:`|H| = 1`: predict the claimed class.
    * otherwise, ``tie_rule="code"`` (the authors' code): predict
      :math:`\arg\max_k v(k)` over all classes;
    * ``tie_rule="restricted"`` (the paper's wording): when :math:`|H| \ge 2` the argmax is
      taken over the claimed classes :math:`\{c_i : i \in H\}` only; when :math:`|H| = 0` as
      ``"code"``.
    * Several maximisers: uniformly at random among them (in index order, the ``t``-th of
      ``n_t`` tied classes is chosen when ``uniform[r]`` lies in :math:`[t/n_t, (t+1)/n_t)`).

    The two rules differ only when several classes claim and the overall majority class is not
    one of them.

    Parameters
    ----------
    predictions : ndarray of int, shape (n_samples, n_classes)
        ``predictions[r, i]`` = class index (``0..n_classes-1``) predicted by classifier ``i``,
        the one built for class ``i``.
    uniform : ndarray of float, shape (n_samples,)
        One draw in :math:`[0, 1)` per row (the random last resort; pass seeded draws).
    tie_rule : {"code", "restricted"}

    Returns
    -------
    labels : ndarray of int, shape (n_samples,)
        Class indices.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0, 0, 2],    # classifiers 0 and 2 claim; overall majority 0
    ...               [1, 1, 0]])   # only classifier 1 claims
    >>> ensemble_decision(P, np.zeros(2)).tolist()
    [0, 1]
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule={tie_rule!r} is not one of {TIE_RULES}.")
    predictions = np.asarray(predictions, dtype=np.intp)
    if predictions.ndim != 2 or predictions.shape[1] < 1:
        raise ValueError(f"predictions must be (n_samples, n_classes); got {predictions.shape}.")
    n, c = predictions.shape
    if predictions.size and (predictions.min() < 0 or predictions.max() >= c):
        raise ValueError(f"predictions must be class indices in 0..{c - 1}.")
    uniform = np.asarray(uniform, dtype=np.float64).reshape(-1)
    if uniform.shape[0] != n:
        raise ValueError(f"uniform has {uniform.shape[0]} draws for {n} rows.")
    claims = predictions == np.arange(c)[None, :]
    n_claims = claims.sum(axis=1)
    votes = vote_counts(predictions, c)
    eligible = np.ones((n, c), dtype=bool)
    if tie_rule == "restricted":
        several = n_claims >= 2
        eligible[several] = claims[several]
    masked = np.where(eligible, votes, -1)
    candidates = masked == masked.max(axis=1, keepdims=True)
    one = n_claims == 1
    candidates[one] = claims[one]
    n_cand = candidates.sum(axis=1)
    pick = np.minimum((np.clip(uniform, 0.0, np.nextafter(1.0, 0.0)) * n_cand).astype(np.intp),
                      n_cand - 1)
    # the pick-th True of each row (in class-index order)
    position = np.cumsum(candidates, axis=1) - 1
    chosen = candidates & (position == pick[:, None])
    return np.argmax(chosen, axis=1)
