"""The deprecated ``sparsefs.benchmark`` alias of ``sparsefs.harness`` (issue #23)."""

import importlib
import subprocess
import sys
import warnings

import pytest


def test_old_import_paths_warn_and_give_the_same_modules():
    # a fresh interpreter: the alias warns once, at its first import
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    import sparsefs.benchmark as old\n"
        "    from sparsefs.benchmark.hooks import sparse_kos as hook\n"
        "    from sparsefs.benchmark import ExperimentSpec\n"
        "import sparsefs.harness as new\n"
        "from sparsefs.harness.hooks import sparse_kos as new_hook\n"
        "assert hook is new_hook and ExperimentSpec is new.ExperimentSpec\n"
        "assert sorted(old.__all__) == sorted(new.__all__)\n"
        "msgs = [str(x.message) for x in w if issubclass(x.category, FutureWarning)]\n"
        "assert any('sparsefs.benchmark is deprecated' in m for m in msgs), msgs\n"
        "assert any('sparsefs.benchmark.hooks' in m and 'sparsefs.harness.hooks' in m\n"
        "           for m in msgs), msgs\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_old_module_is_still_an_import_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (warned once, maybe already)
        importlib.import_module("sparsefs.benchmark")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("sparsefs.benchmark.no_such_module")


def test_stored_runs_keep_their_hash_across_the_moves():
    """A spec written with the old module paths hashes like the one with the new paths (the
    moves of #23 are not changes of an experiment)."""
    from sparsefs.harness import ExperimentSpec

    def spec(loader, hook):
        return ExperimentSpec(
            datasets=[{"loader": loader}], methods=["fisher_score"], k=[2], cv=3,
            estimators=[{"name": "x", "estimator": hook}])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = spec("sparsefs.classification._sparse_kos_report:load_blood_transfusion",
                   "sparsefs.benchmark.hooks.smba_csfs:csfs_knn")
    # the alias warns at its first import in the process (maybe here): nothing else
    assert all(issubclass(w.category, FutureWarning) and "sparsefs.benchmark" in
               str(w.message) for w in caught), [str(w.message) for w in caught]
    new = spec("sparsefs.datasets:load_blood_transfusion",
               "sparsefs.harness.hooks.smba_csfs:csfs_knn")
    assert old.spec_hash() == new.spec_hash()
    other = spec("sparsefs.datasets:load_climate_crashes",
                 "sparsefs.harness.hooks.smba_csfs:csfs_knn")
    assert other.spec_hash() != new.spec_hash()
