"""The method registry: one explicit table that the CLI, the docs and the common tests read.

A new method is added by one :class:`MethodInfo` row in ``_METHODS``; it is then listed by
``sparsefs methods``, run by ``sparsefs demo``, put in the README table and run through every
common test (scikit-learn's checks, the selection contract and the bad-input matrix).
"""

import importlib
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["MethodInfo", "get_method", "list_methods"]

Family = Literal["selector", "classifier", "clusterer"]
Supervision = Literal["supervised", "unsupervised"]


@dataclass(frozen=True)
class MethodInfo:
    """One registered method.

    Attributes
    ----------
    stem : str
        The method's name across modules, tests and docs (``fisher_score`` →
        ``selection/_fisher_score.py``, ``_kernels/fisher_score.py``, ``docs/methods/...``).
    name : str
        The estimator's class name.
    family : {"selector", "classifier", "clusterer"}
    supervision : {"supervised", "unsupervised"}
    reference : str
        The paper (authors, title, venue, year).
    summary : str
        One line for tables.
    import_path : str
        ``"module:Class"``; imported on first use of :attr:`estimator`.
    test_params : tuple of dict
        Small, fast settings under which the common tests instantiate the estimator.
    """

    stem: str
    name: str
    family: Family
    supervision: Supervision
    reference: str
    summary: str
    import_path: str
    test_params: tuple[dict[str, Any], ...] = field(default=({},))

    @property
    def estimator(self) -> type:
        """The estimator class."""
        module, _, attr = self.import_path.partition(":")
        return getattr(importlib.import_module(module), attr)

    def as_dict(self) -> dict[str, Any]:
        """Plain-data view (for JSON output)."""
        return {
            "stem": self.stem,
            "name": self.name,
            "family": self.family,
            "supervision": self.supervision,
            "reference": self.reference,
            "summary": self.summary,
            "estimator": self.import_path.replace(":", "."),
        }


_METHODS: tuple[MethodInfo, ...] = (
    MethodInfo(
        stem="fisher_score",
        name="FisherScore",
        family="selector",
        supervision="supervised",
        reference="Duda, Hart & Stork, Pattern Classification, 2001; Gu, Li & Han, UAI 2011",
        summary="between- over within-class scatter per feature (rank-identical to ANOVA F)",
        import_path="sparsefs.selection:FisherScore",
        test_params=({}, {"n_features_to_select": 2}, {"n_features_to_select": 0.5}),
    ),
)


def list_methods(
    family: Family | None = None, supervision: Supervision | None = None
) -> list[MethodInfo]:
    """Every registered method, optionally filtered.

    Parameters
    ----------
    family : {"selector", "classifier", "clusterer"}, optional
    supervision : {"supervised", "unsupervised"}, optional

    Returns
    -------
    list of MethodInfo
        In registry order.

    Examples
    --------
    >>> from sparsefs import list_methods
    >>> [m.name for m in list_methods(family="selector")][:1]
    ['FisherScore']
    """
    for value, allowed, label in (
        (family, ("selector", "classifier", "clusterer"), "family"),
        (supervision, ("supervised", "unsupervised"), "supervision"),
    ):
        if value is not None and value not in allowed:
            raise ValueError(f"{label}={value!r} is not one of {allowed}.")
    return [
        m
        for m in _METHODS
        if (family is None or m.family == family)
        and (supervision is None or m.supervision == supervision)
    ]


def get_method(key: str) -> MethodInfo:
    """Look a method up by stem or class name (case-insensitive).

    Raises
    ------
    ValueError
        If no method matches; the message lists the known stems.
    """
    wanted = key.strip().lower()
    for m in _METHODS:
        if wanted in (m.stem.lower(), m.name.lower()):
            return m
    known = ", ".join(m.stem for m in _METHODS)
    raise ValueError(f"unknown method {key!r}; known methods: {known}.")


def methods_markdown() -> str:
    """The registry as a markdown table (the README's methods table is kept equal to this)."""
    lines = [
        "| stem | estimator | family | supervision | what it does | reference |",
        "|---|---|---|---|---|---|",
    ]
    for m in _METHODS:
        module = m.import_path.split(":")[0]
        lines.append(
            f"| `{m.stem}` | `{module}.{m.name}` | {m.family} | {m.supervision} | {m.summary} "
            f"| {m.reference} |"
        )
    return "\n".join(lines)
