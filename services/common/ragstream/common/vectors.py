"""L2 normalization, and the check a stored or queried vector passes first.

One place for the float32 math, so the embedders, both search stores and the in-memory
dense index produce bit-identical unit vectors from the same input.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragstream.common.models import Vector

Matrix = npt.NDArray[np.float32]
"""A vector, or one vector per row."""


def l2_normalize(vectors: npt.ArrayLike) -> Matrix:
    """Scaled to unit length along the last axis (rows of a matrix); zero vectors stay zero
    instead of becoming NaN. float32 throughout."""
    values = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(values, axis=-1, keepdims=True)
    out: Matrix = np.divide(values, norms, out=np.zeros_like(values), where=norms > 0)
    return out


def unit_vector(vector: Vector, record_id: str) -> Vector:
    """A record's vector as a 1-D float32 unit vector (a zero vector stays zero); a clear
    error naming the record for anything else."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"record {record_id!r}: vector must be 1-D and non-empty, got {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"record {record_id!r}: vector contains NaN or infinity")
    return l2_normalize(array)
