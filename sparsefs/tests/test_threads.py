"""The BLAS thread policy (``sparsefs.utils._threads``): checked against threadpoolctl's own
report of the live thread pools."""

from threadpoolctl import threadpool_info

from sparsefs.utils._threads import blas_single_thread, one_blas_thread


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_single_thread_context_and_decorator_restore_the_setting():
    before = _blas_threads()
    with blas_single_thread():
        assert all(n == 1 for n in _blas_threads())
    with blas_single_thread(False):
        assert _blas_threads() == before
    assert _blas_threads() == before

    class Fit:
        @one_blas_thread
        def _fit(self, value):
            return value, _blas_threads()

    value, inside = Fit()._fit(3)
    assert value == 3 and all(n == 1 for n in inside)
    assert Fit._fit.__name__ == "_fit"
    assert _blas_threads() == before
