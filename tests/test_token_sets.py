"""Per-terminal token sets: full walks against a byte-by-byte oracle, sets
derived from a hub state against full walks, and sharing between grammars.

Oracles: the inside set of (terminal, state) is every token the terminal's
DFA (``grammask.terminals.DFA.run``, independent of the trie walk) reads
without dying; exits are the token prefixes after which the DFA accepts and
the token goes on.  ``build_terminal_tokens_relative`` must give exactly what
a full walk (``build_terminal_tokens``) gives, from any base state.
"""

from __future__ import annotations

import numpy as np
import pytest
import regex

import grammask
from grammask._core.earley import compiled_tables
from grammask._core.mask_computer import state_classes_by_depth, sub_automaton_digest
from grammask._core.terminal_tokens import build_terminal_tokens, build_terminal_tokens_relative
from grammask._core.trie_walk import TrieView
from grammask.engine.vocab_tables import vocabulary_tables
from support.trie_paths import preorder_paths

PIECES = [bytes([b]) for b in b' \n"{}:,0123456789abdemnx\\'] + [
    b'"', b'""', b'"n', b'"na', b'name', b'named', b'nam', b'me"', b'e":', b'":', b'":"', b'"}',
    b'"name":', b'ab', b'abab', b'cd', b'cdab1', b'a1', b'1;', b'ab;', b'x"', b'\\"', b'\\u00',
    b'  ', b'\n ', b'nn', b'mm"', '\u00e9'.encode(), b'\xc3', b'\xa9"', b'12', b'3.5', b'e+',
]

GRAMMARS = {
    "key_exclusion": lambda: grammask.Grammar.from_json_schema(
        {"type": "object", "properties": {"name": {"type": "string"}, "named": {"type": "integer"}}}),
    "repeats": lambda: grammask.Grammar.from_ebnf('start ::= #"[a-z]{2,5}(ab|cd)*[0-9]?" ";";'),
    "counted": lambda: grammask.Grammar.from_ebnf('start ::= #"[a-z0-9\\"]{0,9}" "}";'),
    "string": lambda: grammask.Grammar.from_ebnf('start ::= #"\\"([^\\"\\\\\\\\]|\\\\\\\\.)*\\"" "}";'),
}


@pytest.fixture(scope="module")
def vocab():
    return grammask.Vocabulary([None, *PIECES], eos_token_ids=[0])


def _ids(entry) -> set[int]:
    if entry.inside_ids is not None:
        return set(entry.inside_ids.tolist())
    bits = np.unpackbits(np.asarray(entry.inside_bits).view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits).tolist())


def _fields(entry) -> tuple:
    return (_ids(entry), entry.n_inside, entry.exit_nodes.tolist(), entry.narrow_ids.tolist(),
            entry.closing_ids.tolist(), entry.closing_space_ids.tolist(),
            None if entry.exit_trie is None else entry.exit_trie.n_nodes)


def _dfa_terminals(grammar):
    lnf = grammar.lnf
    return [(terminal, lnf.dfas[dfa_id]) for terminal, dfa_id in enumerate(lnf.terminal_dfa_ids)
            if dfa_id >= 0]


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_full_walk_matches_dfa_oracle(name, vocab):
    grammar = GRAMMARS[name]()
    tables = compiled_tables(grammar.lnf)
    trie = vocabulary_tables(vocab).trie_view
    token_trie = vocabulary_tables(vocab).trie
    paths = preorder_paths(token_trie.node_bytes, token_trie.node_subtree_ends)
    for terminal, dfa in _dfa_terminals(grammar):
        for state in range(1, dfa.n_states):
            entry = build_terminal_tokens(tables, trie, terminal, state, vocab.size)
            inside = {token for token in range(1, vocab.size)
                      if dfa.run(vocab.token_bytes[token], state) != 0}
            assert _ids(entry) == inside and entry.n_inside == len(inside)
            exits = {data[:cut] for data in vocab.token_bytes[1:] for cut in range(1, len(data))
                     if dfa.is_accepting(dfa.run(data[:cut], state))}
            assert {paths[node] for node in entry.exit_nodes.tolist()} == exits
            assert (entry.exit_trie is None) == (not exits)
            if exits:
                assert dfa.is_accepting(entry.end_state)


