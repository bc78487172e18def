"""The disk tier of the ``TokenSetStore``: token sets kept across processes.

What it computes
    ``TokenSetDisk`` reads and writes the entries of a vocabulary's
    ``TokenSetStore`` (``TerminalTokens`` over the vocabulary trie, with
    their exit tries) and its DFA state-class tables, so a new process finds
    the sets an earlier one built (the issue "Cold path at peer speed": JSON's
    string, number and whitespace terminals are the same in every schema).
    A load never returns what a fresh build would not: every file carries the
    digest of its full key, which includes a format version, and a checksum;
    anything else is ignored (and replaced by the next write).

Data layout
    ``cache_dir()/token-sets/<trie digest>/<key digest>.ts``: one directory
    per vocabulary trie (``trie_digest``: blake2b over the vocabulary size and
    the trie's four arrays, so two vocabularies share a directory only when
    every set over them is equal), one file per entry.  One file per entry
    was chosen by measured cost (docs/benchmarks.md): a load of a small set
    costs 60-120 µs (0.1-0.3 ms before the checks and the parse were
    compiled loops and single views), most of it Python around the file
    calls, so one file per vocabulary would save little and need appends
    and compaction shared between processes; here writers never rewrite
    others' entries and a rename is the only synchronisation.  A file is::

        magic b"GMTSET03" | key digest (32) | header (int64[HEADER]) |
        arrays, int32 first, the uint8 one last | CRC-32 of all before (uint32)

    A state-class table's labels (``rows``) are that uint8 array, each
    label in the fewest bytes that hold the largest (1, 2 or 4, little
    endian; the header says which): most are below 256, and the tables of
    terminals with a capped whitespace run (hundreds of states, 46 rows)
    took 50-200 KB as int32, which a load read and checksummed in 40-130
    µs of a new schema's compile.

    The key digest is blake2b-256 over ``format_version()``, the entry kind
    and the store key (content key bytes and state, or DFA digest and depth).
    Each process lists a directory once, at its first lookup there, and
    opens only files in that listing (plus those it wrote): a miss costs a
    set lookup, not a failed ``open``; files other processes write later are
    seen by the next process.

What is written
    Only sets whose build took at least ``MIN_BUILD_SECONDS`` and whose file
    is at most ``BYTES_PER_BUILD_SECOND`` times the build time: a load costs
    60-120 µs plus a few ms per MB (docs/benchmarks.md), so a short
    literal's or a small DFA state's set is cheaper to build than to read,
    and an exit trie of most of the vocabulary about as cheap to merge as to
    check.  A write is queued right after the build: one daemon thread per
    process serializes and writes (the first process compiling the demo's
    person schema writes 13-20 files in 16-56 ms, docs/benchmarks.md, off
    the compile and mask thread), and exit waits
    for it (at most 30 s; ``flush()`` waits explicitly).  At most
    ``MAX_PENDING`` writes wait; later ones are dropped (a miss next time),
    so the queue never holds more than that many entries alive.

``format_version()``
    blake2b over ``FORMAT`` (a constant bumped by hand when the file layout
    changes) and the bytes of the compiled modules whose output is stored:
    ``terminal_tokens`` (the walks, with the inlined ``narrow``/``bitset``
    helpers), ``exit_trie`` (the merge), ``trie_walk`` (``TrieView``),
    ``state_classes`` (the refinement) and ``mask_computer`` (the rows it
    keeps).  Hashing the binaries rather than
    trusting a hand-bumped constant alone means a rebuilt module with a
    changed walk can never read sets its predecessor wrote; the cost is that
    any rebuild of these modules starts from an empty disk tier.  The trie's
    own layout is covered by the trie digest.

Invariants
    * Writes go to a temporary file in the same directory, then
      ``os.replace``: readers see a whole file or none, concurrent writers of
      one key leave one of their files.  Those files hold the same sets; only
      ``end_state`` ("a state where the terminal may end") may be another
      valid one, as when two grammars of one process reach a key first.
    * A read allocates at most the file's size (at most ``MAX_FILE_BYTES``)
      and checks magic, key digest, checksum, that the header's lengths add
      up to the file's size exactly, and every id's and offset's range before an
      array is used (an exit trie's ``max_depth`` must cover its height: the walks
      size their stacks by it); the arrays are views of the bytes read.
      Loaded sets enter the store's LRUs like built ones, so what is kept in
      memory stays under the store's ``capacity`` and ``budget_bytes``.
    * Each directory is kept under ``max_bytes`` (``DEFAULT_MAX_BYTES``, or
      ``$GRAMMASK_TOKEN_SET_DISK_BYTES``): when this process's running count
      passes it, the directory is scanned and the oldest-written files
      removed until it holds at most three quarters of it.  Other processes
      writing at once may overshoot it by what they wrote since their scan.
    * ``GRAMMASK_NO_DISK_CACHE=1`` (read at every access) turns reads and
      writes off; I/O errors turn into misses.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import struct
import threading
import time
import zlib

import numpy as np

from grammask._core.terminal_tokens import TerminalTokens
from grammask._core.trie_walk import TrieView, all_within
from grammask.config import cache_dir, disk_caches_enabled

FORMAT = b"grammask-token-sets-3"
"""Bumped by hand whenever the file layout below changes."""

MAGIC = b"GMTSET03"
DEFAULT_MAX_BYTES = 512 << 20
"""Disk bytes per vocabulary trie (oldest-written files go first)."""
MAX_FILE_BYTES = 64 << 20
"""Larger files are never read (nor written; nor are files over a quarter of
the directory's cap, so the file just written never has to stay over it)."""

MIN_BUILD_SECONDS = 0.4e-3
"""Sets built faster than this are not written: a load of a small file
costs 60-250 µs (Python around the file calls, measured in
docs/benchmarks.md), about what a literal's or a short DFA state's build
costs.  (It was 1 ms until the trie walks got twice as fast: an e-mail
address's first state on tekken then built in 0.6-0.8 ms, was never
written, and every process built it again.)"""
BYTES_PER_BUILD_SECOND = 100 << 20
"""Nor are files over this many bytes per second of build (reading and
checking 1 MB costs about as much as merging the exit trie it holds)."""

MAX_PENDING = 256
"""Queued writes beyond this are dropped."""

_KEY_BYTES = 32
_SUM_BYTES = 4
_ENTRY, _CLASSES = 1, 2
# Entry header: kind, dense, n_inside, end_state, has_exit_trie, trie max depth,
# then the element counts of the nine arrays of _ENTRY_ARRAYS.
_ENTRY_HEADER = 15
_ENTRY_INT32S = 8
_ENTRY_ARRAYS = (np.int32,) * _ENTRY_INT32S + (np.uint8,)
# Classes header: kind, rows, states, bytes per label.
_CLASSES_HEADER = 4
_LABEL_DTYPES = {1: np.dtype(np.uint8), 2: np.dtype("<u2"), 4: np.dtype("<i4")}

_version = None
_version_lock = threading.Lock()


def format_version() -> bytes:
    """``FORMAT`` and the compiled modules whose output is stored (see the module docstring)."""
    global _version
    if _version is None:
        from grammask._core import exit_trie, mask_computer, state_classes, terminal_tokens, trie_walk

        digest = hashlib.blake2b(FORMAT, digest_size=20)
        for module in (terminal_tokens, exit_trie, trie_walk, state_classes, mask_computer):
            with open(module.__file__, "rb") as file:
                digest.update(hashlib.blake2b(file.read(), digest_size=20).digest())
        with _version_lock:
            _version = digest.digest()
    return _version


_KEY_FIELDS = struct.Struct("<qqq")
_keyed = None


def _keyed_hasher():
    """A blake2b-256 hasher already fed ``format_version()``: each key digest
    copies it instead of hashing the version again."""
    global _keyed
    if _keyed is None:
        _keyed = hashlib.blake2b(format_version(), digest_size=_KEY_BYTES)
    return _keyed


def trie_digest(trie, vocab_size: int) -> str:
    """Hex digest of a ``TrieView``'s arrays and the vocabulary size."""
    digest = hashlib.blake2b(b"grammask-trie", digest_size=16)
    digest.update(struct.pack("<qq", vocab_size, trie.max_depth))
    for array in trie.arrays():
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _cap_from_env() -> int:
    try:
        return int(os.environ["GRAMMASK_TOKEN_SET_DISK_BYTES"])
    except (KeyError, ValueError):
        return DEFAULT_MAX_BYTES


class TokenSetDisk:
    """The on-disk entries of one vocabulary trie (see the module docstring)."""

    def __init__(self, trie, vocab_size: int, max_bytes: int | None = None,
                 background: bool = True):
        self.trie = trie
        self.background = background
        self.vocab_size = vocab_size
        self.n_words = trie.n_words
        self.max_bytes = max_bytes
        self.hits = 0
        self.writes = 0
        self.write_seconds = 0.0      # spent in writes (serialize, file, rename, eviction)
        self._digest = None
        self._written: dict = {}      # directory -> bytes this process counts in it
        self._names: dict = {}        # directory -> names of its files (listed once)
        self._directories: dict = {}  # cache_dir() -> this trie's directory under it
        self._lock = threading.Lock()

    # --- paths ---------------------------------------------------------------

    def directory(self) -> str:
        """This trie's directory under ``cache_dir()`` (the environment is
        read at every call; the path is kept per cache directory)."""
        root = cache_dir()
        path = self._directories.get(root)
        if path is None:
            if self._digest is None:
                self._digest = trie_digest(self.trie, self.vocab_size)
            path = self._directories[root] = os.path.join(root, "token-sets", self._digest)
        return path

    @staticmethod
    def _key_digest(kind: int, content: bytes, number: int) -> bytes:
        digest = _keyed_hasher().copy()
        digest.update(_KEY_FIELDS.pack(kind, len(content), number))
        digest.update(content)
        return digest.digest()

    # --- token sets ----------------------------------------------------------

    def load_entry(self, content: bytes, state: int, trie_pool):
        """The ``TerminalTokens`` stored for (content key, state), or None;
        an equal exit trie already in ``trie_pool`` is shared.  A dense
        inside set stays a view of the bytes read: pooling it with equal
        bitsets (what builds do) meant copying and hashing 16 KB, a fifth
        of a load, and the store's byte budget bounds it either way."""
        if not disk_caches_enabled():
            return None
        key = self._key_digest(_ENTRY, content, state)
        parts = self._read(key, _ENTRY, _ENTRY_HEADER)
        if parts is None:
            return None
        try:
            entry = self._entry_from(parts, trie_pool)
        except (ValueError, TypeError, OverflowError):
            entry = None
        if entry is None:
            self._discard(key)
        else:
            self.hits += 1
        return entry

    def store_entry(self, content: bytes, state: int, entry, build_seconds: float = 1.0) -> None:
        """Write ``entry`` unless disabled or cheaper to build than to load."""
        if build_seconds < MIN_BUILD_SECONDS or not disk_caches_enabled():
            return
        trie = entry.exit_trie
        header = [_ENTRY, int(entry.inside_bits is not None), entry.n_inside, entry.end_state,
                  int(trie is not None), trie.max_depth if trie is not None else 0]
        inside = entry.inside_bits if entry.inside_bits is not None else entry.inside_ids
        arrays = [np.asarray(inside).view(np.int32), entry.exit_nodes, entry.narrow_ids,
                  entry.closing_ids, entry.closing_space_ids]
        if trie is not None:
            node_bytes, ends, offsets, ids = trie.arrays()
            arrays += [ends, offsets, ids, node_bytes]
        else:
            arrays += [np.zeros(0, np.int32)] * 3 + [np.zeros(0, np.uint8)]
        arrays = [np.ascontiguousarray(array, dtype=dtype)
                  for array, dtype in zip(arrays, _ENTRY_ARRAYS)]
        header += [len(array) for array in arrays]
        if sum(array.nbytes for array in arrays) > build_seconds * BYTES_PER_BUILD_SECOND:
            return
        self._write(self._key_digest(_ENTRY, content, state), header, arrays)

    def _entry_from(self, parts, trie_pool):
        header, arrays = parts
        _, dense, n_inside, end_state, has_trie, max_depth = header[:6]
        inside, exit_nodes, narrow, closing, closing_space, ends, offsets, ids, node_bytes = arrays
        vocab = self.vocab_size
        for ids_array in (narrow, closing, closing_space) + (() if dense else (inside,)):
            if not all_within(ids_array, 0, vocab):
                return None
        if not all_within(exit_nodes, 1, self.trie.n_nodes):
            return None
        if dense:
            if len(inside) != self.n_words:
                return None
            inside = inside.view(np.uint32)
        elif len(inside) != n_inside:
            return None
        exit_trie = None
        if has_trie:
            if not len(exit_nodes) or max_depth < 1 or max_depth > self.trie.max_depth + 1:
                return None
            pool_key = (self.trie, hashlib.blake2b(exit_nodes.tobytes(), digest_size=20).digest())
            exit_trie = trie_pool.get(pool_key) if trie_pool is not None else None
            if exit_trie is None:
                # ``TrieView`` checks the subtree ends, the token offsets and ids
                exit_trie = TrieView(node_bytes, ends, offsets, ids, max_depth, vocab)
                if int(exit_trie.node_heights[0]) + 1 > max_depth:
                    return None
                if trie_pool is not None:
                    exit_trie = trie_pool.setdefault(pool_key, exit_trie)
        elif len(exit_nodes):
            return None
        return TerminalTokens(None if dense else inside, inside if dense else None, exit_trie,
                              end_state, exit_nodes, n_inside, narrow, closing, closing_space)

    # --- state classes -------------------------------------------------------

    def load_classes(self, digest: bytes, depth: int):
        """The (rows, representatives) stored for (DFA digest, depth), or None."""
        if not disk_caches_enabled():
            return None
        key = self._key_digest(_CLASSES, digest, depth)
        parts = self._read(key, _CLASSES, _CLASSES_HEADER)
        if parts is None:
            return None
        (_, n_rows, n_states, width), (representatives, labels) = parts
        if n_states < 1 or n_rows < 1 or width not in _LABEL_DTYPES \
                or len(labels) != n_rows * n_states * width or len(representatives) != n_states \
                or representatives.min() < 0 or representatives.max() >= n_states:
            self._discard(key)
            return None
        rows = labels.view(_LABEL_DTYPES[width]).astype(np.int32)
        if rows.min() < 0:
            self._discard(key)
            return None
        self.hits += 1
        return rows.reshape(n_rows, n_states), representatives

    def store_classes(self, digest: bytes, depth: int, value, build_seconds: float = 1.0) -> None:
        if not disk_caches_enabled() or build_seconds < MIN_BUILD_SECONDS:
            return
        rows, representatives = value
        largest = int(rows.max()) if rows.size else 0
        width = 1 if largest < 1 << 8 else 2 if largest < 1 << 16 else 4
        labels = np.ascontiguousarray(rows, dtype=_LABEL_DTYPES[width]).reshape(-1).view(np.uint8)
        self._write(self._key_digest(_CLASSES, digest, depth),
                    [_CLASSES, rows.shape[0], rows.shape[1], width],
                    [np.ascontiguousarray(representatives, dtype=np.int32), labels])

    # --- files ---------------------------------------------------------------

    @staticmethod
    def _name(key: bytes) -> str:
        return key[:20].hex() + ".ts"

    def _path(self, key: bytes) -> str:
        return os.path.join(self.directory(), self._name(key))

    def _read(self, key: bytes, kind: int, n_header: int):
        """(header list, arrays) of the file of ``key``, or None (the file
        is removed when present but not valid).  A miss (most lookups) costs
        the directory's name and a set lookup."""
        directory, name = self.directory(), self._name(key)
        names = self._names.get(directory)
        if names is None:
            names = {item[1] for item in _listing(directory)}
            with self._lock:
                names = self._names.setdefault(directory, names)
        if name not in names:
            return None
        try:
            descriptor = os.open(os.path.join(directory, name), os.O_RDONLY)
        except OSError:
            names.discard(name)
            return None
        try:
            size = os.fstat(descriptor).st_size
            data = None if size > MAX_FILE_BYTES else _read_all(descriptor, size + 1)
        except OSError:
            data = None
        finally:
            os.close(descriptor)
        parts = None if data is None else self._parse(data, key, kind, n_header)
        if parts is None:
            self._discard(key)
        return parts

    @staticmethod
    def _parse(data: bytes, key: bytes, kind: int, n_header: int):
        start = len(MAGIC) + _KEY_BYTES
        body_end = len(data) - _SUM_BYTES
        header_end = start + 8 * n_header
        if body_end < header_end or data[:len(MAGIC)] != MAGIC or data[len(MAGIC):start] != key:
            return None
        if zlib.crc32(memoryview(data)[:body_end]) != int.from_bytes(data[body_end:], "little"):
            return None
        header = list(struct.unpack_from(f"<{n_header}q", data, start))
        if header[0] != kind:
            return None
        # the int32 arrays first, then the uint8 one (an entry's exit-trie
        # bytes, a class table's labels): one view of the int32 run, sliced,
        # and one of the byte tail
        if kind == _ENTRY:
            counts, n_bytes = header[6:6 + _ENTRY_INT32S], header[6 + _ENTRY_INT32S]
        else:
            counts, n_bytes = [header[2]], header[1] * header[2] * header[3]
        n_int32 = sum(counts)
        if min(counts) < 0 or n_bytes < 0 or header_end + 4 * n_int32 + n_bytes != body_end:
            return None
        int32s = np.frombuffer(data, dtype=np.int32, count=n_int32, offset=header_end)
        arrays = []
        offset = 0
        for count in counts:
            arrays.append(int32s[offset:offset + count])
            offset += count
        arrays.append(np.frombuffer(data, dtype=np.uint8, count=n_bytes, offset=header_end + 4 * n_int32))
        return header, arrays

    def _write(self, key: bytes, header: list, arrays: list) -> None:
        """Write now (``background`` False) or hand the write to the writer
        thread; the path and cap are fixed here, from this thread's view of
        the environment."""
        cap = self.max_bytes if self.max_bytes is not None else _cap_from_env()
        job = (self, self._path(key), key, header, arrays, cap)
        if self.background:
            _WRITER.submit(job)
        else:
            _run(job)

    def _write_file(self, path: str, key: bytes, header: list, arrays: list, cap: int) -> None:
        parts = [MAGIC, key, struct.pack(f"<{len(header)}q", *header)]
        parts += [np.ascontiguousarray(array).tobytes() for array in arrays]
        body = b"".join(parts)
        data = body + zlib.crc32(body).to_bytes(_SUM_BYTES, "little")
        if len(data) > min(MAX_FILE_BYTES, cap // 4):
            return
        directory = os.path.dirname(path)
        temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            os.makedirs(directory, exist_ok=True)
            with open(temporary, "wb") as file:
                file.write(data)
            os.replace(temporary, path)
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            return
        self.writes += 1
        names = self._names.get(directory)
        if names is not None:
            names.add(os.path.basename(path))
        self._account(directory, len(data), os.path.basename(path), cap)

    def _discard(self, key: bytes) -> None:
        directory, name = self.directory(), self._name(key)
        self._names.get(directory, set()).discard(name)
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass

    def _account(self, directory: str, size: int, keep: str, cap: int) -> None:
        with self._lock:
            total = self._written.get(directory)
            if total is None:
                total = _directory_bytes(directory)
            else:
                total += size
            self._written[directory] = total
            if total <= cap:
                return
            self._written[directory] = _evict(directory, cap * 3 // 4, keep)
            self._names.pop(directory, None)


def _read_all(descriptor: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from an open file (fewer only at its end)."""
    chunks = []
    while limit > 0:
        chunk = os.read(descriptor, limit)
        if not chunk:
            break
        chunks.append(chunk)
        limit -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _run(job) -> None:
    disk, path, key, header, arrays, cap = job
    start = time.perf_counter()
    try:
        disk._write_file(path, key, header, arrays, cap)
    finally:
        disk.write_seconds += time.perf_counter() - start


class _Writer:
    """One daemon thread per process that writes the files queued by
    ``TokenSetDisk._write`` (entries are immutable, so it reads them without
    a lock); ``flush()`` waits for the queue, and runs at exit."""

    def __init__(self):
        self._jobs: list = []
        self._busy = False
        self._condition = threading.Condition()
        self._thread = None
        self._pid = None

    def submit(self, job) -> None:
        with self._condition:
            if self._thread is None or self._pid != os.getpid():
                # first use, or a forked child: the parent's thread is not here
                self._jobs, self._busy, self._pid = [], False, os.getpid()
                self._thread = threading.Thread(target=self._loop, name="grammask-token-set-writer",
                                                daemon=True)
                self._thread.start()
            if len(self._jobs) < MAX_PENDING:
                self._jobs.append(job)
                self._condition.notify_all()

    def _loop(self) -> None:
        while True:
            with self._condition:
                while not self._jobs:
                    self._condition.wait()
                job = self._jobs.pop(0)
                self._busy = True
            try:
                _run(job)
            except Exception:   # a write that fails is a miss for the next process
                pass
            finally:
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued write is done; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._condition:
            if self._pid != os.getpid():
                return True
            while self._jobs or self._busy:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._condition.wait(left)
        return True


_WRITER = _Writer()
atexit.register(_WRITER.flush, 30.0)


def flush(timeout: float | None = None) -> bool:
    """Wait for the writes queued so far (tests, benchmarks; exit does it too)."""
    return _WRITER.flush(timeout)


def _listing(directory: str) -> list:
    files = []
    try:
        with os.scandir(directory) as entries:
            for item in entries:
                try:
                    info = item.stat()
                except OSError:
                    continue
                files.append((info.st_mtime_ns, item.name, info.st_size))
    except OSError:
        pass
    return files


def _directory_bytes(directory: str) -> int:
    return sum(size for _, _, size in _listing(directory))


def _evict(directory: str, target: int, keep: str) -> int:
    """Remove the oldest-written files of ``directory`` but ``keep`` (the
    one just written) until it holds at most ``target`` bytes; returns the
    bytes left."""
    files = sorted(_listing(directory))
    total = sum(size for _, _, size in files)
    for _, name, size in files:
        if total <= target:
            break
        if name == keep:
            continue
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            continue
        total -= size
    return total
