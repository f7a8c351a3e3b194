"""The ``sparsefs`` command line: a thin argparse adapter over the library.

Nothing in the library imports this package. Exit codes: 0 success, 1 runtime error (bad data,
existing output file), 2 usage error.
"""

from sparsefs.cli._main import main

__all__ = ["main"]
