"""The token sets' disk tier (``grammask._core.token_set_disk``).

Oracles: sets built by ``build_terminal_tokens`` in this process (a loaded
entry must equal the build field by field, exit trie arrays included), and
the masks of an engine whose store never touches the disk
(``GRAMMASK_NO_DISK_CACHE=1``) along a token stream.  Vocabulary: SmolLM2's
49,152 tokens (the demo's), BERT's WordPiece vocabulary as a second one.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import regex

import grammask
from grammask._core import token_set_disk
from grammask._core.earley import compiled_tables
from grammask._core.terminal_tokens import build_terminal_tokens
from grammask._core.token_set_disk import TokenSetDisk
from grammask._core.token_set_store import dfa_digest
from grammask.engine.vocab_tables import vocabulary_tables

SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string"}, "born": {"type": "integer"},
    "city": {"type": "string", "maxLength": 20}, "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "born"]}
DOCUMENT = '{"name": "Ada Lovelace", "born": 1815, "city": "London", "tags": ["math", "poet"]}'

GRAMMARS = {
    "schema": (lambda: grammask.Grammar.from_json_schema(SCHEMA), DOCUMENT),
    "regex": (lambda: grammask.Grammar.from_regex(r"[a-z]+@[a-z]+\.(com|org)( [0-9]{1,4})?"),
              "ada@lovelace.org 1815"),
    "gbnf": (lambda: grammask.Grammar.from_gbnf(
        'root ::= "(" item ("," " "? item)* ")"\nitem ::= [0-9]+ | "\\"" [a-z ]* "\\""'),
             '(12, "ada lovelace",7)'),
}

CONFIG = grammask.Config(canonical=False, mask_cache_entries=0)


@pytest.fixture()
def disk_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAMMASK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GRAMMASK_NO_DISK_CACHE", raising=False)
    # Every set looked up on disk is written, however cheap its build
    # (see test_cheap_builds_are_not_written).
    monkeypatch.setattr(token_set_disk, "MIN_BUILD_SECONDS", 0.0)
    monkeypatch.setattr(token_set_disk, "BYTES_PER_BUILD_SECOND", float("inf"))
    grammask.clear_caches(vocabularies=False)
    yield tmp_path
    grammask.clear_caches(vocabularies=False)


def _files(root) -> list:
    return sorted(path for path in root.rglob("*") if path.is_file())


def _greedy_tokens(vocab, text: str) -> list[int]:
    """Longest-match token ids spelling ``text`` (any tokenization will do)."""
    by_bytes = {}
    for token_id in vocab.allowed_text_token_ids.tolist():
        by_bytes.setdefault(vocab.token_bytes[token_id], token_id)
    data, ids, i = text.encode(), [], 0
    while i < len(data):
        for length in range(min(16, len(data) - i), 0, -1):
            token_id = by_bytes.get(data[i:i + length])
            if token_id is not None:
                ids.append(token_id)
                i += length
                break
        else:
            raise AssertionError(f"no token for {data[i:]!r}")
    return ids


def _masks(vocab, name: str) -> list:
    make_grammar, text = GRAMMARS[name]
    grammask.clear_caches(vocabularies=False)
    engine = grammask.Engine(grammask.compile(make_grammar(), vocab, CONFIG))
    masks = [engine.compute_allowed_token_ids().tolist()]
    for token_id in _greedy_tokens(vocab, text):
        assert engine.try_accept_new_token(token_id)
        masks.append(engine.compute_allowed_token_ids().tolist())
    assert token_set_disk.flush(60)
    return masks


def _fields(entry) -> tuple:
    trie = entry.exit_trie
    return (None if entry.inside_ids is None else entry.inside_ids.tolist(),
            None if entry.inside_bits is None else np.asarray(entry.inside_bits).tolist(),
            entry.n_inside, entry.end_state, entry.exit_nodes.tolist(), entry.narrow_ids.tolist(),
            entry.closing_ids.tolist(), entry.closing_space_ids.tolist(),
            None if trie is None else ([a.tolist() for a in trie.arrays()], trie.max_depth,
                                       trie.n_words, np.asarray(trie.node_heights).tolist()))


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_loaded_sets_equal_fresh_builds(name, smollm2_vocab, disk_dir):
    """Every terminal at its start and at a few states round-trips through
    a file unchanged (bitsets, id lists, exit tries)."""
    grammar = GRAMMARS[name][0]()
    tables = compiled_tables(grammar.lnf)
    trie = vocabulary_tables(smollm2_vocab).trie_view
    size = smollm2_vocab.size
    disk = TokenSetDisk(trie, size, background=False)
    lnf = grammar.lnf
    seen_dense = seen_trie = False
    for terminal, dfa_id in enumerate(lnf.terminal_dfa_ids):
        if dfa_id >= 0:
            dfa = lnf.dfas[dfa_id]
            content = dfa_digest(dfa)
            states = sorted({0, *range(1, min(dfa.n_states, 6))})
        else:
            content = b"literal-%d" % terminal
            states = [0]
        for state in states:
            built = build_terminal_tokens(tables, trie, terminal, state, size)
            disk.store_entry(content, state, built)
            loaded = disk.load_entry(content, state, None)
            assert loaded is not None
            assert _fields(loaded) == _fields(built)
            seen_dense |= built.inside_bits is not None
            seen_trie |= built.exit_trie is not None
    assert disk.hits > 0 and disk.writes == disk.hits
    if name == "schema":
        assert seen_dense and seen_trie


@pytest.mark.parametrize("every_state", [False, True])
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_masks_from_disk_equal_in_memory_masks(name, every_state, smollm2_vocab, disk_dir,
                                               monkeypatch):
    """A second run reads back every file the first wrote, and its masks are
    the ones computed without the disk tier.  With ``every_state`` every set
    over the vocabulary trie goes to disk (``DISK_MIN_NODES`` 0); by default
    a DFA state estimated cheaper to build than to look for is neither read
    nor written, and is built again."""
    from grammask._core import mask_computer

    if every_state:
        monkeypatch.setattr(mask_computer, "DISK_MIN_NODES", 0)
    store = vocabulary_tables(smollm2_vocab).token_sets
    monkeypatch.setenv("GRAMMASK_NO_DISK_CACHE", "1")
    reference = _masks(smollm2_vocab, name)
    assert _files(disk_dir) == []
    monkeypatch.delenv("GRAMMASK_NO_DISK_CACHE")
    hits = store.disk_hits
    cold = _masks(smollm2_vocab, name)
    written = _files(disk_dir)
    assert written and store.disk_hits == hits
    hits, builds = store.disk_hits, store.builds
    warm = _masks(smollm2_vocab, name)
    assert store.disk_hits - hits == len(written)
    if every_state:
        # only sets over exit tries (kept in memory only) are built again
        assert store.builds - builds < store.disk_hits - hits
    assert cold == reference and warm == reference
    assert _files(disk_dir) == written


def test_classes_round_trip(smollm2_vocab, disk_dir):
    store = vocabulary_tables(smollm2_vocab).token_sets
    grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), smollm2_vocab, CONFIG)
    assert token_set_disk.flush(60)
    built = dict(store._classes)
    grammask.clear_caches(vocabularies=False)
    hits = store.disk_hits
    grammask.compile(grammask.Grammar.from_json_schema(SCHEMA), smollm2_vocab, CONFIG)
    assert store.disk_hits - hits == len(built) > 0
    for key, (rows, representatives) in built.items():
        loaded_rows, loaded_representatives = store._classes[key]
        assert np.array_equal(rows, loaded_rows)
        assert np.array_equal(representatives, loaded_representatives)


@pytest.mark.parametrize("largest, width", [(0, 1), (255, 1), (256, 2), (65_535, 2), (65_536, 4)])
def test_class_labels_take_the_fewest_bytes_and_load_as_int32(smollm2_vocab, disk_dir, largest, width):
    """A state-class table is written with each label in 1, 2 or 4 bytes
    (whatever holds the largest) and loads as the int32 table it was;
    a header that names another width is refused."""
    trie = vocabulary_tables(smollm2_vocab).trie_view
    disk = TokenSetDisk(trie, smollm2_vocab.size, background=False)
    rng = np.random.default_rng(largest)
    rows = rng.integers(0, largest + 1, size=(5, 40)).astype(np.int32)
    rows[-1, -1] = largest
    representatives = np.arange(40, dtype=np.int32)
    disk.store_classes(b"digest", 7, (rows, representatives))
    (path,) = _files(disk_dir)
    assert len(path.read_bytes()) < rows.size * width + 40 * 4 + 200
    loaded_rows, loaded_representatives = disk.load_classes(b"digest", 7)
    assert loaded_rows.dtype == np.int32 and np.array_equal(loaded_rows, rows)
    assert np.array_equal(loaded_representatives, representatives)
    key = disk._key_digest(token_set_disk._CLASSES, b"digest", 7)
    header, arrays = disk._read(key, token_set_disk._CLASSES, token_set_disk._CLASSES_HEADER)
    assert header[3] == width
    disk._write(key, header[:3] + [3], [np.array(array) for array in arrays])
    assert disk.load_classes(b"digest", 7) is None


def test_another_vocabulary_gets_no_hit(smollm2_vocab, bert_vocab, disk_dir):
    _masks(smollm2_vocab, "regex")
    before = set(_files(disk_dir))
    store = vocabulary_tables(bert_vocab).token_sets
    grammask.clear_caches(vocabularies=False)
    hits, builds = store.disk_hits, store.builds
    grammask.Engine(grammask.compile(GRAMMARS["regex"][0](), bert_vocab, CONFIG)) \
        .compute_allowed_token_ids()
    assert token_set_disk.flush(60)
    assert store.disk_hits == hits and store.builds > builds
    directories = {path.parent for path in _files(disk_dir)}
    assert len(directories) == 2 and before < set(_files(disk_dir))


def test_corrupt_or_foreign_files_are_ignored_and_replaced(smollm2_vocab, disk_dir):
    reference = _masks(smollm2_vocab, "regex")
    files = _files(disk_dir)
    originals = {path: path.read_bytes() for path in files}
    damage = [
        lambda data: data[: len(data) // 2],                       # truncated
        lambda data: data[:60] + bytes([data[60] ^ 1]) + data[61:],  # flipped bit
        lambda data: b"",                                          # empty
        lambda data: data + b"\0",                                 # grown
    ]
    for i, path in enumerate(files):
        path.write_bytes(damage[i % len(damage)](originals[path]))
    # A valid file under another name (foreign key) is refused too.
    if len(files) > 1:
        files[0].write_bytes(originals[files[1]])
    store = vocabulary_tables(smollm2_vocab).token_sets
    hits = store.disk_hits
    assert _masks(smollm2_vocab, "regex") == reference
    assert store.disk_hits == hits
    assert {path: path.read_bytes() for path in _files(disk_dir)} == originals
    assert _masks(smollm2_vocab, "regex") == reference
    assert store.disk_hits > hits


def test_no_disk_cache_writes_nothing(smollm2_vocab, disk_dir, monkeypatch):
    _masks(smollm2_vocab, "schema")
    assert _files(disk_dir)
    store = vocabulary_tables(smollm2_vocab).token_sets
    hits = store.disk_hits
    monkeypatch.setenv("GRAMMASK_CACHE_DIR", str(disk_dir / "other"))
    monkeypatch.setenv("GRAMMASK_NO_DISK_CACHE", "1")
    _masks(smollm2_vocab, "schema")
    assert not (disk_dir / "other").exists()
    # Nor reads: the files of the first run are not consulted either.
    monkeypatch.setenv("GRAMMASK_CACHE_DIR", str(disk_dir))
    _masks(smollm2_vocab, "schema")
    assert store.disk_hits == hits


def test_byte_cap_holds(smollm2_vocab, disk_dir):
    trie = vocabulary_tables(smollm2_vocab).trie_view
    tables = compiled_tables(grammask.Grammar.from_regex("[a-z ]+").lnf)
    entry = build_terminal_tokens(tables, trie, 0, 0, smollm2_vocab.size)
    assert entry.inside_bits is not None and entry.exit_trie is not None   # 2.4 MB per file
    cap = 10_000_000
    disk = TokenSetDisk(trie, smollm2_vocab.size, max_bytes=cap, background=False)
    for i in range(12):
        time.sleep(0.005)   # distinct modification times, whatever the file system's tick
        disk.store_entry(b"key-%d" % i, 0, entry)
        assert sum(path.stat().st_size for path in _files(disk_dir)) <= cap
    assert disk.writes == 12
    # The newest entries survive; the oldest went first.
    assert disk.load_entry(b"key-11", 0, None) is not None
    assert disk.load_entry(b"key-0", 0, None) is None


def test_format_version_names_the_compiled_modules():
    version = token_set_disk.format_version()
    assert len(version) == 20 and version == token_set_disk.format_version()
    from grammask._core import terminal_tokens
    assert os.path.exists(terminal_tokens.__file__)


def test_files_over_a_quarter_of_the_cap_are_not_written(smollm2_vocab, disk_dir):
    trie = vocabulary_tables(smollm2_vocab).trie_view
    tables = compiled_tables(grammask.Grammar.from_regex("[a-z ]+").lnf)
    entry = build_terminal_tokens(tables, trie, 0, 0, smollm2_vocab.size)
    disk = TokenSetDisk(trie, smollm2_vocab.size, max_bytes=4_000_000, background=False)
    disk.store_entry(b"big", 0, entry)
    assert disk.writes == 0 and _files(disk_dir) == []


def test_cheap_builds_are_not_written(smollm2_vocab, disk_dir, monkeypatch):
    monkeypatch.setattr(token_set_disk, "MIN_BUILD_SECONDS", 0.4e-3)
    monkeypatch.setattr(token_set_disk, "BYTES_PER_BUILD_SECOND", 100 << 20)
    trie = vocabulary_tables(smollm2_vocab).trie_view
    tables = compiled_tables(grammask.Grammar.from_regex("[a-z ]+").lnf)
    entry = build_terminal_tokens(tables, trie, 0, 0, smollm2_vocab.size)
    disk = TokenSetDisk(trie, smollm2_vocab.size, background=False)
    disk.store_entry(b"fast", 0, entry, 0.2e-3)         # built faster than a load
    disk.store_entry(b"large", 0, entry, 2e-3)          # 2.4 MB: over 100 MB/s of build
    assert disk.writes == 0
    disk.store_entry(b"slow", 0, entry, 0.1)
    assert disk.writes == 1


def _run_counted(vocab, pattern: str, piece: bytes, repeats: int) -> tuple:
    """The masks of ``pattern`` along ``repeats`` tokens spelling ``piece``
    (caches cleared first), and the store's builds and disk hits meanwhile."""
    store = vocabulary_tables(vocab).token_sets
    token = next(token for token in range(vocab.size) if vocab.token_bytes[token] == piece)
    grammask.clear_caches(vocabularies=False)
    builds, hits, entries = store.builds, store.disk_hits, len(store)
    engine = grammask.Engine(grammask.compile(grammask.Grammar.from_regex(pattern), vocab, CONFIG))
    masks = [engine.compute_allowed_token_ids().tolist()]
    for _ in range(repeats):
        assert engine.try_accept_new_token(token)
        masks.append(engine.compute_allowed_token_ids().tolist())
    assert token_set_disk.flush(60)
    return masks, store.builds - builds, store.disk_hits - hits, len(store) - entries


