"""The :class:`Dataset` result type and :func:`load`, a reader for local data files.

Supported formats (chosen by the file name's extension, case-insensitive):

==========================================  =====================================================
extension                                   reader
==========================================  =====================================================
``.mat``                                    :func:`scipy.io.loadmat` (MATLAB v4-v7.2); MATLAB
                                            v7.3 (HDF5) files through ``h5py`` when installed
``.csv``, ``.tsv``, ``.txt`` (+ ``.gz``,    :func:`pandas.read_csv`; comma, tab, and any run of
``.bz2``, ``.xz``)                          whitespace respectively; one header row
``.parquet``                                :func:`pandas.read_parquet` (needs ``pyarrow``)
``.npz``                                    :func:`numpy.load` (keys ``X``, ``y``,
                                            ``feature_names``) or :func:`scipy.sparse.load_npz`
``.h5ad``                                   :func:`anndata.read_h5ad` (needs ``anndata``)
==========================================  =====================================================
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io
import scipy.sparse as sp

__all__ = ["SUPPORTED_EXTENSIONS", "Dataset", "load"]

_TABLE_SEPARATORS = {".csv": ",", ".tsv": "\t", ".txt": r"\s+"}
_COMPRESSIONS = (".gz", ".bz2", ".xz")
SUPPORTED_EXTENSIONS: tuple[str, ...] = (
    ".mat",
    *[t + c for t in _TABLE_SEPARATORS for c in ("", *_COMPRESSIONS)],
    ".parquet",
    ".npz",
    ".h5ad",
)
"""Every file-name ending that :func:`load` understands."""

# Variables of a .mat file that hold the data, the labels and the feature names, in the order
# they are looked for.
_MAT_X_KEYS = ("X", "fea")
_MAT_Y_KEYS = ("Y", "gnd", "y")
_NAME_KEYS = ("feature_names", "probes", "genes", "gene_names", "names", "features")


# --------------------------------------------------------------------------------------------
# The result type
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Dataset:
    """A data set: samples, labels, feature names and (when known) the true relevant features.

    Every loader and generator of :mod:`sparsefs.datasets` returns one. It is immutable (the
    fields cannot be reassigned; use :func:`dataclasses.replace` to derive a new one). The
    constructor checks that the shapes agree and converts ``feature_names`` to an array of
    ``str`` and ``support`` to a boolean array.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
        The data, samples as rows. Its dtype is kept as loaded (e.g. ``int16`` for the
        discretised microarray sets).
    y : ndarray of shape (n_samples,) or None
        Class or cluster labels, kept as loaded (ints stay ints, strings stay strings);
        ``None`` for unlabelled data.
    feature_names : array-like of str of shape (n_features,)
        One name per column.
    support : array-like of bool of shape (n_features,) or None
        ``True`` for the truly relevant features (known for synthetic data); ``None`` when
        unknown, as for real data.
    name : str
        A short name, e.g. ``"colon"`` or ``"planted_classification"``.
    description : str, default=""
        Free text: origin, design, label coding.
    groups : ndarray of shape (n_samples,) or None, default=None
        The group of every sample when samples come in groups that are not independent (the
        donor of every cell): ``ErrorControlSelector`` / ``StabilitySelector`` take it as
        ``fit(..., groups=)``, the harness keeps a group out of training and test at once.

    Examples
    --------
    >>> import numpy as np
    >>> ds = Dataset(X=np.zeros((3, 2)), y=np.array([0, 1, 1]), feature_names=["a", "b"],
    ...              support=None, name="toy")
    >>> ds.n_samples, ds.n_features
    (3, 2)
    >>> X, y = ds.as_tuple()
    """

    X: Any
    y: np.ndarray | None
    feature_names: np.ndarray
    support: np.ndarray | None
    name: str
    description: str = ""
    groups: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = self.X
        if not (sp.issparse(X) or isinstance(X, np.ndarray)):
            raise TypeError(
                f"X must be a numpy ndarray or a scipy sparse matrix, got {type(X).__name__}."
            )
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}.")
        n_samples, n_features = X.shape
        if self.y is not None:
            y = np.asarray(self.y)
            if y.ndim != 1 or y.shape[0] != n_samples:
                raise ValueError(
                    f"y must have shape ({n_samples},) to match X {X.shape}, got {y.shape}."
                )
            object.__setattr__(self, "y", y)
        names = np.asarray(self.feature_names, dtype=str)
        if names.shape != (n_features,):
            raise ValueError(
                f"feature_names must have shape ({n_features},) to match X {X.shape}, "
                f"got {names.shape}."
            )
        object.__setattr__(self, "feature_names", names)
        if self.support is not None:
            support = np.asarray(self.support)
            if support.dtype != bool or support.shape != (n_features,):
                raise ValueError(
                    f"support must be a boolean array of shape ({n_features},), got dtype "
                    f"{support.dtype} and shape {support.shape}."
                )
            object.__setattr__(self, "support", support)
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}.")
        if not isinstance(self.description, str):
            raise TypeError(f"description must be a str, got {type(self.description).__name__}.")
        if self.groups is not None:
            groups = np.asarray(self.groups)
            if groups.ndim != 1 or groups.shape[0] != n_samples:
                raise ValueError(
                    f"groups must have shape ({n_samples},) to match X {X.shape}, got "
                    f"{groups.shape}."
                )
            object.__setattr__(self, "groups", groups)

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    def as_tuple(self) -> tuple[Any, np.ndarray | None]:
        """Return ``(X, y)``.

        Returns
        -------
        X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,) or None
        """
        return self.X, self.y

    def __repr__(self) -> str:
        kind = type(self.X).__name__
        y = "None" if self.y is None else f"ndarray({self.y.shape[0]}, {self.y.dtype})"
        support = "None" if self.support is None else f"{int(self.support.sum())} true"
        return (
            f"Dataset(name={self.name!r}, X={kind}{self.X.shape} {self.X.dtype}, y={y}, "
            f"support={support})"
        )


def default_feature_names(n_features: int) -> np.ndarray:
    """Return the default names ``x0, x1, ..., x{n_features-1}``."""
    return np.array([f"x{j}" for j in range(n_features)], dtype=str)


# --------------------------------------------------------------------------------------------
# load
# --------------------------------------------------------------------------------------------


def load(
    path: str | os.PathLike[str],
    *,
    target: str | None = None,
    feature_names: Sequence[str] | np.ndarray | None = None,
    transpose: bool = False,
    time: str | None = None,
    event: str | None = None,
    groups: str | None = None,
) -> Dataset:
    """Load a data set from a local file.

    The format follows from the file's extension (case-insensitive):

    * ``.mat``: MATLAB file read with :func:`scipy.io.loadmat`. The data is the variable ``X``
      (or ``fea``), the labels ``Y`` (or ``gnd``, or ``y``) raveled to 1-D; sparse ``X`` is
      returned as CSR. Feature names are read from a variable ``feature_names``, ``probes``,
      ``genes``, ``gene_names``, ``names`` or ``features`` (a cell array or char matrix) when
      present, else ``x0 ... x{p-1}``. MATLAB v7.3 files (HDF5 inside) are read with ``h5py``
      when it is installed; otherwise an :class:`ImportError` says to ``pip install h5py``.
    * ``.csv``, ``.tsv``, ``.txt``, optionally compressed (``.gz``, ``.bz2``, ``.xz``): a table
      with one header row, read with :func:`pandas.read_csv`. The separator is ``,`` for
      ``.csv``, a tab for ``.tsv`` and any run of whitespace for ``.txt``. Feature names come
      from the header.
    * ``.parquet``: read with :func:`pandas.read_parquet`; needs ``pyarrow``
      (``pip install "sparsefs[parquet]"``).
    * ``.npz``: a NumPy archive with the keys ``X``, optionally ``y`` and ``feature_names``
      (a ``str`` array); or a sparse matrix written by :func:`scipy.sparse.save_npz`, which
      gives ``X`` only (as CSR).
    * ``.h5ad``: an AnnData file; ``X = adata.X`` (dense or CSR), feature names
      ``adata.var_names``, labels ``adata.obs[target]``. Needs ``anndata``
      (``pip install "sparsefs[anndata]"``).

    Labels are kept as stored: integer codes stay integers (e.g. ``{-1, +1}`` or ``1..K``),
    strings stay strings.

    Parameters
    ----------
    path : str or path-like
        The file to read.
    target : str or None, default=None
        Where the labels are. For tables (csv/tsv/txt/parquet) the name of the label column,
        which is removed from the features; with ``None`` there are no labels (``y is None``)
        and every column is a feature. For ``.h5ad`` a column of ``adata.obs``. For ``.mat``
        and ``.npz`` the variable holding the labels (default: ``Y``/``gnd``/``y``).
        With ``transpose=True`` on a table, the label of the row holding the labels.
    feature_names : array-like of str of shape (n_features,) or None, default=None
        Names that replace those found in the file.
    time, event : str or None, default=None
        A survival target (``docs/outcomes.md``): the columns (tables) or ``adata.obs``
        columns (``.h5ad``) of the follow-up time and of the event indicator (boolean or 0/1:
        1 = the event was observed, 0 = censored). Both are removed from the features and ``y``
        is the structured array of :func:`sparsefs.utils.survival_target`. Give both, and not
        with ``target``.
    transpose : bool, default=False
        The file stores features as rows and samples as columns (genes x samples, common for
        expression matrices); transpose it to samples x features. For a table, a non-numeric
        first column is then taken as the feature names (row labels) and the header holds the
        sample identifiers. Not supported for ``.h5ad`` (AnnData is already samples x
        features).
    groups : str or None, default=None
        Where the sample groups are (the donor / sample of every cell; ``Dataset.groups``):
        a column of a table (removed from the features, as ``target``), a column of
        ``adata.obs``, or a variable of a ``.mat`` / ``.npz`` file. Not with
        ``transpose=True`` on a table.

    Returns
    -------
    Dataset
        With ``support=None`` and ``name`` the file name without its extension.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the extension is not supported, the target is missing, a feature column is not
        numeric, or the shapes disagree.
    ImportError
        If an optional reader (``pyarrow``, ``anndata``, ``h5py``) is needed but missing.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from sparsefs.datasets import load
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "toy.csv")
    ...     with open(path, "w") as f:
    ...         _ = f.write("a,b,label\\n1,2,x\\n3,4,y\\n")
    ...     ds = load(path, target="label")
    >>> ds.X.shape, ds.feature_names.tolist(), ds.y.tolist()
    ((2, 2), ['a', 'b'], ['x', 'y'])
    """
    path = Path(os.fspath(path))
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, "No such data file", str(path))
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Expected a data file, got a directory", str(path))
    ext = _extension(path)
    if target is not None and not isinstance(target, str):
        raise TypeError(f"target must be a str or None, got {target!r}.")
    if not isinstance(transpose, bool | np.bool_):
        raise TypeError(f"transpose must be a bool, got {transpose!r}.")
    transpose = bool(transpose)
    if (time is None) != (event is None):
        raise ValueError(f"time={time!r} and event={event!r}: a survival target needs both "
                         "columns.")
    if time is not None:
        if target is not None:
            raise ValueError(f"target={target!r} with time= and event=: give the label column "
                             "or the survival columns, not both.")
        if ext in (".mat", ".npz") or transpose:
            raise ValueError(
                "time= and event= name columns of a table (csv/tsv/txt/parquet) or of "
                f"adata.obs (.h5ad); {path.name}"
                + (" is read with transpose=True" if transpose else f" is a {ext} file")
                + ". Build the target with sparsefs.utils.survival_target(event, time)."
            )
    if groups is not None:
        if not isinstance(groups, str):
            raise TypeError(f"groups must be a str or None, got {groups!r}.")
        if groups in (target, time, event):
            raise ValueError(f"groups={groups!r} is also the target; name another column.")
        if transpose:
            raise ValueError("groups= with transpose=True is not supported; store the file "
                             "as samples x features with a column of groups.")

    g = None
    if ext == ".mat":
        X, y, names = _read_mat(path, target)
        if groups is not None:
            g = _read_mat_variable(path, groups)
    elif ext == ".npz":
        X, y, names = _read_npz(path, target)
        if groups is not None:
            g = _read_npz_variable(path, groups)
    elif ext == ".h5ad":
        if transpose:
            raise ValueError(
                "transpose=True is not supported for .h5ad files: AnnData already stores "
                "samples (obs) x features (var)."
            )
        X, y, names, g = _read_h5ad(path, target, groups, (time, event))
    else:
        frame = _read_table(path, ext)
        if time is not None:
            frame, y = _survival_columns(frame, time, event, path.name)
            ds = _frame_to_dataset(frame, path, None, feature_names, False, groups)
            return Dataset(X=ds.X, y=y, feature_names=ds.feature_names, support=None,
                           name=ds.name, description=ds.description, groups=ds.groups)
        return _frame_to_dataset(frame, path, target, feature_names, transpose, groups)
    if g is not None and g.shape[0] != X.shape[0]:
        raise ValueError(
            f"{path.name}: groups={groups!r} has {g.shape[0]} entries but X has {X.shape[0]} "
            "rows."
        )

    if transpose:
        X = X.T.tocsr() if sp.issparse(X) else np.ascontiguousarray(X.T)
    if y is not None and y.shape[0] != X.shape[0]:
        hint = "" if transpose else "; if the file stores features x samples, pass transpose=True"
        raise ValueError(
            f"{path.name}: the labels have {y.shape[0]} entries but X has {X.shape[0]} rows "
            f"(shape {X.shape}){hint}."
        )
    return _loaded(path, X, y, g, feature_names, names)


def _loaded(path: Path, X: Any, y: Any, g: Any, feature_names: Any, found: Any) -> Dataset:
    """The :class:`Dataset` of a file read by :func:`load` (no known support)."""
    names = _resolve_names(feature_names, found, X.shape[1], path)
    return Dataset(
        X=X,
        y=y,
        feature_names=names,
        support=None,
        name=_stem(path),
        description=f"Loaded from {path}.",
        groups=g,
    )


def _read_mat_variable(path: Path, key: str) -> np.ndarray:
    """One variable of a .mat file as a 1-D label vector (``groups=``)."""
    if scipy.io.matlab.matfile_version(str(path))[0] == 2:
        data = _read_mat73(path)
    else:
        data = {k: v for k, v in scipy.io.loadmat(str(path)).items() if not k.startswith("__")}
    if key not in data:
        raise ValueError(
            f"groups={key!r} is not a variable of {path.name}; its variables are {sorted(data)}."
        )
    return _as_labels(data[key])


def _read_npz_variable(path: Path, key: str) -> np.ndarray:
    """One array of a .npz archive as a 1-D label vector (``groups=``)."""
    with np.load(path, allow_pickle=False) as archive:
        if key not in archive.files:
            raise ValueError(
                f"groups={key!r} is not an array of {path.name}; keys: {sorted(archive.files)}."
            )
        return np.asarray(archive[key]).ravel()


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _extension(path: Path) -> str:
    """The supported extension that ``path`` ends with (compound ones included)."""
    lower = path.name.lower()
    for ext in sorted(SUPPORTED_EXTENSIONS, key=len, reverse=True):
        if lower.endswith(ext) and len(lower) > len(ext):
            return ext
    raise ValueError(
        f"Unsupported file type for {str(path)!r}: expected one of "
        f"{', '.join(SUPPORTED_EXTENSIONS)}."
    )


def _stem(path: Path) -> str:
    return path.name[: -len(_extension(path))]


def _resolve_names(
    given: Iterable[str] | None, found: np.ndarray | None, n_features: int, path: Path
) -> np.ndarray:
    if given is not None:
        if isinstance(given, str):
            raise TypeError("feature_names must be an array-like of str, not a single str.")
        names = np.asarray(list(given), dtype=str)
        if names.shape != (n_features,):
            raise ValueError(
                f"feature_names has {names.size} entries but {path.name} has {n_features} features."
            )
        return names
    if found is not None:
        if found.shape != (n_features,):
            raise ValueError(
                f"{path.name}: the feature-name variable has {found.size} entries but X has "
                f"{n_features} features."
            )
        return found
    return default_feature_names(n_features)


def _as_labels(values: Any) -> np.ndarray:
    """Dense 1-D label vector from what a file holds (column vectors, sparse, cell arrays)."""
    if sp.issparse(values):
        values = values.toarray()
    y = np.asarray(values)
    if y.dtype == object or y.dtype.kind in "US":
        y = _strings(y)
    return y.ravel()


def _strings(arr: Any) -> np.ndarray:
    """Flatten a MATLAB cell array / char matrix / str array into a 1-D array of str."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "S":
        arr = np.char.decode(arr, "utf-8")
    if arr.dtype.kind == "U":
        # MATLAB pads the rows of a char matrix with spaces
        return np.char.rstrip(arr.reshape(-1))
    out: list[str] = []
    for item in arr.ravel():
        if isinstance(item, np.ndarray):
            sub = _strings(item)
            out.append("".join(sub.tolist()) if sub.size else "")
        else:
            out.append(str(item))
    return np.asarray(out, dtype=str)