def _root_children_reversed(trie):
    """The same trie with the root's subtrees in descending byte order:
    still a valid preorder trie, but not indexed by byte
    (``TrieView.roots_by_byte``), so walks test every root child."""
    node_bytes, ends, offsets, ids = (array.tolist() for array in trie.arrays())
    roots, child = [], 1
    while child < ends[0]:
        roots.append((child, ends[child]))
        child = ends[child]
    order = [0] + [node for start, end in reversed(roots) for node in range(start, end)]
    new_index = {node: index for index, node in enumerate(order)}
    new_bytes = [node_bytes[node] for node in order]
    new_ends = [len(order) if node == 0 else new_index[node] + ends[node] - node for node in order]
    new_ids, new_offsets = [], [0]
    for node in order:
        new_ids += ids[offsets[node]:offsets[node + 1]]
        new_offsets.append(len(new_ids))
    return TrieView(np.asarray(new_bytes, np.uint8), np.asarray(new_ends, np.int32),
                    np.asarray(new_offsets, np.int32), np.asarray(new_ids, np.int32),
                    trie.max_depth, trie.n_words * 32)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_builds_without_the_root_index_equal_builds_with_it(name, vocab):
    """A walk starts from the root children on the bytes its state allows
    when the root's children are in byte order, and tests every child
    otherwise: both give the same sets (exits compared by their bytes)."""
    grammar = GRAMMARS[name]()
    tables = compiled_tables(grammar.lnf)
    trie = vocabulary_tables(vocab).trie_view
    shuffled = _root_children_reversed(trie)
    assert trie.roots_by_byte and not shuffled.roots_by_byte
    paths = preorder_paths(*trie.arrays()[:2])
    shuffled_paths = preorder_paths(*shuffled.arrays()[:2])
    lnf = grammar.lnf
    for terminal, dfa_id in enumerate(lnf.terminal_dfa_ids):
        n_states = lnf.dfas[dfa_id].n_states if dfa_id >= 0 else 1
        for state in range(n_states):
            indexed = build_terminal_tokens(tables, trie, terminal, state, vocab.size)
            walked = build_terminal_tokens(tables, shuffled, terminal, state, vocab.size)
            assert _fields(indexed)[:2] + _fields(indexed)[3:6] \
                == _fields(walked)[:2] + _fields(walked)[3:6], (terminal, state)
            assert [paths[node] for node in indexed.exit_nodes.tolist()] \
                == sorted(shuffled_paths[node] for node in walked.exit_nodes.tolist())


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_relative_build_equals_full_walk_from_every_base(name, vocab):
    grammar = GRAMMARS[name]()
    tables = compiled_tables(grammar.lnf)
    trie = vocabulary_tables(vocab).trie_view
    for terminal, dfa in _dfa_terminals(grammar):
        full = {state: build_terminal_tokens(tables, trie, terminal, state, vocab.size)
                for state in range(1, dfa.n_states)}
        classes = state_classes_by_depth(dfa.transitions, dfa.accepting, trie.max_depth + 1)
        for state, expected in full.items():
            for base_state, base in full.items():
                for depth_classes in (None, classes):
                    derived = build_terminal_tokens_relative(tables, trie, terminal, state,
                                                             vocab.size, base, base_state,
                                                             depth_classes)
                    assert _fields(derived) == _fields(expected), (state, base_state)
                    if derived.exit_trie is not None or len(derived.closing_ids):
                        assert dfa.is_accepting(derived.end_state)


