"""Masks out to the model: int32 bitmasks and ``-inf`` logits.

What it computes
    ``write_bitmask`` copies a token bitset into a row of an int32
    ``[rows, ceil(V/32)]`` array (numpy or torch), xgrammar's layout.
    ``apply_mask`` sets, in place, the logits of tokens a bitset disallows
    to ``-inf`` in a numpy array or torch tensor, 1-D or ``[rows, V']``
    (every row gets the same mask), contiguous or strided; columns from the
    vocabulary size on (padded model vocabularies) are disallowed.

Data layout
    Masks are token bitsets (``grammask.bitset``).  float32 / float64 numpy
    arrays and CPU torch tensors without grad go through the Cython loop
    ``grammask._core.logits.mask_rows``; other dtypes and devices through
    per-column flags and ``masked_fill_``.

Invariants
    A shape or type that does not fit raises ``VocabularyError`` (a row
    index, ``IndexOutOfRange``) before anything is written.  Only ``-inf``
    is written, and only to disallowed columns.
"""

from __future__ import annotations

import numpy as np

from grammask._core.logits import mask_rows
from grammask.bitset import column_flags
from grammask.errors import IndexOutOfRange, VocabularyError

__all__ = ["apply_mask", "check_logits", "write_bitmask"]


def write_bitmask(bitmask, bits: np.ndarray, row: int = 0) -> None:
    """Write ``bits`` into row ``row`` of an int32 [rows, n_words] array (or
    into a 1-D [n_words] one), numpy or torch."""
    n_words = len(bits)
    shape = tuple(bitmask.shape)
    if len(shape) == 1:
        if shape[0] != n_words:
            raise VocabularyError(f"bitmask has {shape[0]} words, expected {n_words}")
        target_row = None
    elif len(shape) == 2:
        if shape[1] != n_words:
            raise VocabularyError(f"bitmask rows have {shape[1]} words, expected {n_words}")
        if not 0 <= row < shape[0]:
            raise IndexOutOfRange(f"row {row} outside a bitmask of {shape[0]} rows")
        target_row = row
    else:
        raise VocabularyError(f"bitmask must be 1-D or 2-D, got shape {shape}")
    words = bits.view(np.int32)
    if isinstance(bitmask, np.ndarray):
        if target_row is None:
            bitmask[:] = words
        else:
            bitmask[target_row, :] = words
        return
    import torch
    source = torch.from_numpy(words.copy()).to(bitmask.device)
    if target_row is None:
        bitmask.copy_(source)
    else:
        bitmask[target_row].copy_(source)


def check_logits(logits, vocab_size: int) -> None:
    """Raise ``VocabularyError`` unless ``logits`` is 1-D or 2-D with at
    least ``vocab_size`` columns."""
    shape = tuple(getattr(logits, "shape", ()))
    if len(shape) not in (1, 2):
        raise VocabularyError(f"logits must be 1-D or [rows, V], got shape {shape}")
    if shape[-1] < vocab_size:
        raise VocabularyError(
            f"logits have {shape[-1]} entries but the vocabulary has {vocab_size} tokens")


def apply_mask(logits, bits: np.ndarray, vocab_size: int) -> None:
    """Mask ``logits`` (numpy or torch, 1-D or 2-D) in place with ``bits``."""
    if isinstance(logits, np.ndarray):
        _mask_numpy(logits, bits, vocab_size)
        return
    import torch
    if isinstance(logits, torch.Tensor):
        if logits.device.type == "cpu" and logits.dtype in (torch.float32, torch.float64) \
                and not logits.requires_grad:
            _mask_numpy(logits.numpy(), bits, vocab_size)
            return
        allowed = column_flags(bits, logits.shape[-1], vocab_size)
        keep = torch.from_numpy(allowed).to(logits.device)
        logits.masked_fill_(~keep, float("-inf"))
        return
    raise VocabularyError(f"logits must be a numpy array or a torch tensor, got {type(logits).__name__}")


def _mask_numpy(logits: np.ndarray, bits: np.ndarray, vocab_size: int) -> None:
    rows = logits if logits.ndim == 2 else logits[None, :]
    if rows.dtype in (np.float32, np.float64):
        if not rows.flags.writeable:
            raise VocabularyError("logits array is read-only")
        mask_rows(rows, bits, vocab_size)
    else:
        rows[:, ~column_flags(bits, rows.shape[-1], vocab_size)] = -np.inf