def _to_csr_or_array(X: Any) -> Any:
    if sp.issparse(X):
        return sp.csr_matrix(X)
    return np.asarray(X)


# -- .mat ------------------------------------------------------------------------------------


def _read_mat(path: Path, target: str | None) -> tuple[Any, np.ndarray | None, Any]:
    try:
        version = scipy.io.matlab.matfile_version(str(path))
    except Exception as exc:
        raise ValueError(f"{path.name} is not a readable MATLAB file: {exc}") from exc
    if version[0] == 2:
        data = _read_mat73(path)
    else:
        data = {k: v for k, v in scipy.io.loadmat(str(path)).items() if not k.startswith("__")}

    x_key = next((k for k in _MAT_X_KEYS if k in data), None)
    if x_key is None:
        raise ValueError(
            f"{path.name} has no data variable named {' or '.join(_MAT_X_KEYS)}; its "
            f"variables are {sorted(data)}."
        )
    X = _to_csr_or_array(data[x_key])
    if X.ndim != 2:
        raise ValueError(f"{path.name}: variable {x_key!r} must be 2-D, got shape {X.shape}.")

    if target is not None:
        if target not in data:
            raise ValueError(
                f"target={target!r} is not a variable of {path.name}; its variables are "
                f"{sorted(data)}."
            )
        y = _as_labels(data[target])
    else:
        y_key = next((k for k in _MAT_Y_KEYS if k in data), None)
        y = None if y_key is None else _as_labels(data[y_key])

    name_key = next((k for k in _NAME_KEYS if k in data), None)
    names = None if name_key is None else _strings(data[name_key])
    return X, y, names