def test_cheap_dfa_states_skip_the_disk(smollm2_vocab, disk_dir):
    """A short run of capitals walks a few thousand nodes of SmolLM2's trie
    (between ``PRIVATE_DFA_NODES`` and ``DISK_MIN_NODES``): a grammar's
    masks build its sets into the shared store without reading or writing
    files (even with every build worth a file, as ``disk_dir`` sets), so a
    second grammar of the same content builds them again and reads only
    the state-class tables."""
    first, first_builds, _, _ = _run_counted(smollm2_vocab, "[A-F]{1,4}", b"B", 3)
    files = _files(disk_dir)
    second, second_builds, second_hits, _ = _run_counted(smollm2_vocab, "[A-F]{1,4}", b"B", 3)
    assert first == second and first_builds == second_builds >= 1
    assert second_hits == len(files) and _files(disk_dir) == files


def test_tiny_dfa_states_are_built_for_the_grammar_alone(smollm2_vocab, disk_dir):
    """A counted number's states walk a dozen nodes (``PRIVATE_DFA_NODES``):
    they are built without the shared store (no build or entry there), and
    the masks are what ``regex``'s partial match allows, EOS once the digits
    so far are a match."""
    masks, builds, _, entries = _run_counted(smollm2_vocab, "[0-9]{1,6}", b"7", 5)
    assert builds == 0 and entries == 0
    pattern = regex.compile(rb"[0-9]{1,6}")
    eos = set(smollm2_vocab.eos_token_ids)
    for count, mask in enumerate(masks):
        prefix = b"7" * count
        oracle = {token for token in range(smollm2_vocab.size)
                  if token not in eos and not smollm2_vocab.is_special(token)
                  and smollm2_vocab.token_bytes[token]
                  and pattern.fullmatch(prefix + smollm2_vocab.token_bytes[token], partial=True)}
        if pattern.fullmatch(prefix):
            oracle |= eos
        assert set(mask) == oracle, count


