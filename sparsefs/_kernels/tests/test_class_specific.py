"""The class-specific kernels: the ensemble's decision rule and the rank combination.

Independent references: a direct, row-by-row transcription of the rule of specs/smba-csfs.md
A.8 (``_reference_rule`` below, loops and sets, no vectorisation) and hand-worked truth tables;
for the rank combination, a brute-force lexicographic sort and explicit set unions.
"""

import itertools

import numpy as np
import pytest

from sparsefs._kernels.class_specific import (
    combine_class_rankings,
    ensemble_decision,
    union_support,
    vote_counts,
)


def _reference_rule(preds, tie_rule):
    """The candidates of one row, transcribed literally from the spec (A.8)."""
    c = len(preds)
    claimants = [i for i in range(c) if preds[i] == i]
    if len(claimants) == 1:
        return [claimants[0]]
    votes = {k: sum(1 for p in preds if p == k) for k in range(c)}
    pool = claimants if (tie_rule == "restricted" and len(claimants) >= 2) else list(range(c))
    best = max(votes[k] for k in pool)
    return sorted(k for k in pool if votes[k] == best)


def _decide(rows, u=0.0, tie_rule="code"):
    P = np.asarray(rows)
    return ensemble_decision(P, np.full(P.shape[0], u), tie_rule).tolist()


# -- every branch of the rule ------------------------------------------------------------


def test_one_claimant_wins_even_against_a_majority():
    # classifier 2 claims class 2; classifiers 0 and 1 both vote for class 1 (no self-claim)
    assert _decide([[1, 0, 2]]) == [2]
    # only classifier 1 claims; class 0 has two votes
    assert _decide([[2, 1, 0, 0]]) == [1]
    for rule in ("code", "restricted"):
        assert _decide([[1, 0, 2]], tie_rule=rule) == [2]


def test_several_claimants_with_a_unique_overall_majority():
    # classifiers 0 and 2 claim; votes: class 0 -> 2, class 2 -> 1
    assert _decide([[0, 0, 2]]) == [0]
    assert _decide([[0, 0, 2]], tie_rule="restricted") == [0]


def test_no_claimant_goes_to_the_vote():
    # nobody claims its own class; class 2 has two votes
    assert _decide([[2, 2, 0]]) == [2]
    assert _decide([[2, 2, 0]], tie_rule="restricted") == [2]


def test_the_two_tie_rules_differ_when_the_majority_does_not_claim():
    # 5 classes: classifiers 0 and 1 claim; classifiers 2 and 3 vote class 4, whose own
    # classifier votes class 2 (so class 4 does not claim). Votes: 0 -> 1, 1 -> 1, 2 -> 1,
    # 4 -> 2. Code: the overall majority 4. Restricted: a tie between the claimants 0 and 1.
    row = [[0, 1, 4, 4, 2]]
    assert _decide(row, tie_rule="code") == [4]
    assert _decide(row, u=0.0, tie_rule="restricted") == [0]
    assert _decide(row, u=0.99, tie_rule="restricted") == [1]


def test_ties_are_broken_by_the_draw_over_all_tied_classes():
    # three classes, each classifier votes for the next class: no claimant, 3-way tie
    row = [[1, 2, 0]]
    assert [_decide(row, u=u)[0] for u in (0.0, 0.34, 0.67, 0.999)] == [0, 1, 2, 2]
    # two claimants with equal votes (2 classes both claiming): a 2-way tie under both rules
    for rule in ("code", "restricted"):
        assert [_decide([[0, 1]], u=u, tie_rule=rule)[0] for u in (0.2, 0.7)] == [0, 1]


def test_seeded_draws_are_reproducible_and_cover_every_tied_class():
    P = np.tile([1, 2, 0], (300, 1))
    a = ensemble_decision(P, np.random.default_rng(5).random(300))
    b = ensemble_decision(P, np.random.default_rng(5).random(300))
    np.testing.assert_array_equal(a, b)
    counts = np.bincount(a, minlength=3)
    assert counts.min() > 60  # uniform over the 3 tied classes (expected 100 each)


def test_matches_the_literal_transcription_on_every_small_case():
    rng = np.random.default_rng(0)
    for c in (2, 3, 4):
        rows = np.array(list(itertools.product(range(c), repeat=c)))
        for rule in ("code", "restricted"):
            u = rng.random(rows.shape[0])
            got = ensemble_decision(rows, u, rule)
            for r, row in enumerate(rows):
                cands = _reference_rule(list(row), rule)
                assert got[r] == cands[min(int(u[r] * len(cands)), len(cands) - 1)], (row, rule)


def test_vote_counts_and_input_checks():
    P = np.array([[0, 0, 2], [1, 2, 2]])
    np.testing.assert_array_equal(vote_counts(P, 3), [[2, 0, 1], [0, 1, 2]])
    with pytest.raises(ValueError, match="tie_rule"):
        ensemble_decision(P, np.zeros(2), "majority")
    with pytest.raises(ValueError, match="class indices"):
        ensemble_decision(np.array([[0, 3, 1]]), np.zeros(1))
    with pytest.raises(ValueError, match="draws"):
        ensemble_decision(P, np.zeros(3))
    assert ensemble_decision(np.zeros((0, 3), dtype=int), np.zeros(0)).shape == (0,)


# -- rank combination --------------------------------------------------------------------


def test_combined_order_is_best_rank_then_sum_then_index():
    rng = np.random.default_rng(1)
    c, p = 3, 12
    R = np.array([rng.permutation(p) + 1 for _ in range(c)])
    key = combine_class_rankings(R)
    got = np.argsort(key, kind="stable")
    brute = sorted(range(p), key=lambda j: (R[:, j].min(), R[:, j].sum(), j))
    assert got.tolist() == brute


@pytest.mark.parametrize("m", [1, 2, 4, 7])
def test_union_of_per_class_top_m_is_a_top_set_of_the_combined_order(m):
    rng = np.random.default_rng(m)
    c, p = 4, 15
    R = np.array([rng.permutation(p) + 1 for _ in range(c)])
    union = set().union(*({int(j) for j in np.flatnonzero(R[i] <= m)} for i in range(c)))
    mask = union_support(R, m)
    assert set(np.flatnonzero(mask).tolist()) == union
    order = np.argsort(combine_class_rankings(R), kind="stable")
    assert set(order[: len(union)].tolist()) == union


def test_tie_copies_gives_each_group_its_best_rank_per_class():
    """By hand: columns 0 and 2 are copies (first = [0, 1, 0]); class 0 ranks them 3 and 1,
    class 1 ranks them 1 and 2 -> both get 1 in each class; no copies -> the same array."""
    from sparsefs._kernels.class_specific import tie_copies

    rankings = np.array([[3, 2, 1], [1, 3, 2]])
    np.testing.assert_array_equal(tie_copies(rankings, np.array([0, 1, 0])),
                                  [[1, 2, 1], [1, 3, 1]])
    np.testing.assert_array_equal(tie_copies(rankings, np.arange(3)), rankings)
