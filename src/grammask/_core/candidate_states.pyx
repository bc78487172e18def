# cython: language_level=3
"""The canonical lookahead's fresh candidates settled by the Earley states they lead to, in compiled passes.

What it computes
----------------
``settle_from_start(recognizer, ids, token_bytes, start_bytes, start_known,
verdicts, depth)`` probes each candidate token of ``ids`` (given in byte
order) on the recognizer and sorts it into one of four lists:

- *dead*: the grammar refuses its bytes;
- *alive*: the grammar is not narrow after it (``narrow.pxd``), so the
  search ends alive there, or the state after it has a kept verdict that
  says so;
- *keyed*: the search from the state after it is the search from the start
  of a text (every byte the grammar allows next is in ``start_bytes[t]``,
  the bytes that begin a fresh token allowed as at the start of a text,
  ``CanonicalFilter.fresh_first_bytes`` of the canonical state after t),
  but ``verdicts`` (the lookahead's start verdicts, keyed by
  ``EarleyRecognizer.state_key``) holds none deep enough: returned as
  (id, state key) pairs, and a kept dead verdict puts the id in *dead*;
- *other*: everything else (the grammar may end after it, its row of
  ``start_bytes`` is not known yet, or some next byte is not in it): the
  caller searches it as before.

``probe_next_bytes(recognizer, ids, token_bytes)`` probes each candidate of
``ids`` (any canonical state; byte order) and sorts it by what the grammar
says after it alone: *dead* (it refuses the bytes), *wide* (not narrow
after it: the lookahead's search ends alive there) and *narrow*, each with
the bytes the grammar allows after it and whether it may end there.  A
narrow one where the grammar may end is alive when the canonical state
after it is complete, which the caller asks the filter for all of them at
once (in trailing whitespace, where the grammar accepts and allows only
whitespace, every whitespace token is such a candidate at every step); the
next bytes are what the lookahead keys its witnesses by, so it can pick a
witness for each other narrow candidate of a mask and replay them all in
one more pass.

The candidates of one mask that end a counted string (every token of the
length left) meet in one Earley state, and the search from there is the
same for all of them: one Python search per state instead of one per token
(``grammask.engine.lookahead``, ``_prune_fresh``).

``replay_witnesses(recognizer, ids, witnesses, verdicts, depth)`` replays
the witness kept for each fresh candidate (the tokens after it that showed
it alive at an earlier mask; the token being fresh, the canonical filter's
part of it still holds; ``kept_fresh_witnesses`` looks them up) as one probe
of the candidate's bytes and the witness's: the candidate is alive where
the witness still ends the search alive, or ends where the search is the
one from the start of a text and the state there has an alive start verdict
(*keyed* when that verdict is not known yet); the rest go to the search.
The whitespace tokens
before an object's members replay their witnesses this way at every member.

Layout
------
``ids`` int32 (a list for ``replay_witnesses``), in byte order of their
bytes, so each probe keeps the bytes it shares with the previous one
(``token_bytes[t]``: the token's bytes);
``start_bytes`` uint64[V, 4] (a 256-bit byte set per token, ``bitset.pxd``
layout), ``start_known`` uint8[V]; ``verdicts`` maps a 16-byte state key to
(alive, depth checked).

Invariants
----------
The recognizer is left as it was (every probe popped).  An alive verdict
counts only when checked at least ``depth`` deep; a dead one always.
Work: the bytes each probe does not share with the previous one, one byte
set and, for keyed candidates, one state key (the same for every pass).
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.string cimport memcpy
from libc.stdint cimport int32_t, uint8_t, uint64_t

from grammask._core.earley cimport EarleyRecognizer
from grammask._core.bitset cimport byte_set_count, byte_set_to_bytes, byte_set_within
from grammask._core.narrow cimport is_narrow


cdef bytes _key_bytes(const uint64_t* out2):
    """``EarleyRecognizer.state_key``'s 16 bytes from its two words."""
    cdef uint8_t key_bytes[16]
    cdef int i
    for i in range(8):
        key_bytes[i] = <uint8_t>(out2[0] >> (8 * i))
        key_bytes[8 + i] = <uint8_t>(out2[1] >> (8 * i))
    return (<char*>key_bytes)[:16]


