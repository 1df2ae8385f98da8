"""drtriton: turn PyTorch programs into fast, verified Triton kernels (the DRTriton method)."""

from __future__ import annotations

__version__ = "0.1.0"
