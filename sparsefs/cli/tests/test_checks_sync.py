"""The command line's copies of dataset facts agree with ``sparsefs.datasets``.

``cli/_checks.py`` keeps its own ``DATA_EXTENSIONS`` and ``ASU_NAMES`` so that an argument is
refused before the heavy imports (the first hour, issue #31); these tests are the reference
that keeps each copy equal to the loaders' own table.
"""

from pathlib import Path

from sparsefs.cli._checks import ASU_NAMES, DATA_EXTENSIONS, benchmark_name, data_extension
from sparsefs.datasets import SUPPORTED_EXTENSIONS
from sparsefs.datasets._asu import ASU_DATASETS


def test_data_extensions_are_the_loaders_extensions():
    assert sorted(DATA_EXTENSIONS) == sorted(SUPPORTED_EXTENSIONS)
    assert len(set(DATA_EXTENSIONS)) == len(DATA_EXTENSIONS)
    for ext in SUPPORTED_EXTENSIONS:
        assert data_extension(Path(f"expr{ext.upper()}")) == ext


def test_asu_names_resolve_every_benchmark_set_and_its_remote_file():
    assert set(ASU_NAMES.values()) == set(ASU_DATASETS)
    for name, entry in ASU_DATASETS.items():
        for text in (name, name.upper(), entry.remote, entry.filename, name.replace("_", "-")):
            assert benchmark_name(text) == name, text
    assert benchmark_name("not_a_benchmark_set") is None