def test_state_classes_by_depth_oracle():
    # Two states share a row-d label iff they agree on dead-ness and
    # acceptance after every input of at most d bytes (checked by brute force
    # over a small alphabet that covers every byte class of the DFA).
    import itertools

    from grammask.terminals import compile_regex

    dfa = compile_regex("(ab|a){0,3}b?")
    alphabet = b"abc"
    rows = state_classes_by_depth(dfa.transitions, dfa.accepting, 4)
    for depth in range(5):
        words = [bytes(w) for n in range(depth + 1) for w in itertools.product(alphabet, repeat=n)]
        def behaviour(state):
            return tuple((dfa.run(w, state) != 0, dfa.is_accepting(dfa.run(w, state))) if state
                         else (False, False) for w in words)
        for one in range(dfa.n_states):
            for other in range(dfa.n_states):
                assert (rows[depth, one] == rows[depth, other]) == (behaviour(one) == behaviour(other))


def _moore_rows(transitions, accepting, depth):
    """Every round of Moore's refinement over all states (the textbook form):
    a state's signature is its label and its successors' labels."""
    table = np.asarray(transitions)
    labels = np.asarray(accepting).astype(np.int32) + 1
    labels[0] = 0
    rows = [labels]
    for _ in range(depth):
        signatures = np.concatenate([labels[:, None], labels[table]], axis=1)
        numbered: dict = {}
        labels = np.array([numbered.setdefault(row.tobytes(), len(numbered)) for row in signatures],
                          dtype=np.int32)
        rows.append(labels)
    return np.array(rows)


@pytest.mark.parametrize("parts", [
    ['"(?:[a-z/:.]|%[0-9A-F]{2}){0,40}"'],                   # a counted pattern
    ["[a-z]+(?:-[a-z]+)*", "[a-z-]{0,30}"],                  # a length-bounded intersection
    ["(ab|a){0,3}b?"], ["[a-z ]{0,80}\\n"], ["x*(?:yz|y)*"],
])
def test_state_classes_by_depth_match_every_round(parts):
    # The refinement re-examines only the predecessors of the states that
    # moved in the round before; every row must still equal the textbook
    # round over all states, including a length-bounded intersection, whose
    # rounds split off the states one count nearer the bound.
    from grammask.terminals import INTERSECTION_SEPARATOR, compile_regex

    dfa = compile_regex(INTERSECTION_SEPARATOR.join(parts),
                        kind="intersection" if len(parts) > 1 else "regex")
    depth = 45
    rows = state_classes_by_depth(dfa.transitions, dfa.accepting, depth)
    assert np.array_equal(rows, _moore_rows(dfa.transitions, dfa.accepting, depth))


def test_equal_languages_share_a_digest():
    from grammask.terminals import compile_regex

    body = compile_regex('"[a-z]*"')
    key = compile_regex('"(?:x|[a-wyz][a-z]*)"')   # the start differs, the body is the same
    inside_body = body.run(b'"')
    inside_key = key.run(b'"a')
    assert sub_automaton_digest(body, inside_body) == sub_automaton_digest(key, inside_key)
    assert sub_automaton_digest(body, inside_body) != sub_automaton_digest(key, key.run(b'"'))
    assert sub_automaton_digest(body, inside_body, limit=1) is None


def test_dfa_digests_are_of_the_tables_memoized_or_not():
    """``dfa_digest`` of a content-hashed DFA (memoized) equals the digest of
    a plain object holding the same tables (digested anew), and a DFA of
    another language has another digest."""
    from types import SimpleNamespace

    from grammask._core.token_set_store import dfa_digest
    from grammask.terminals import compile_regex

    dfa = compile_regex("[0-9]+(?:[.][0-9]+)?")
    plain = SimpleNamespace(transitions=np.array(dfa.transitions), class_map=np.array(dfa.class_map),
                            accepting=np.array(dfa.accepting))
    assert dfa_digest(dfa) == dfa_digest(dfa) == dfa_digest(plain)
    plain.accepting = ~plain.accepting
    plain.accepting[0] = False
    assert dfa_digest(plain) != dfa_digest(dfa) != dfa_digest(compile_regex("[0-9]+"))


def _reachable(dfa, state):
    """States reachable from ``state`` (dead state excluded), by ``DFA.run`` over every byte."""
    seen, stack = {state}, [state]
    while stack:
        current = stack.pop()
        for byte in range(256):
            target = dfa.run(bytes([byte]), current)
            if target and target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


