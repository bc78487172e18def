"""Token sets shared by every grammar compiled for one vocabulary.

What it computes
    A ``TokenSetStore`` keeps the per-terminal token sets
    (``terminal_tokens.pyx``'s ``TerminalTokens``) and the DFA state classes
    (``state_classes.state_classes_by_depth``) of one vocabulary trie, keyed by
    *content* rather than by grammar: a DFA terminal by the digest of its
    tables (``dfa_digest``), a literal by its bytes.  Terminal DFAs are
    minimal and canonically numbered (``grammask.terminals``), so JSON's
    string, number and whitespace terminals have the same digest in every
    schema, and a new grammar finds their sets already built: its first
    masks only build what is new in it (xgrammar's adaptive token mask cache
    and llguidance's per-tokenizer slices share work the same way).  A
    literal with several bytes left to match is built by its grammar alone
    (``mask_computer.PRIVATE_LITERAL_BYTES``: cheaper than a lookup here).

Data layout
    ``_entries``: an LRU ``OrderedDict`` from (trie, terminal content key,
    state) to ``TerminalTokens``, at most ``capacity`` entries and
    ``budget_bytes`` estimated bytes (least recently used dropped first).
    ``_classes``: an LRU of (DFA digest, depth) to the state-class tables,
    at most 64 MB.  ``disk``: an optional ``TokenSetDisk``
    (``token_set_disk.py``: one file per entry under
    ``cache_dir()/token-sets/<trie digest>/``), the tier below both LRUs
    for the entries over its vocabulary trie (not those over exit tries) and
    for every state-class table; what it loads enters the LRUs like a build
    and counts in ``disk_hits``, not ``builds``.  The pools that
    let equal dense bitsets and equal exit tries be stored once are weak:
    they hold nothing an entry does not.

Invariants
    Content keys decide everything a build reads: the DFA's tables (hence
    its local state numbers, ``end_state`` included) or the literal's bytes,
    and the trie the set is built over (held by the key, so its identity is
    never reused while the entry lives).  On disk the trie is named by the
    digest of its arrays and every key carries the format version of the
    modules that build the sets, so a load returns what a build would.
    A miss in memory and on disk builds, then writes the new entry at once
    when its build was slow enough to be worth a file (``token_set_disk``'s
    "What is written").  One lock serializes lookups and
    insertions, not builds; entries are immutable, so readers need no lock
    after a lookup.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
import weakref
from collections import OrderedDict

import numpy as np

DEFAULT_CAPACITY = 4096
"""Token-set entries kept per vocabulary (a dense set is 4 bytes per 32
tokens, 16 KB for a 131k vocabulary, and equal sets are stored once)."""

DEFAULT_BUDGET_BYTES = 128 << 20
"""Bytes of token-set entries kept per vocabulary (estimated: arrays plus 16
bytes per exit-trie node); least recently used entries go first."""

_CLASS_BUDGET_BYTES = 64 << 20
"""Bytes of cached state-class tables per vocabulary."""


def _classes_bytes(value) -> int:
    return sum(part.nbytes for part in value) if isinstance(value, tuple) else value.nbytes


DIGEST_CACHE_SIZE = 4096
"""DFAs whose digest ``dfa_digest`` keeps (as many as ``grammask.terminals``
keeps compiled DFAs): the string, number and whitespace DFAs of every grammar
translated from JSON Schema are digested once per process."""


def dfa_digest(dfa) -> bytes:
    """Digest of a DFA's tables (class map, transitions, acceptance):
    equal digests mean equal automata with equal state numbers.  Memoized
    for DFAs hashed and compared by content (``grammask.terminals.DFA``:
    a hit is exact); other objects are digested anew."""
    kind = type(dfa)
    if kind.__eq__ is object.__eq__ or kind.__hash__ is None or kind.__hash__ is object.__hash__:
        return _digest_of(dfa)
    return _cached_digest(dfa)


@functools.lru_cache(maxsize=DIGEST_CACHE_SIZE)
def _cached_digest(dfa) -> bytes:
    return _digest_of(dfa)


def clear_digests() -> None:
    """Forget the memoized DFA digests (``grammask.clear_caches``)."""
    _cached_digest.cache_clear()


def _digest_of(dfa) -> bytes:
    digest = hashlib.blake2b(digest_size=20)
    transitions = np.ascontiguousarray(dfa.transitions, dtype=np.int32)
    digest.update(np.asarray(transitions.shape, dtype=np.int64).tobytes())
    for array, dtype in ((dfa.class_map, np.uint8), (transitions, np.int32),
                         (dfa.accepting, np.bool_)):
        digest.update(np.ascontiguousarray(array, dtype=dtype).tobytes())
    return digest.digest()


class TokenSetStore:
    """Content-addressed token sets of one vocabulary, shared by its grammars."""

    def __init__(self, capacity: int | None = DEFAULT_CAPACITY,
                 budget_bytes: int | None = DEFAULT_BUDGET_BYTES, disk=None):
        self.capacity = capacity
        self.budget_bytes = budget_bytes
        self.disk = disk
        self.builds = 0
        self.disk_hits = 0
        self._bytes = 0
        self._class_bytes = 0
        self.bitset_pool = weakref.WeakValueDictionary()
        self.trie_pool = weakref.WeakValueDictionary()
        self._entries: OrderedDict = OrderedDict()
        self._classes: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, key, build, *args, use_disk: bool = True):
        """The entry stored under ``key``, or ``build(*args, bitset_pool,
        trie_pool)`` stored and returned.  The build runs outside the lock
        (it releases the GIL, so threads build different sets at once); when
        two threads build the same key, the first stored entry wins.
        ``use_disk=False``: a set cheaper to build than to look for on disk
        (the disk tier is neither read nor written for it)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
            bitset_pool, trie_pool = self.bitset_pool, self.trie_pool
        disk = self.disk if use_disk and self.disk is not None and key[0] is self.disk.trie else None
        built = None
        if disk is not None:
            built = disk.load_entry(key[1], key[2], trie_pool)
        loaded = built is not None
        if not loaded:
            start = time.perf_counter()
            built = build(*args, bitset_pool, trie_pool)
            if disk is not None:
                disk.store_entry(key[1], key[2], built, time.perf_counter() - start)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
            entry = built
            if loaded:
                self.disk_hits += 1
            else:
                self.builds += 1
            self._entries[key] = entry
            self._bytes += entry.nbytes
            while len(self._entries) > 1 and (
                    (self.capacity is not None and len(self._entries) > self.capacity)
                    or (self.budget_bytes is not None and self._bytes > self.budget_bytes)):
                self._bytes -= self._entries.popitem(last=False)[1].nbytes
            return entry

    def state_classes(self, digest: bytes, depth: int, build):
        """The cached ``build()`` (a DFA's state representatives at ``depth``)."""
        key = (digest, depth)
        with self._lock:
            value = self._classes.get(key)
            if value is not None:
                self._classes.move_to_end(key)
                return value
        value = self.disk.load_classes(digest, depth) if self.disk is not None else None
        loaded = value is not None
        if not loaded:
            start = time.perf_counter()
            value = build()
            if self.disk is not None:
                self.disk.store_classes(digest, depth, value, time.perf_counter() - start)
        with self._lock:
            self.disk_hits += loaded
            if key not in self._classes:
                self._classes[key] = value
                self._class_bytes += _classes_bytes(value)
            while len(self._classes) > 1 and self._class_bytes > _CLASS_BUDGET_BYTES:
                self._class_bytes -= _classes_bytes(self._classes.popitem(last=False)[1])
        return value

    def clear(self) -> None:
        """Forget every entry (grammars keep the entries they hold)."""
        with self._lock:
            self._entries.clear()
            self._classes.clear()
            self._bytes = 0
            self._class_bytes = 0
            self.bitset_pool = weakref.WeakValueDictionary()
            self.trie_pool = weakref.WeakValueDictionary()
