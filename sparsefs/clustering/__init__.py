"""Clusterers that keep only the features that separate the clusters."""

__all__: list[str] = []
