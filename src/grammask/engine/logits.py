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
    ``check_logits`` / ``check_bitmask`` validate everything before anything
    is written (and, in ``Engine.modify_possible_logits``, before the token is
    accepted): a wrong kind of object or dtype raises ``InvalidArgumentType``,
    a read-only array or a tensor that requires grad ``InvalidArgument``, a
    shape that does not fit the vocabulary ``VocabularyError``, a row outside
    the bitmask ``IndexOutOfRange``.  Only ``-inf`` is written, and only to
    disallowed columns.
"""

from __future__ import annotations

import numpy as np

from grammask._core.logits import copy_row, mask_rows
from grammask.bitset import column_flags
from grammask.errors import IndexOutOfRange, InvalidArgument, InvalidArgumentType, VocabularyError

__all__ = ["apply_mask", "check_bitmask", "check_logits", "write_bitmask"]


def _torch_tensor_type():
    """torch.Tensor when torch is already imported (an object cannot be a
    tensor otherwise), else None."""
    import sys

    torch = sys.modules.get("torch")
    return None if torch is None else torch.Tensor


def _kind(array, what: str) -> str:
    """"numpy" or "torch"; anything else raises InvalidArgumentType."""
    if isinstance(array, np.ndarray):
        return "numpy"
    tensor = _torch_tensor_type()
    if tensor is not None and isinstance(array, tensor):
        return "torch"
    raise InvalidArgumentType(f"{what} must be a numpy array or a torch tensor, got {type(array).__name__}")


def check_bitmask(bitmask, n_words: int, row) -> None:
    """Raise (typed, see the module docstring) unless ``bitmask`` is a
    writable int32 numpy array or torch tensor of shape [n_words] (``row``
    0) or [rows, n_words] with ``0 <= row < rows``."""
    kind = _kind(bitmask, "bitmask")
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)):
        raise InvalidArgumentType(f"row must be an int, got {type(row).__name__}")
    if kind == "numpy":
        if bitmask.dtype != np.int32:
            raise InvalidArgumentType(f"bitmask must have dtype int32, got {bitmask.dtype}")
        if not bitmask.flags.writeable:
            raise InvalidArgument("bitmask array is read-only")
    else:
        import torch
        if bitmask.dtype != torch.int32:
            raise InvalidArgumentType(f"bitmask must have dtype torch.int32, got {bitmask.dtype}")
    shape = tuple(bitmask.shape)
    if len(shape) == 1:
        if shape[0] != n_words:
            raise VocabularyError(f"bitmask has {shape[0]} words, expected {n_words}")
        if row != 0:
            raise IndexOutOfRange(f"row {row} given for a 1-D bitmask (use 0)")
    elif len(shape) == 2:
        if shape[1] != n_words:
            raise VocabularyError(f"bitmask rows have {shape[1]} words, expected {n_words}")
        if not 0 <= row < shape[0]:
            raise IndexOutOfRange(f"row {row} outside a bitmask of {shape[0]} rows")
    else:
        raise VocabularyError(f"bitmask must be 1-D or 2-D, got shape {shape}")


_INT32 = np.dtype(np.int32)


def write_bitmask(bitmask, bits: np.ndarray, row: int = 0) -> None:
    """Write ``bits`` into row ``row`` of an int32 [rows, n_words] array (or
    into a 1-D [n_words] one), numpy or torch.  A writable C-contiguous 2-D
    numpy array (what a decoding loop passes every step) takes one
    ``memcpy`` (``_core.logits.copy_row``) after the checks it needs."""
    if (type(bitmask) is np.ndarray and bitmask.dtype is _INT32 and type(row) is int
            and bitmask.ndim == 2 and bitmask.flags.c_contiguous and bitmask.flags.writeable
            and copy_row(bitmask, row, bits)):
        return
    check_bitmask(bitmask, len(bits), row)
    target_row = None if len(bitmask.shape) == 1 else int(row)
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
    """Raise (typed, see the module docstring) unless ``logits`` is a
    writable floating-point numpy array or torch tensor (not requiring
    grad), 1-D or 2-D with at least ``vocab_size`` columns."""
    if _kind(logits, "logits") == "numpy":
        if logits.dtype.kind != "f":
            raise InvalidArgumentType(f"logits must be floating point, got dtype {logits.dtype}")
        if not logits.flags.writeable:
            raise InvalidArgument("logits array is read-only")
    else:
        if not logits.dtype.is_floating_point:
            raise InvalidArgumentType(f"logits must be floating point, got dtype {logits.dtype}")
        if logits.requires_grad:
            raise InvalidArgument("logits tensor requires grad: mask it under torch.no_grad() "
                                  "or pass a detached tensor")
    shape = tuple(logits.shape)
    if len(shape) not in (1, 2):
        raise VocabularyError(f"logits must be 1-D or [rows, V], got shape {shape}")
    if shape[-1] < vocab_size:
        raise VocabularyError(
            f"logits have {shape[-1]} entries but the vocabulary has {vocab_size} tokens")


def apply_mask(logits, bits: np.ndarray, vocab_size: int) -> None:
    """Mask ``logits`` (checked by ``check_logits``) in place with ``bits``."""
    if isinstance(logits, np.ndarray):
        _mask_numpy(logits, bits, vocab_size)
        return
    import torch
    if logits.device.type == "cpu" and logits.dtype in (torch.float32, torch.float64):
        _mask_numpy(logits.numpy(), bits, vocab_size)
        return
    allowed = column_flags(bits, logits.shape[-1], vocab_size)
    keep = torch.from_numpy(allowed).to(logits.device)
    logits.masked_fill_(~keep, float("-inf"))


def _mask_numpy(logits: np.ndarray, bits: np.ndarray, vocab_size: int) -> None:
    rows = logits if logits.ndim == 2 else logits[None, :]
    if rows.dtype in (np.float32, np.float64):
        mask_rows(rows, bits, vocab_size)
    else:
        rows[:, ~column_flags(bits, rows.shape[-1], vocab_size)] = -np.inf