def _read_mat73(path: Path) -> dict[str, Any]:
    """Read the top-level variables of a MATLAB v7.3 (HDF5) file with h5py."""
    try:
        import h5py
    except ImportError as exc:
        raise ImportError(
            f"{path.name} is a MATLAB v7.3 file (HDF5 inside), which scipy cannot read. "
            "Install h5py to read it (pip install h5py), or re-save it in MATLAB with "
            "save(..., '-v7')."
        ) from exc
    out: dict[str, Any] = {}
    with h5py.File(path, "r") as f:
        for key in f:
            if key.startswith("#"):  # '#refs#' and '#subsystem#' hold referenced data
                continue
            value = _h5_value(f, f[key], h5py)
            if value is not None:
                out[key] = value
    return out


def _h5_value(f: Any, node: Any, h5py: Any) -> Any:
    """Convert one MATLAB v7.3 variable; ``None`` for what is not an array (structs...)."""
    matlab_class = node.attrs.get("MATLAB_class", b"")
    if isinstance(matlab_class, bytes):
        matlab_class = matlab_class.decode()
    if isinstance(node, h5py.Group):
        if "MATLAB_sparse" in node.attrs and {"jc", "data"} <= set(node):
            n_rows = int(node.attrs["MATLAB_sparse"])
            jc = np.asarray(node["jc"], dtype=np.int64)
            ir = np.asarray(node["ir"], dtype=np.int64) if "ir" in node else np.zeros(0, int)
            data = np.asarray(node["data"])
            return sp.csc_matrix((data, ir, jc), shape=(n_rows, jc.size - 1)).tocsr()
        return None
    if node.attrs.get("MATLAB_empty"):
        return np.zeros((0, 0))
    # MATLAB is column-major: HDF5 stores the transpose of the MATLAB array.
    raw = np.asarray(node[()])
    if matlab_class == "cell":
        items = [_h5_value(f, f[ref], h5py) for ref in raw.T.ravel()]
        return np.asarray(["".join(_strings(i).tolist()) for i in items], dtype=str)
    if matlab_class == "char":
        chars = raw.T.astype(np.uint16) if raw.ndim == 2 else raw.reshape(1, -1)
        rows = ["".join(map(chr, row)).rstrip("\x00") for row in np.atleast_2d(chars)]
        return np.asarray(rows, dtype=str)
    return raw.T