@pytest.mark.parametrize("pattern", ['"[a-z]{0,12}"', "(ab|a){0,3}b?", "[0-9]+(\\.[0-9]{1,4})?", '"(?:x|[a-wyz][a-z]*)"'])
def test_hub_and_digest_limit_match_byte_oracles(pattern):
    """``dfa_hub`` is the live state most (state, byte) transitions enter
    (ties: the smallest), counted here with ``DFA.run`` byte by byte; the
    digest is None exactly when more than ``limit`` states are reachable."""
    from grammask._core.mask_computer import dfa_hub
    from grammask.terminals import compile_regex

    dfa = compile_regex(pattern)
    entered = [0] * dfa.n_states
    for state in range(1, dfa.n_states):
        for byte in range(256):
            entered[dfa.run(bytes([byte]), state)] += 1
    entered[0] = 0
    best = max(entered)
    assert dfa_hub(dfa) == (entered.index(best) if best else 0)
    for state in range(1, dfa.n_states):
        n_reachable = len(_reachable(dfa, state))
        for limit in (1, 2, 5, 64):
            assert (sub_automaton_digest(dfa, state, limit) is None) == (n_reachable > limit), (state, limit)


def test_grammars_share_token_sets_through_the_store(vocab):
    store = vocabulary_tables(vocab).token_sets
    config = grammask.Config(canonical=False, mask_cache_entries=0)
    first = grammask.compile(grammask.Grammar.from_json_schema(
        {"type": "object", "properties": {"a": {"type": "string"}}}), vocab, config)
    second = grammask.compile(grammask.Grammar.from_json_schema(
        {"type": "object", "properties": {"b": {"type": "string"}, "c": {"type": "boolean"}}}),
        vocab, config)
    masks = []
    for compiled in (first, second):
        engine = grammask.Engine(compiled)
        engine.try_accept_new_bytes(b'{"b":"')
        builds = store.builds
        masks.append(list(engine.compute_allowed_token_ids()))
        if compiled is second:
            # The string body after '"b":"' is the terminal the first grammar built.
            assert store.builds == builds
    assert masks[0] == masks[1]
    grammask.clear_caches(vocabularies=False)
    assert len(store) == 0


def test_relative_builds_with_sparse_deep_rows_equal_full_walks(llama3_vocab):
    # A length-bounded string on Llama-3 (tokens up to 128 bytes): positions
    # far from the bound agree for more than the 33 contiguous rows, and the
    # kept rows beyond them (every DEEP_ROW_STRIDE-th, then the last) must
    # skip only subtrees the two states agree on: every derived set equals
    # the full walk, and the estimate reads the same kept depths.
    from grammask._core.mask_computer import (kept_row_depths, relative_walk_estimate,
                                              row_of_height)

    grammar = grammask.Grammar.from_json_schema({"type": "string", "format": "uri",
                                                 "maxLength": 120})
    tables = compiled_tables(grammar.lnf)
    trie = vocabulary_tables(llama3_vocab).trie_view
    depths = kept_row_depths(trie.max_depth + 1)
    assert depths[32] == 32 and depths[33] == 40 and depths[-1] == trie.max_depth + 1
    heights = row_of_height(depths)
    assert all(depths[heights[h]] >= h and (heights[h] == 0 or depths[heights[h] - 1] < h)
               for h in range(len(heights)))
    terminal, dfa = max(_dfa_terminals(grammar), key=lambda pair: pair[1].n_states)
    every_row = state_classes_by_depth(dfa.transitions, dfa.accepting, trie.max_depth + 1)
    rows = np.ascontiguousarray(every_row[depths])
    value = b'"https://example.org/' + b"path/segment-" * 10
    states = [dfa.run(value[:n], dfa.start) for n in (20, 30, 50, 80, 100, 110, 118)]
    assert all(states)
    full = {state: build_terminal_tokens(tables, trie, terminal, state, llama3_vocab.size)
            for state in states}
    for state, base_state in zip(states[1:], states):
        derived = build_terminal_tokens_relative(tables, trie, terminal, state, llama3_vocab.size,
                                                 full[base_state], base_state, rows, heights)
        assert _fields(derived) == _fields(full[state]), (state, base_state)
        sparse = relative_walk_estimate(trie, dfa, rows, state, base_state, depths)
        dense = relative_walk_estimate(trie, dfa, every_row, state, base_state)
        assert dense <= sparse