cdef Py_ssize_t _probe_sharing(EarleyRecognizer recognizer, const char* data, Py_ssize_t length,
                               const char* previous, Py_ssize_t pushed) except -1:
    """Move the probe from ``previous`` (``pushed`` bytes on the recognizer) to
    ``data``: pop the bytes they do not share, push the rest of ``data`` until the
    grammar refuses one (its pending error raised); returns the bytes now pushed."""
    cdef Py_ssize_t common = 0
    while common < pushed and common < length and data[common] == previous[common]:
        common += 1
    if pushed > common:
        recognizer.pop_bytes(pushed - common)
        pushed = common
    while pushed < length and recognizer.try_push_byte(<uint8_t> data[pushed]):
        pushed += 1
    if pushed < length:
        recognizer.raise_pending_error()
    return pushed


cdef enum:
    PROBE_EMPTY = 0     # the token has no bytes (a special token)
    PROBE_DEAD = 1      # the grammar refuses it
    PROBE_WIDE = 2      # accepted, and the grammar is not narrow after it
    PROBE_NARROW = 3    # accepted, and few bytes may follow


cdef int _probe_token(EarleyRecognizer recognizer, bytes token, const char** previous,
                      Py_ssize_t* pushed, uint64_t* byte_set) except -1:
    """Probe ``token`` (bytes or None) where the probe of ``previous[0]``
    left ``pushed[0]`` bytes on the recognizer (both updated,
    ``_probe_sharing``): a ``PROBE_*`` kind; for WIDE and NARROW,
    ``byte_set`` holds the bytes allowed after it."""
    cdef const char* data
    cdef Py_ssize_t length
    if token is None or not PyBytes_GET_SIZE(token):
        return PROBE_EMPTY
    data = PyBytes_AS_STRING(token)
    length = PyBytes_GET_SIZE(token)
    pushed[0] = _probe_sharing(recognizer, data, length, previous[0], pushed[0])
    previous[0] = data
    if pushed[0] < length:
        return PROBE_DEAD
    recognizer.allowed_bytes(byte_set)
    return PROBE_NARROW if is_narrow(byte_set, <uint8_t> data[length - 1]) else PROBE_WIDE


cdef object _start_verdict(EarleyRecognizer recognizer, dict verdicts, int depth):
    """The kept start verdict of the recognizer's state: True alive (checked at
    least ``depth`` deep), False dead, else the state key (none deep enough)."""
    cdef uint64_t out2[2]
    cdef PyObject* found
    if not recognizer.state_key_into(out2):
        recognizer.raise_pending_error()
    key = _key_bytes(out2)
    found = PyDict_GetItem(verdicts, key)
    if found != NULL and not (<tuple> found)[0]:
        return False
    if found != NULL and (<tuple> found)[1] >= depth:
        return True
    return key


@cython.boundscheck(False)
@cython.wraparound(False)
def settle_from_start(EarleyRecognizer recognizer, const int32_t[::1] ids, object token_bytes,
                      const uint64_t[:, ::1] start_bytes, const uint8_t[::1] start_known,
                      dict verdicts, int depth):
    """(alive ids, dead ids, keyed (id, state key) pairs, other ids); see the module docstring."""
    cdef list alive = [], dead = [], keyed = [], other = []
    cdef Py_ssize_t k, n = ids.shape[0], pushed = 0
    cdef const char* previous = NULL
    cdef int32_t token_id
    cdef uint64_t byte_set[4]
    cdef int kind
    try:
        for k in range(n):
            token_id = ids[k]
            kind = _probe_token(recognizer, token_bytes[token_id], &previous, &pushed, byte_set)
            if kind == PROBE_EMPTY:
                other.append(token_id)
                continue
            if kind == PROBE_DEAD:
                dead.append(token_id)
                continue
            if kind == PROBE_WIDE:
                alive.append(token_id)
                continue
            if recognizer.accepting() or not start_known[token_id]:
                other.append(token_id)
                continue
            if not byte_set_within(byte_set, &start_bytes[token_id, 0]):
                other.append(token_id)
                continue
            verdict = _start_verdict(recognizer, verdicts, depth)
            if verdict is False:
                dead.append(token_id)
            elif verdict is True:
                alive.append(token_id)
            else:
                keyed.append((token_id, verdict))
    finally:
        if pushed:
            recognizer.pop_bytes(pushed)
    return alive, dead, keyed, other


def kept_fresh_witnesses(list candidate_ids, bytes position, object at_position, object by_token):
    """(ids, witnesses) of the candidates with a kept witness: the one kept at
    (id, ``position``) in ``at_position``, else the first of the id's tuple in
    ``by_token`` (dicts or ``OrderedDict`` FIFOs); in the candidates' order
    (the lookahead's fresh witnesses, ``grammask.engine.lookahead``)."""
    cdef list ids = [], witnesses = []
    cdef PyObject* found
    if not (isinstance(at_position, dict) and isinstance(by_token, dict)):
        raise TypeError("kept_fresh_witnesses needs two dicts")
    for token_id in candidate_ids:
        found = PyDict_GetItem(at_position, (token_id, position))
        if found == NULL:
            found = PyDict_GetItem(by_token, token_id)
            if found == NULL:
                continue
            found = PyTuple_GET_ITEM(<tuple> found, 0)
        ids.append(token_id)
        witnesses.append(<object> found)
    return ids, witnesses


