"""The minimal form of ``number_nodes``' remainder automaton, for large moduli.

What it computes: ``minimal_remainders(automaton)``, for a
``number_nodes._Remainders``, an automaton with the same interface
(``START``, ``step(state, byte)``, ``accepts(state)``) accepting the same
literals, whose states are the classes of equivalent states (Moore's
partition refinement, as in ``state_classes``' rounds).  A modulus
``K = 2^a 5^b K'`` needs ``K`` remainders for the integer part, but
reading a digit multiplies by ten, so two remainders that differ by a
multiple of ``K'`` lead after ``max(a, b)`` more digits to the same one:
they are equivalent unless the last digits tell their sets apart.
MaskBench's allany8 (steps 33, 12, 77, 6, 7, 44, 11, 13, 8: ``K`` = 24,024
= 8 x 3,003) has 3,071 classes of integer-part remainders instead of 24,024
(its set depends on the value modulo 8 only through the last three digits).

Data layout: the plain automaton is built as arrays (numpy): states
``0`` dead, ``1`` start, ``2`` after ``-``, ``3`` integer part ``0``,
``4`` past the finest step's places (``F``), then the integer part's
remainders ``I_r``, the remainders after ``.`` (``D_r``) and, per number
``j`` of fraction digits read (``0..m``), ``E_r,j``: ``5 + K * (m + 3)``
states, one column per byte of ``number_nodes.NUMBER_BYTES``.  The classes
are numbered from 0; a step into the dead state's class returns None.

Invariant: a literal is accepted iff ``automaton`` accepts it (the arrays
follow ``_Remainders.step`` and ``accepts`` case by case; tests compare
the two on every short literal and against ``jsonschema``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

_MINUS, _DOT, _DIGITS = 0, 1, 2
"""Columns of '-', '.' and '0' (digit d is column 2 + d), as in ``NUMBER_BYTES``."""

_DEAD, _START, _SIGN, _ZERO, _FINER, _FIRST_REMAINDER = 0, 1, 2, 3, 4, 5


def plain_size(modulus: int, n_places: int) -> int:
    """States of the plain automaton's arrays (module docstring)."""
    return _FIRST_REMAINDER + modulus * (n_places + 3)


class MinimalRemainders:
    """A remainder automaton by classes of equivalent states (module docstring)."""

    def __init__(self, table: np.ndarray, accepting: np.ndarray, start: int, dead: int,
                 column_of: dict[int, int], parameters: tuple):
        self.START = start
        self.parameters = parameters
        """The plain automaton's ``parameters``."""
        self.n_states = len(accepting)
        self._table = table.tolist()
        self._accepting = accepting.tolist()
        self._dead = dead
        self._column_of = column_of

    def step(self, state: int, byte: int) -> Optional[int]:
        target = self._table[state][self._column_of[byte]]
        return None if target == self._dead else target

    def accepts(self, state: int) -> bool:
        return self._accepting[state]


def minimal_remainders(automaton, number_bytes: bytes) -> MinimalRemainders:
    """The minimal automaton of ``automaton`` (a ``_Remainders``) over
    ``number_bytes`` (``-``, ``.``, then the digits)."""
    table, accepting = _plain_arrays(automaton)
    classes, n_classes = _moore_classes(table, accepting)
    representative = np.zeros(n_classes, dtype=np.int64)
    representative[classes] = np.arange(len(classes))  # any member: their successors' classes agree
    return MinimalRemainders(classes[table[representative]], accepting[representative],
                             int(classes[_START]), int(classes[_DEAD]),
                             {byte: column for column, byte in enumerate(number_bytes)},
                             automaton.parameters)


def _plain_arrays(automaton) -> tuple[np.ndarray, np.ndarray]:
    """The plain automaton's transition table and accepting flags (module docstring)."""
    modulus, n_places = automaton.modulus, automaton.n_places
    remainders = np.arange(modulus, dtype=np.int64)
    first_i = _FIRST_REMAINDER
    first_d = first_i + modulus

    def first_e(j: int) -> int:
        return first_i + modulus * (2 + j)

    size = plain_size(modulus, n_places)
    table = np.zeros((size, 12), dtype=np.int64)
    accepting = np.zeros(size, dtype=bool)
    for digit in range(10):
        column = _DIGITS + digit
        after_sign = _ZERO if digit == 0 else first_i + digit % modulus
        table[_START, column] = table[_SIGN, column] = after_sign
        shifted = (remainders * 10 + digit) % modulus
        table[first_i:first_d, column] = first_i + shifted
        for j in range(n_places + 1):  # D_r reads digits as E_r,0 does
            for first in ((first_d, first_e(0)) if j == 0 else (first_e(j),)):
                rows = slice(first, first + modulus)
                if j < n_places:
                    table[rows, column] = first_e(j + 1) + shifted
                elif digit == 0:
                    table[rows, column] = first_e(j) + remainders
                elif automaton.finer:
                    table[rows, column] = _FINER
        table[_FINER, column] = _FINER if automaton.finer else _DEAD
    table[_START, _MINUS] = _SIGN
    if automaton.fraction_allowed:
        table[_ZERO, _DOT] = first_d
        table[first_i:first_d, _DOT] = first_d + remainders
    accepting[_FINER] = automaton.finer
    accepting[_ZERO] = automaton.scaled_accepted(np.zeros(1, dtype=np.int64))[0]
    accepting[first_i:first_d] = automaton.scaled_accepted(remainders * 10 ** n_places % modulus)
    for j in range(1 if n_places else 0, n_places + 1):  # E_r,0 is reached only when m = 0
        scaled = remainders * 10 ** (n_places - j) % modulus
        accepting[first_e(j):first_e(j) + modulus] = automaton.scaled_accepted(scaled)
    return table, accepting


def _moore_classes(table: np.ndarray, accepting: np.ndarray) -> tuple[np.ndarray, int]:
    """Each state's class of equivalent states (numbered from 0) and the
    number of classes: blocks split by acceptance, then by the blocks of
    each column's successor until no block splits."""
    classes = accepting.astype(np.int64)
    n_classes = int(classes.max()) + 1
    while True:
        key = classes
        for column in range(table.shape[1]):
            _, key = np.unique(key * n_classes + classes[table[:, column]], return_inverse=True)
        refined = int(key.max()) + 1
        if refined == n_classes:
            return key, n_classes
        classes, n_classes = key, refined
