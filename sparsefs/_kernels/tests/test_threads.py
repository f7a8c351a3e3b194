"""The thread policy (issue #33): one place chooses BLAS, OpenMP and own-pool threads.

References: threadpoolctl's own report of every loaded library's thread count (an independent
reading of what the policy set), the plain sequential loop for the pool, and the policy's
documented thresholds.
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from sparsefs._kernels import threads


def _counts():
    return {(lib["filepath"], lib["user_api"]): lib["num_threads"] for lib in threadpool_info()}


def test_plan_thresholds():
    """Every CPU for BLAS/OpenMP only from MIN_BLAS_FLOPS per operation; the own pool's
    ceiling is n_jobs (capped at the CPUs) or every CPU."""
    cpus = threads.available_cpus()
    assert threads.plan(threads.MIN_BLAS_FLOPS * 0.99).blas == 1
    assert threads.plan(threads.MIN_BLAS_FLOPS).blas == cpus
    assert threads.plan(0.0).pool == cpus
    assert threads.plan(0.0, pool=1).pool == 1
    assert threads.plan(0.0, pool=10**6).pool == cpus


def test_applied_sets_every_library_and_restores():
    """Reference: threadpoolctl's threadpool_info, read inside and after the context. Inside a
    plan of one BLAS thread every BLAS and OpenMP library reports 1 (numpy's and scipy's
    OpenBLAS alike); afterwards every count is back; a nested plan never raises a count."""
    with threadpool_limits(limits=2):
        before = _counts()
        with threads.applied(threads.ThreadPlan(blas=1, pool=3)) as outer:
            inside = _counts()
            assert set(inside.values()) == {1}, inside
            assert threads.current_plan() == outer
            with threads.applied(threads.ThreadPlan(blas=4, pool=8)) as inner:
                assert inner == threads.ThreadPlan(blas=1, pool=3)
                assert set(_counts().values()) == {1}
            assert threads.current_plan() == outer
        assert _counts() == before
        assert threads.current_plan() is None


def test_pool_threads_follow_the_size_and_the_plan():
    """1 below MIN_POOL_ELEMENTS; the plan's ceiling above (every CPU outside a plan); never
    more threads than blocks."""
    big = threads.MIN_POOL_ELEMENTS
    assert threads.pool_threads(big - 1) == 1
    assert threads.pool_threads(big) == threads.available_cpus()
    with threads.applied(threads.ThreadPlan(blas=1, pool=1)):
        assert threads.pool_threads(big * 100) == 1
    assert threads.pool_threads(big * 100, n_blocks=1) == 1


@pytest.mark.parametrize("n_threads", [1, 2, 3, 8])
def test_run_blocks_runs_every_block_once(n_threads):
    """Reference: the sequential loop. Every block runs exactly once, whatever the thread
    count; an exception in a block is raised after the others stopped."""
    seen = []
    threads.run_blocks(lambda a, b: seen.append((a, b)), [(i, i + 1) for i in range(17)],
                       n_threads)
    assert sorted(seen) == [(i, i + 1) for i in range(17)]

    def fail(a, b):
        if a == 5:
            raise RuntimeError("block 5")

    with pytest.raises(RuntimeError, match="block 5"):
        threads.run_blocks(fail, [(i, i + 1) for i in range(8)], n_threads)


def test_run_tasks_equals_the_loop():
    out = np.zeros(10)

    def work(t):
        out[t] = t * t

    threads.run_tasks(work, 10, 3)
    np.testing.assert_array_equal(out, np.arange(10) ** 2)


def test_every_fit_runs_under_the_plan(monkeypatch):
    """Reference: threadpoolctl's report read from inside a fit (the kernel of UFCM, which
    alternated numpy's and scipy's pools and suffered most). A small fit runs every BLAS and
    OpenMP library on one thread, and the counts are restored after it."""
    from sparsefs.selection import UFCM, _ufcm

    seen = []
    original = _ufcm._kernel.ufcm

    def spy(*args, **kwargs):
        seen.append(_counts())
        return original(*args, **kwargs)

    monkeypatch.setattr(_ufcm._kernel, "ufcm", spy)
    X = np.random.default_rng(0).standard_normal((40, 30))
    with threadpool_limits(limits=2):
        before = _counts()
        UFCM(2, init="kmeans", random_state=0).fit(X)
        assert _counts() == before
    assert seen and all(set(c.values()) == {1} for c in seen), seen


def test_resolve_n_jobs_is_one_rule():
    """The n_jobs table of docs/contract.md, against its definition: joblib's own reading of
    None (``joblib.effective_n_jobs``, the independent reference for scikit-learn's
    convention), the CPU count for negative values, the task cap, and the within-fit None."""
    import joblib

    cpus = threads.available_cpus()
    assert threads.resolve_n_jobs(None) == joblib.effective_n_jobs(None) == 1
    assert threads.resolve_n_jobs(3) == 3
    assert threads.resolve_n_jobs(-1) == cpus
    assert threads.resolve_n_jobs(-2) == max(1, cpus - 1)
    assert threads.resolve_n_jobs(-(cpus + 5)) == 1
    assert threads.resolve_n_jobs(8, n_tasks=3) == 3
    assert threads.resolve_n_jobs(-1, n_tasks=0) == 1
    assert threads.resolve_n_jobs(None, within_fit=True) == cpus
    assert threads.resolve_n_jobs(2, within_fit=True) == 2
    with joblib.parallel_config(n_jobs=3):
        assert threads.resolve_n_jobs(None) == 3
        assert threads.resolve_n_jobs(None, n_tasks=2) == 2
        assert threads.resolve_n_jobs(1) == 1
        assert threads.resolve_n_jobs(None, within_fit=True) == cpus
    for within in (False, True):
        with pytest.raises(ValueError, match="n_jobs=0"):
            threads.resolve_n_jobs(0, within_fit=within)


def test_pool_ceiling_is_the_plans():
    cpus = threads.available_cpus()
    assert threads.pool_ceiling() == cpus
    with threads.applied(threads.ThreadPlan(blas=1, pool=1)):
        assert threads.pool_ceiling() == 1
    assert threads.pool_ceiling() == cpus