def replay_witnesses(EarleyRecognizer recognizer, list ids, list witnesses, dict verdicts, int depth):
    """(alive ids, keyed (index, state key, depth left) triples) of fresh
    candidates replaying kept witnesses: ``witnesses[k]`` is (candidate
    ``ids[k]``'s bytes followed by its witness's, the fresh first bytes of
    the canonical state after them when the witness ends where the search is
    the one from the start of a text, else no byte (32 bytes,
    ``bitset.pxd``'s byte-set layout), the witness's token count); byte order
    of the candidates keeps the probes short.  Alive: the grammar is not
    narrow after the spelling, or the depth bound is passed there with a
    byte allowed, or every byte the grammar allows next (one at least) is in
    the fresh first bytes and ``verdicts`` holds an alive start verdict at
    least as deep as the depth left for the state there.  Keyed: the same
    without a verdict deep enough.  The others are left out (the witness
    says nothing about them): the grammar refuses the spelling, may end
    after it, allows no byte or one not in the fresh first bytes next, or
    the kept verdict is dead.  The recognizer is left as it was."""
    cdef list alive = [], keyed = []
    cdef Py_ssize_t k, n = len(ids), pushed = 0, length
    cdef const char* data
    cdef const char* previous = NULL
    cdef uint64_t byte_set[4]
    cdef uint64_t end_fresh[4]
    cdef bint any_byte
    cdef int left
    cdef tuple witness
    cdef bytes text, fresh
    if len(witnesses) != n:
        raise ValueError(f"{n} ids but {len(witnesses)} witnesses")
    try:
        for k in range(n):
            witness = witnesses[k]
            text = witness[0]
            data = PyBytes_AS_STRING(text)
            length = PyBytes_GET_SIZE(text)
            pushed = _probe_sharing(recognizer, data, length, previous, pushed)
            previous = data
            if pushed < length or not length:
                continue
            recognizer.allowed_bytes(byte_set)
            left = depth - <int> witness[2]
            any_byte = byte_set_count(byte_set) != 0
            if not is_narrow(byte_set, <uint8_t> data[length - 1]) or (left < 0 and any_byte):
                alive.append(ids[k])
                continue
            if recognizer.accepting() or not any_byte:
                continue
            fresh = witness[1]
            if PyBytes_GET_SIZE(fresh) != 32:
                raise ValueError("a witness's fresh first bytes must be 32 bytes")
            memcpy(end_fresh, PyBytes_AS_STRING(fresh), 32)
            if not byte_set_within(byte_set, end_fresh):
                continue
            verdict = _start_verdict(recognizer, verdicts, left)
            if verdict is True:
                alive.append(ids[k])
            elif verdict is not False:
                keyed.append((k, verdict, left))
    finally:
        if pushed:
            recognizer.pop_bytes(pushed)
    return alive, keyed


@cython.boundscheck(False)
@cython.wraparound(False)
def probe_next_bytes(EarleyRecognizer recognizer, const int32_t[::1] ids, object token_bytes):
    """(dead ids, wide ids, narrow rows, other ids): each narrow candidate as
    (id, the 32-byte set of bytes the grammar allows after it, whether the
    grammar may end there); *other*: the ids without bytes.  See the module
    docstring."""
    cdef list dead = [], wide = [], narrow = [], other = []
    cdef Py_ssize_t k, n = ids.shape[0], pushed = 0
    cdef const char* previous = NULL
    cdef int32_t token_id
    cdef uint64_t byte_set[4]
    cdef int kind
    try:
        for k in range(n):
            token_id = ids[k]
            kind = _probe_token(recognizer, token_bytes[token_id], &previous, &pushed, byte_set)
            if kind == PROBE_EMPTY:
                other.append(token_id)
            elif kind == PROBE_DEAD:
                dead.append(token_id)
            elif kind == PROBE_WIDE:
                wide.append(token_id)
            else:
                narrow.append((token_id, byte_set_to_bytes(byte_set), recognizer.accepting()))
    finally:
        if pushed:
            recognizer.pop_bytes(pushed)
    return dead, wide, narrow, other