# -- .npz ------------------------------------------------------------------------------------


def _read_npz(path: Path, target: str | None) -> tuple[Any, np.ndarray | None, Any]:
    with np.load(path, allow_pickle=False) as archive:
        keys = set(archive.files)
        if {"format", "shape", "data", "indices", "indptr"} <= keys or (
            {"format", "shape", "row", "col", "data"} <= keys
        ):
            return sp.csr_matrix(sp.load_npz(path)), None, None
        if "X" not in keys:
            raise ValueError(
                f"{path.name} has no array named 'X' (keys: {sorted(keys)}); save it with "
                "np.savez(path, X=X, y=y, feature_names=names) or scipy.sparse.save_npz."
            )
        try:
            X = np.asarray(archive["X"])
            label_key = target if target is not None else ("y" if "y" in keys else None)
            if label_key is None and "Y" in keys:
                label_key = "Y"
            if label_key is not None and label_key not in keys:
                raise ValueError(
                    f"target={target!r} is not an array of {path.name}; keys: {sorted(keys)}."
                )
            y = None if label_key is None else np.asarray(archive[label_key]).ravel()
            names = _strings(archive["feature_names"]) if "feature_names" in keys else None
        except ValueError as exc:
            if "allow_pickle" in str(exc):
                raise ValueError(
                    f"{path.name} stores Python objects, which are not loaded for safety; "
                    "save labels and names as plain arrays, e.g. np.asarray(names, dtype=str)."
                ) from exc
            raise
    if X.ndim != 2:
        raise ValueError(f"{path.name}: 'X' must be 2-D, got shape {X.shape}.")
    return X, y, names


