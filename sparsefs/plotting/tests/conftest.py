"""Plot tests run on the non-interactive Agg backend and close their figures."""

import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")