def _nodes_a_relative_walk_visits(trie, dfa, rows, state, base_state) -> int:
    """Oracle: the nodes ``build_terminal_tokens_relative`` visits, by
    replaying its descent rule in Python (a node is visited where the two
    states step apart; its subtree is entered unless they agree, by
    ``rows``, for as many bytes as it is high plus one)."""
    node_bytes, ends = (array.tolist() for array in trie.arrays()[:2])
    heights = np.asarray(trie.node_heights).tolist()
    transitions, class_map = np.asarray(dfa.transitions), np.asarray(dfa.class_map)
    visited = 0
    stack = [(0, state, base_state)]
    while stack:
        node, own, other = stack.pop()
        child = node + 1
        while child < ends[node]:
            byte = class_map[node_bytes[child]]
            own_next = transitions[own, byte] if own else 0
            other_next = transitions[other, byte] if other else 0
            if own_next != other_next:
                visited += 1
                height = heights[child] + 1
                if ends[child] > child + 1 and not (
                        height < rows.shape[0] and rows[height, own_next] == rows[height, other_next]):
                    stack.append((child, own_next, other_next))
            child = ends[child]
    return visited


def test_relative_walk_estimate_prefers_neighbours_of_a_counted_string(llama3_vocab):
    """Deriving the first position of a counted string from a position near
    its end walks most of what a full build walks (the two differ on every
    token longer than what is left of the count), so the estimate sends it
    to a full build; from the next position it is a small walk; from
    itself, none.  The estimates are within 30% (plus 1% of the trie) of
    the replayed walk."""
    from grammask._core.mask_computer import (KEPT_CLASS_ROWS, RELATIVE_NODE_COST,
                                              full_walk_estimate, relative_walk_estimate)
    from grammask.terminals import compile_regex

    dfa = compile_regex('"[^"\\\\]{1,60}"')
    trie = vocabulary_tables(llama3_vocab).trie_view
    rows = state_classes_by_depth(dfa.transitions, dfa.accepting, trie.max_depth + 1)[:KEPT_CLASS_ROWS]
    after_quote = dfa.run(b'"', dfa.start)
    near, far = (dfa.run(b'"' + b"a" * n, dfa.start) for n in (1, 55))
    assert relative_walk_estimate(trie, dfa, rows, after_quote, after_quote) == 0
    estimates = {base: relative_walk_estimate(trie, dfa, rows, after_quote, base) for base in (near, far)}
    full = full_walk_estimate(trie, dfa, after_quote)
    assert RELATIVE_NODE_COST * estimates[far] > full
    assert estimates[near] < 0.05 * full
    for base, estimate in estimates.items():
        visited = _nodes_a_relative_walk_visits(trie, dfa, rows, after_quote, base)
        assert abs(estimate - visited) <= 0.3 * visited + 0.01 * trie.n_nodes, (base, estimate, visited)


def _nodes_a_full_walk_visits(trie, dfa, state) -> int:
    """Oracle: the nodes ``build_terminal_tokens`` visits for DFA state
    ``state`` (every child of a node the DFA is alive at, by its run)."""
    node_bytes, ends = (array.tolist() for array in trie.arrays()[:2])
    transitions, class_map = np.asarray(dfa.transitions).tolist(), np.asarray(dfa.class_map).tolist()
    visited = 0
    stack = [(0, state)]
    while stack:
        node, own = stack.pop()
        child = node + 1
        while child < ends[node]:
            visited += 1
            after = transitions[own][class_map[node_bytes[child]]]
            if after and ends[child] > child + 1:
                stack.append((child, after))
            child = ends[child]
    return visited