# -- .h5ad -----------------------------------------------------------------------------------


def _survival_columns(frame: Any, time: str, event: str, where: str) -> tuple[Any, np.ndarray]:
    """The structured survival target from two columns of ``frame``, and the frame without
    them."""
    from sparsefs.utils._targets import survival_target

    for name, col in (("time", time), ("event", event)):
        if col not in frame.columns:
            raise ValueError(f"{name}={col!r} is not a column of {where}; columns are "
                             f"{_preview([str(c) for c in frame.columns])}.")
    y = survival_target(frame[event].to_numpy(), frame[time].to_numpy())
    return frame.drop(columns=[time, event]), y


def _read_h5ad(path: Path, target: str | None, groups: str | None = None,
               survival: tuple[str | None, str | None] = (None, None)
               ) -> tuple[Any, np.ndarray | None, Any, Any]:
    try:
        import anndata
    except ImportError as exc:
        raise ImportError(
            f"Reading {path.name} needs the optional dependency anndata: "
            'pip install "sparsefs[anndata]"'
        ) from exc
    adata = anndata.read_h5ad(path)
    if adata.X is None:
        raise ValueError(f"{path.name}: the AnnData object has no X matrix.")
    X = _to_csr_or_array(adata.X)
    y = None
    if target is not None:
        if target not in adata.obs.columns:
            raise ValueError(
                f"target={target!r} is not a column of adata.obs in {path.name}; columns are "
                f"{list(adata.obs.columns)}."
            )
        y = np.asarray(adata.obs[target].to_numpy())
    if survival[0] is not None:
        _, y = _survival_columns(adata.obs, survival[0], survival[1], f"adata.obs in {path.name}")
    g = None
    if groups is not None:
        if groups not in adata.obs.columns:
            raise ValueError(
                f"groups={groups!r} is not a column of adata.obs in {path.name}; columns are "
                f"{list(adata.obs.columns)}."
            )
        g = np.asarray(adata.obs[groups].astype(str).to_numpy())
    names = np.asarray(adata.var_names.astype(str), dtype=str)
    return X, y, names, g


