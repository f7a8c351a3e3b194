"""Without the ``dask`` extra, the modules of this package (which import dask) are not
collected for doctests; the tests skip themselves (``pytest.importorskip``)."""

try:
    import dask.array  # noqa: F401
    import distributed  # noqa: F401
except ImportError:
    collect_ignore_glob = ["_core.py", "_moments.py", "_sparse_centers.py", "_fisher_score.py",
                           "_kmeans.py", "_smba.py"]
