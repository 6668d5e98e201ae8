"""The vector type every embedder returns, and the normalization they share."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
"""Shape (n, dimensions): one L2-normalized row per input text."""


def l2_normalize(matrix: npt.NDArray[np.floating]) -> Matrix:
    """Rows scaled to unit length; all-zero rows stay zero instead of becoming NaN."""
    values = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    out: Matrix = np.divide(values, norms, out=np.zeros_like(values), where=norms > 0)
    return out