# -- tables ----------------------------------------------------------------------------------


def _read_table(path: Path, ext: str) -> Any:
    import pandas as pd

    if ext == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                f"Reading {path.name} needs the optional dependency pyarrow: "
                'pip install "sparsefs[parquet]"'
            ) from exc
        return pd.read_parquet(path, engine="pyarrow")
    base = ext
    for c in _COMPRESSIONS:
        base = base.removesuffix(c)
    # pandas < 3 parses floats with a fast, not always correctly rounded parser unless told
    # otherwise; pandas 3 is exact by default and deprecates the option.
    exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
    return pd.read_csv(path, sep=_TABLE_SEPARATORS[base], compression="infer", **exact)


def _frame_to_dataset(
    frame: Any,
    path: Path,
    target: str | None,
    feature_names: Iterable[str] | None,
    transpose: bool,
    groups: str | None = None,
) -> Dataset:
    y = None
    g = None
    if groups is not None:  # (not with transpose: load refuses it)
        if groups not in frame.columns:
            raise ValueError(
                f"groups={groups!r} is not a column of {path.name}; columns are "
                f"{_preview([str(c) for c in frame.columns])}."
            )
        g = frame[groups].to_numpy()
        frame = frame.drop(columns=[groups])
    if transpose:
        frame, y = _transpose_frame(frame, path, target)
    elif target is not None:
        if target not in frame.columns:
            raise ValueError(
                f"target={target!r} is not a column of {path.name}; columns are "
                f"{_preview([str(c) for c in frame.columns])}."
            )
        y = frame[target].to_numpy()
        frame = frame.drop(columns=[target])

    bad = [str(c) for c in frame.columns if not _is_numeric(frame[c])]
    if bad:
        raise ValueError(
            f"{path.name}: non-numeric feature column(s) {_preview(bad)}; pass the label "
            "column as target=..., or drop or encode these columns first."
        )
    if frame.shape[1] == 0:
        raise ValueError(f"{path.name}: no feature columns left.")
    dtypes = [frame[c].dtype for c in frame.columns]
    if all(isinstance(d, np.dtype) for d in dtypes):
        X = frame.to_numpy(dtype=np.result_type(*dtypes))
    else:  # pandas extension dtypes (nullable ints, ...): missing values become NaN
        X = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    return _loaded(
        path, X, y, g, feature_names, np.asarray([str(c) for c in frame.columns], dtype=str)
    )


