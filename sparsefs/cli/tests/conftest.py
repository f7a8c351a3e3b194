"""Shared data for the CLI tests: a small expression table with a label column."""

import numpy as np
import pandas as pd


def write_expression_csv(tmp_path, n_per_class: int, n_genes: int, shifts: dict[int, float]):
    """``expr.csv`` in ``tmp_path``: N(0, 1) genes, ``shifts[j]`` added to gene j in the
    tumours, the label column ``diagnosis`` at position 3. Returns ``(path, X, labels)`` with
    labels 1 = tumour (the order in which the CLI sorts them)."""
    rng = np.random.default_rng(0)
    y = np.repeat(["tumour", "normal"], n_per_class)
    X = rng.normal(size=(2 * n_per_class, n_genes))
    for j, shift in shifts.items():
        X[:, j] += shift * (y == "tumour")
    df = pd.DataFrame(X, columns=[f"gene{j}" for j in range(n_genes)])
    df.insert(3, "diagnosis", y)
    path = tmp_path / "expr.csv"
    df.to_csv(path, index=False)
    return path, X, (y == "tumour").astype(int)
