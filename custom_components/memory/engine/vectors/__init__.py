"""Vectors: the in-memory vector index and the model's cosine scale.

`index` (the numpy index and the vec0 one for comparisons), `codes` (binary
codes after a fixed rotation, and their stored form), `scale` (how unrelated texts score with the
model in use), `reading` (how well the model reads a language, measured), `threads` (numpy's BLAS on one thread).
"""

from .codes import (
    code_blob_size,
    code_fingerprint,
    codes_from_blobs,
    codes_to_blobs,
    encode_unit,
)
from .index import (
    BACKEND_NUMPY,
    BACKEND_SQLITE_VEC,
    NumpyIndex,
    SqliteVecIndex,
    VectorIndex,
    as_unit_vector,
    as_unit_vectors,
)
from .reading import Reading, Readings, measure_reading
from .scale import SAMPLE_SIZE, CosineScale, Scale
from .threads import find_blas, use_one_blas_thread

__all__ = [
    "BACKEND_NUMPY",
    "BACKEND_SQLITE_VEC",
    "SAMPLE_SIZE",
    "CosineScale",
    "NumpyIndex",
    "Reading",
    "Readings",
    "Scale",
    "SqliteVecIndex",
    "VectorIndex",
    "as_unit_vector",
    "as_unit_vectors",
    "code_blob_size",
    "code_fingerprint",
    "codes_from_blobs",
    "codes_to_blobs",
    "encode_unit",
    "find_blas",
    "measure_reading",
    "use_one_blas_thread",
]