def _transpose_frame(frame: Any, path: Path, target: str | None) -> tuple[Any, Any]:
    """Turn a features x samples table into samples x features (and pull out the label row)."""
    import pandas as pd

    first = frame.columns[0]
    has_row_labels = not _is_numeric(frame[first])
    if has_row_labels:
        frame = frame.set_index(first)
    elif target is not None:
        raise ValueError(
            f"{path.name}: with transpose=True and target={target!r}, the first column must "
            "hold the row labels (feature names), but it is numeric."
        )
    y = None
    if target is not None:
        labels = [str(i) for i in frame.index]
        if target not in labels:
            raise ValueError(
                f"target={target!r} is not a row label of {path.name}; row labels are "
                f"{_preview(labels)}."
            )
        position = labels.index(target)
        y = _infer_labels(frame.iloc[position].to_numpy())
        frame = frame.drop(index=frame.index[position])
    # After removing a label row, the sample columns may still be text: convert per feature.
    out = frame.T.reset_index(drop=True)
    if not has_row_labels:
        out.columns = default_feature_names(out.shape[1])
    converted = {}
    bad = []
    for col in out.columns:
        if _is_numeric(out[col]):
            converted[col] = out[col]
            continue
        try:  # numpy's str -> float conversion is exact (correctly rounded)
            converted[col] = np.asarray(out[col].to_numpy(), dtype=np.float64)
        except (ValueError, TypeError):
            bad.append(str(col))
    if bad:
        raise ValueError(
            f"{path.name}: non-numeric feature row(s) {_preview(bad)} (transpose=True); pass "
            "the label row as target=..., or drop these rows first."
        )
    return pd.DataFrame(converted, columns=out.columns), y


def _infer_labels(values: np.ndarray) -> np.ndarray:
    """Labels from a row of a transposed table: int if all integral, then float, else str."""
    import pandas as pd

    try:
        numeric = pd.to_numeric(pd.Series(values)).to_numpy()
    except (ValueError, TypeError):
        return np.asarray([str(v) for v in values], dtype=object)
    if (
        numeric.dtype.kind == "f"
        and np.all(np.isfinite(numeric))
        and np.all(numeric == np.round(numeric))
    ):
        return numeric.astype(np.int64)
    return numeric


def _is_numeric(column: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(column.dtype))


def _preview(items: list[str], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in items[:limit])
    more = f", ... ({len(items) - limit} more)" if len(items) > limit else ""
    return f"[{shown}{more}]"
