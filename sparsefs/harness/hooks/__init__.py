"""Report hooks of the reproductions (``hooks = ["sparsefs.harness.hooks.<stem>:..."]``).

A hook adds to a reproduction report what the generic report cannot know: a tuning curve, the
paper's qualitative claims checked against our numbers. Hooks belong to the harness layer, so
they may import the estimators and (lazily) :mod:`sparsefs.plotting`; estimator packages never
import them.
"""
