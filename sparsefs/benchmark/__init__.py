"""Deprecated alias of :mod:`sparsefs.harness` (the evaluation harness, renamed before 0.1.0).

``sparsefs.benchmark`` was easy to confuse with the speed scripts in ``benchmarks/``. Importing
it, or any ``sparsefs.benchmark.<module>``, warns (``FutureWarning``) and gives the very module
objects of ``sparsefs.harness`` (so ``isinstance`` checks and monkeypatches agree). The alias
will be removed in 0.2; import ``sparsefs.harness`` instead.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

_OLD, _NEW = "sparsefs.benchmark", "sparsefs.harness"


def _warn(name: str) -> None:
    warnings.warn(
        f"{name} is deprecated (renamed {_NEW + name[len(_OLD):]}); it will be removed in "
        "sparsefs 0.2.",
        FutureWarning,
        stacklevel=3,
    )


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module) -> None:  # the target module is already executed
        pass


class _AliasFinder(importlib.abc.MetaPathFinder):
    """``sparsefs.benchmark.X`` -> the module ``sparsefs.harness.X`` itself."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_OLD + "."):
            return None
        new = _NEW + fullname[len(_OLD):]
        if importlib.util.find_spec(new) is None:
            return None
        _warn(fullname)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())

_warn(_OLD)
_harness = importlib.import_module(_NEW)
__all__ = list(_harness.__all__)


def __getattr__(name: str):
    return getattr(_harness, name)


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(globals()))
