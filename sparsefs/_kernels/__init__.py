"""Pure array kernels: ndarray (or scipy.sparse) in, ndarray out.

Nothing here imports scikit-learn or any other part of sparsefs outside ``_kernels``; the
estimators are thin glue around these functions. Kernels are private API.
"""
