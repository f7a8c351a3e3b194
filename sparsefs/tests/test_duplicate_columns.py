"""Exactly duplicated columns: equal scores, the original (lower index) ranked first.

The selection contract (``docs/contract.md``): a deterministic method treats two identical
columns identically, so their scores are exactly equal and the tie goes to the lower index.
Methods that separate copies by design (MRMR's redundancy term) must still rank the original
above its copy. (MCFS's LARS would enter one of two identical columns arbitrarily; it runs on
the distinct columns and gives each copy its original's score.) The
independent reference is the symmetry itself: swapping two identical columns leaves the input
unchanged, so any difference between their scores comes from the implementation's arithmetic
or tie-breaking, not from the data.

Every registered method runs, with each of its registry test settings (a fixed
``random_state`` where it has one: a seeded fit is deterministic). Methods owned by other
engineers that fail today are marked ``xfail(strict=True)`` with what fails (issue #16).
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sparsefs.utils import list_methods
from sparsefs.utils.estimator_checks import instances, small_problem

#: methods whose scores separate exact copies by design (docs/contract.md, "Ties")
SEPARATE_BY_DESIGN = {
    "mrmr": "the redundancy term penalises a copy of a selected feature",
    "sparse_kos": "the kernel sees w_i^2 + w_i'^2 of two copies, the l1 penalty |w_i| + |w_i'|: "
    "at a fixed sum of squares the penalty is smallest with all the weight on one copy",
}

#: stem -> (settings that fail, reason): known failures of methods this test does not own
#: (issue #16); the settings are indices into the method's registry ``test_params``.
KNOWN_FAILURES: dict[str, tuple[tuple[int, ...], str]] = {}

#: (original, copy) pairs: columns 2 and 5 carry the signal, 0 is noise
PAIRS = ((2, 8), (5, 9), (0, 10))


def _duplicated_problem():
    X, y, _ = small_problem()
    return np.column_stack([X, X[:, [p for p, _ in PAIRS]]]), y


def _cases():
    for info in list_methods():
        for setting, est in enumerate(instances([info])):
            marks = []
            failing, reason = KNOWN_FAILURES.get(info.stem, ((), ""))
            if setting in failing:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(info, est, id=f"{info.stem}{setting}", marks=marks)


@pytest.mark.parametrize(("info", "est"), list(_cases()))
def test_exact_copies_tie_and_the_original_ranks_first(info, est):
    X, y = _duplicated_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = clone(est).fit(X, y if info.supervision == "supervised" else None)
    scores, ranking = fitted.scores_, fitted.ranking_
    for original, copy in PAIRS:
        assert ranking[original] < ranking[copy], (
            f"{info.name}: the copy (column {copy}) ranks above the original ({original})"
        )
        if info.stem not in SEPARATE_BY_DESIGN:
            assert scores[original] == scores[copy], (
                f"{info.name}: scores of exact copies differ: {scores[original]!r} vs "
                f"{scores[copy]!r}"
            )


def test_tied_selection_keeps_a_support_that_the_tie_would_split():
    """``_set_selection_tied`` by hand: copies 0 and 2 (scores 3.0 and 2.9999999999999996 from
    rounding) get their mean when the method's support stays a top set of the tied order; a support
    that holds only the copy keeps the computed scores."""
    from sparsefs.base import _SparseEstimatorBase

    class _Stub(_SparseEstimatorBase):
        _supervised = False

    X = np.array([[1.0, 5.0, 1.0, 0.0], [2.0, 1.0, 2.0, 1.0], [4.0, 0.0, 4.0, 3.0]])
    raw = np.array([3.0, 1.0, np.nextafter(3.0, 0.0), 2.0])
    est = _Stub()
    est.n_features_in_, est.n_features_to_select_ = 4, None
    est._set_selection_tied(X, raw, np.array([True, False, True, False]))
    assert est.scores_[0] == est.scores_[2] and est.ranking_[0] < est.ranking_[2]
    est._set_selection_tied(X, raw, np.array([True, False, False, False]))
    assert est.scores_[0] == est.scores_[2]  # the original alone is still a top set
    swapped = raw[[2, 1, 0, 3]]  # the copy scored (by rounding) above its original
    est._set_selection_tied(X, swapped, np.array([False, False, True, False]))
    np.testing.assert_array_equal(est.scores_, swapped)
    est.n_features_to_select_ = 1
    est._set_selection_tied(X, raw)
    assert est.scores_[0] == est.scores_[2] and est.support_.tolist() == [True, False, False,
                                                                          False]