@pytest.mark.parametrize("pattern, text, tight", [
    ('"[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(\\.[a-z0-9-]{1,63})*\\.[a-z]{2,24}"', b'"ada.l', True),
    ('"[^"\\\\]{1,60}"', b'"', True),
    ("-?(0|[1-9][0-9]*)(\\.[0-9]+)?", b"1", False),
])
def test_full_walk_estimate_bounds_the_walk(llama3_vocab, pattern, text, tight):
    """The full build's estimate counts whole subtrees below the root's live
    children: never less than the nodes the walk visits below them (an
    oracle replays it in Python; the walk also visits the root's dead
    children).  Where the automaton stays alive on most of those subtrees
    (a string body, an e-mail's local part) it is within 2x of the walk;
    below a digit most of Llama-3's subtree ("1st", "3D") is dead, and the
    estimate is an order of magnitude over."""
    from grammask._core.mask_computer import full_walk_estimate
    from grammask.terminals import compile_regex

    dfa = compile_regex(pattern)
    trie = vocabulary_tables(llama3_vocab).trie_view
    state = dfa.run(text, dfa.start)
    assert state
    estimate = full_walk_estimate(trie, dfa, state)
    visited = _nodes_a_full_walk_visits(trie, dfa, state)
    ends = trie.arrays()[1]
    n_root_children, child = 0, 1
    while child < ends[0]:
        n_root_children, child = n_root_children + 1, int(ends[child])
    assert visited - n_root_children <= estimate, (estimate, visited)
    assert estimate <= 2 * visited or not tight, (estimate, visited)


def test_a_state_far_from_every_built_one_is_built_in_one_walk(llama3_vocab):
    """After the opening quote of an e-mail address the state shares little
    with the DFA's hub (a domain label's), so its set is one full build,
    not the hub's build plus a derived walk as long as a full one: the
    mask adds one entry to the store.  The mask is what ``regex``'s partial
    match allows."""
    pattern = '"[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(\\.[a-z0-9-]{1,63})*\\.[a-z]{2,24}"'
    compiled = grammask.compile(grammask.Grammar.from_regex(pattern), llama3_vocab,
                                grammask.Config(canonical=False))
    store = vocabulary_tables(llama3_vocab).token_sets
    store.clear()
    engine = grammask.Engine(compiled)
    engine.compute_allowed_token_ids()
    entries = len(store)
    quote = next(token for token in range(llama3_vocab.size) if llama3_vocab.token_bytes[token] == b'"')
    assert engine.try_accept_new_token(quote)
    allowed = set(engine.compute_allowed_token_ids().tolist())
    assert len(store) == entries + 1
    compiled_pattern = regex.compile(pattern.encode())
    oracle = {token for token in range(llama3_vocab.size)
              if llama3_vocab.token_bytes[token]
              and compiled_pattern.fullmatch(b'"' + llama3_vocab.token_bytes[token], partial=True)}
    assert allowed == oracle


def test_states_that_agree_on_every_root_child_share_one_entry(llama3_vocab):
    """The positions of a long digit run differ only on tokens longer than
    what is left of the count, and Llama-3's digit tokens are at most three
    bytes: positions with at least four digits left reuse the entry of the
    state built before them instead of walking again.  Every state's entry
    equals its own full build, and that build's inside set is every token the
    DFA reads without dying (the oracle)."""
    grammar = grammask.Grammar.from_regex("[0-9]{1,40}")
    compiled = grammask.compile(grammar, llama3_vocab, grammask.Config(canonical=False))
    computer = compiled.mask_computer
    trie = vocabulary_tables(llama3_vocab).trie_view
    dfa = grammar.lnf.dfas[0]
    state, entries = dfa.start, []
    for _ in range(40):
        state = dfa.run(b"7", state)
        entry = computer.terminal_tokens(trie, 0, state)
        full = build_terminal_tokens(compiled.tables, trie, 0, state, llama3_vocab.size)
        assert _fields(entry) == _fields(full)
        assert _ids(full) == {token for token in range(llama3_vocab.size)
                              if llama3_vocab.token_bytes[token]
                              and dfa.run(llama3_vocab.token_bytes[token], state) != 0}
        entries.append(entry)
    assert len({id(entry) for entry in entries}) < 10
