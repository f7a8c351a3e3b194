"""``python -m sparsefs`` runs the command line."""

import sys

from sparsefs.cli import main

if __name__ == "__main__":
    sys.exit(main())
