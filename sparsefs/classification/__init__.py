"""Classifiers that select features while they learn."""

__all__: list[str] = []