def test_background_writes_land_after_flush(smollm2_vocab, disk_dir):
    trie = vocabulary_tables(smollm2_vocab).trie_view
    tables = compiled_tables(grammask.Grammar.from_regex("[a-z]+").lnf)
    entry = build_terminal_tokens(tables, trie, 0, 0, smollm2_vocab.size)
    disk = TokenSetDisk(trie, smollm2_vocab.size)
    for i in range(5):
        disk.store_entry(b"queued-%d" % i, 0, entry)
    assert token_set_disk.flush(60)
    assert disk.writes == 5 and len(_files(disk_dir)) == 5
    assert _fields(disk.load_entry(b"queued-3", 0, None)) == _fields(entry)


def test_checked_file_with_inconsistent_fields_is_refused(smollm2_vocab, disk_dir):
    """A file whose checksum holds but whose fields do not fit the trie (an
    exit trie deeper than its max_depth, token offsets out of order, ids past
    the vocabulary) is refused."""
    trie = vocabulary_tables(smollm2_vocab).trie_view
    tables = compiled_tables(grammask.Grammar.from_json_schema(SCHEMA).lnf)
    disk = TokenSetDisk(trie, smollm2_vocab.size, background=False)
    lnf = grammask.Grammar.from_json_schema(SCHEMA).lnf
    for terminal in range(len(lnf.terminal_dfa_ids)):
        entry = build_terminal_tokens(tables, trie, terminal, 0, smollm2_vocab.size)
        if entry.exit_trie is not None and entry.exit_trie.max_depth > 2:
            break
    assert entry.exit_trie is not None and entry.exit_trie.max_depth > 2
    key = disk._key_digest(token_set_disk._ENTRY, b"deep", 0)
    disk.store_entry(b"deep", 0, entry)
    header, arrays = disk._read(key, token_set_disk._ENTRY, token_set_disk._ENTRY_HEADER)
    assert disk.load_entry(b"deep", 0, None) is not None
    shallow = list(header)
    shallow[5] = 1
    assert disk._parse(b"", key, 1, 15) is None
    disk._write(key, shallow, [np.array(array) for array in arrays])
    assert disk._read(key, token_set_disk._ENTRY, token_set_disk._ENTRY_HEADER) is not None
    assert disk.load_entry(b"deep", 0, None) is None
    crossed = [np.array(array) for array in arrays]
    crossed[6][1], crossed[6][-1] = crossed[6][-1] + 1, crossed[6][1]   # token offsets out of order
    disk._write(key, list(header), crossed)
    assert disk._read(key, token_set_disk._ENTRY, token_set_disk._ENTRY_HEADER) is not None
    assert disk.load_entry(b"deep", 0, None) is None
    past = [np.array(array) for array in arrays]
    past[2] = np.append(past[2], np.int32(smollm2_vocab.size))   # a narrow id past the vocabulary
    disk._write(key, list(header[:6]) + [len(array) for array in past], past)
    assert disk._read(key, token_set_disk._ENTRY, token_set_disk._ENTRY_HEADER) is not None
    assert disk.load_entry(b"deep", 0, None) is None
