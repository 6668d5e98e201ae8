"""The vector type every embedder returns, and the normalization they share (which is
also the stores': ragstream.common.vectors)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragstream.common.vectors import l2_normalize

__all__ = ["Matrix", "l2_normalize"]

Matrix = npt.NDArray[np.float32]
"""Shape (n, dimensions): one L2-normalized row per input text."""
