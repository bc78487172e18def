"""Exactness of the Engine's mask against brute force.

Oracles (independent of the mask walk):
- ``support/ast_reference.py``'s ReferenceRecognizer over the grammar's AST (not
  LNF, not the Earley core): token t is allowed after output o iff
  ``viable_prefix(o + bytes(t))``; EOS iff ``accepts(o)``.
- For larger vocabularies: each token's bytes pushed into a fresh copy of the
  Earley recognizer (independent of the trie walk and the per-terminal token
  sets).
"""

from __future__ import annotations

import random
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grammask
from grammask.grammar import ast
from support.ast_reference import ReferenceRecognizer

EOS = 0


def make_vocab(pieces: list[bytes]) -> grammask.Vocabulary:
    """Id 0 is EOS; then the given pieces (duplicates allowed)."""
    return grammask.Vocabulary([None, *pieces], eos_token_ids=[EOS])


SMALL_PIECES = [bytes([b]) for b in b' \n"{}[],:-.0123456789abelnrstuxyzAE\\'] + [
    b'{"', b'":', b'",', b'"}', b'true', b'false', b'null', b'12', b'3.5', b'e+', b'ab',
    b'"a', b'a"', b'\\u', b'00', b'  ', b'\n  ', b', "', b'xyz"', b'\xc3', b'\xa9', '\u00e9'.encode(),
    '\u4e2d'.encode(), b'\xe4', b'\xb8\xad', b'+', b'*', b'(', b')', b'x"', b'1+', b'+2', b'a', b'a',
]

GRAMMARS = {
    "json": None,  # the shipped JSON grammar, filled in by the fixture
    "arith": """
        start ::= expr;
        expr ::= term | expr '+' term | expr '-' term;
        term ::= factor | term '*' factor;
        factor ::= #"[0-9]+" | '(' expr ')';
    """,
    "right_rec": "start ::= 'a' start | 'a' | 'ab' ',' start;",
    "regex_continue": """start ::= word ' ' word | word; word ::= #"[a-z]+" ;""",
    "early_end": """start ::= #e"[a-z]*x" 'yz' | 'ab';""",
    "complement": """start ::= '"' #ex"\\"" '"';""",
    "substrings": """start ::= #substrs"abc\u4e2d" '.';""",
    "options": "start ::= 'a'? 'b'? 'x'? 'y'? '1'+;",
    "utf8": """start ::= ('é' | '中' | #"[\\p{L}]") start?;""",
    # several scan items of one terminal at one position, each with its own
    # continuation (the mask ends them together and walks their exit once)
    "shared_items": """start ::= w w w '.' | w w ',' | w '!' | w ' ' start; w ::= #"[ab]{1,3}" | 'ab';""",
}


def grammar_by_name(name: str) -> grammask.Grammar:
    if name == "json":
        from grammask.grammar import builtin
        return builtin("json")
    return grammask.Grammar.from_ebnf(GRAMMARS[name])


def brute_force_reference(reference: ReferenceRecognizer, vocab: grammask.Vocabulary,
                          output: bytes) -> np.ndarray:
    allowed = []
    for token_id in range(vocab.size):
        data = vocab.token_bytes[token_id]
        if token_id in vocab.eos_token_ids:
            if reference.accepts(output):
                allowed.append(token_id)
        elif data and reference.viable_prefix(output + data):
            allowed.append(token_id)
    return np.array(allowed, dtype=np.int32)


def random_walk(engine: grammask.Engine, reference: ReferenceRecognizer, n_steps: int,
                rng: random.Random) -> None:
    output = b""
    for _ in range(n_steps):
        mask = engine.compute_allowed_token_ids()
        expected = brute_force_reference(reference, engine.vocab, output)
        assert mask.tolist() == expected.tolist(), f"after {output!r}"
        text_ids = [t for t in mask.tolist() if t != EOS]
        if not text_ids:
            assert engine.can_end() or not mask.size
            break
        token_id = rng.choice(text_ids)
        engine.try_accept_new_token(token_id)
        output += engine.vocab.token_bytes[token_id]


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_mask_equals_reference_on_random_walks(name):
    grammar = grammar_by_name(name)
    vocab = make_vocab(SMALL_PIECES)
    reference = ReferenceRecognizer(grammar.ast)
    engine = grammask.Engine(grammask.compile(grammar, vocab))
    rng = random.Random(zlib.crc32(name.encode()))  # stable across processes: failures replay
    for _ in range(4):
        engine.reset()
        random_walk(engine, reference, 12, rng)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_accept_of_any_token_matches_reference(name):
    """Any id, allowed or not (EOS, the unused id 0's neighbours, ids outside
    the vocabulary, numpy integers): accepted iff the reference says the
    output stays viable (EOS: complete), and a refused one leaves the engine
    as it was (its next mask is still the reference's)."""
    grammar = grammar_by_name(name)
    vocab = make_vocab(SMALL_PIECES)
    reference = ReferenceRecognizer(grammar.ast)
    rng = random.Random(zlib.crc32(b"accept-" + name.encode()))
    for config in (grammask.Config(canonical=False), grammask.Config(canonical=False, eager_end=True)):
        engine = grammask.Engine(grammask.compile(grammar, vocab, config))
        for _ in range(3):
            engine.reset()
            output, finished = b"", False
            for _ in range(25):
                token_id = rng.choice([rng.randrange(-2, vocab.size + 2), rng.randrange(vocab.size)])
                token_id = np.int64(token_id) if rng.random() < 0.2 else token_id
                data = vocab.token_bytes[token_id] if 0 <= token_id < vocab.size else None
                if finished:
                    expected = token_id == EOS
                elif token_id == EOS:
                    expected = reference.accepts(output)
                elif config.eager_end and reference.accepts(output):
                    expected = False
                else:
                    expected = bool(data) and reference.viable_prefix(output + data)
                try:
                    engine.try_accept_new_token(token_id)
                    accepted = True
                except grammask.TokenRejected:
                    accepted = False
                assert accepted == expected, f"token {token_id} after {output!r}"
                if accepted and token_id == EOS:
                    finished = True
                elif accepted:
                    output += data
                assert engine.output_bytes() == output
                if not finished:
                    mask = engine.compute_allowed_token_ids()
                    reference_mask = brute_force_reference(reference, vocab, output)
                    if config.eager_end and reference.accepts(output):
                        reference_mask = np.array([EOS], dtype=np.int32)
                    assert mask.tolist() == reference_mask.tolist(), f"after {output!r}"


COUNTED_PIECES = [b"a", b"b", b" ", b'"', b'a"', b'ab"', b"ab " * 7, b"b" * 30, b"a" * 63,
                  b"a" * 64, b"a" * 65, b"ba" * 40, b'b' * 20 + b'"', b"\\n", b"\\u0061"]


@pytest.mark.parametrize("max_length", [70, 150])
def test_counted_strings_match_reference(max_length):
    """A string with maxLength over 64 is a counted repetition of chunks
    (``expand_repetitions``): many scan items of one chunk terminal at each
    position, and tokens that cross chunk ends or the limit."""
    grammar = grammask.Grammar.from_json_schema({"type": "string", "maxLength": max_length})
    vocab = make_vocab(COUNTED_PIECES)
    reference = ReferenceRecognizer(grammar.ast)
    engine = grammask.Engine(grammask.compile(grammar, vocab, grammask.Config(canonical=False)))
    rng = random.Random(max_length)
    for _ in range(3):
        engine.reset()
        random_walk(engine, reference, 14, rng)


# -- random grammars ---------------------------------------------------------

ALPHABET = b"ab\xc3\xa9"
LITERALS = [b"a", b"b", b"ab", b"ba", b"aab", "\u00e9".encode(), b"a\xc3"]
REGEXES = ["[ab]+", "a*b", "(ab|ba)+", "[a\u00e9]{1,3}"]


@st.composite
def random_grammars(draw):
    n_rules = draw(st.integers(1, 3))
    names = [f"r{i}" for i in range(n_rules)]

    def node(depth):
        choices = ["lit", "ref", "regex"] + (["seq", "alt", "rep"] if depth < 3 else [])
        kind = draw(st.sampled_from(choices))
        if kind == "lit":
            return ast.Literal(draw(st.sampled_from(LITERALS)))
        if kind == "ref":
            return ast.RuleRef(draw(st.sampled_from(names)))
        if kind == "regex":
            return ast.Regex(draw(st.sampled_from(REGEXES)))
        if kind == "seq":
            return ast.Sequence(tuple(node(depth + 1) for _ in range(draw(st.integers(0, 3)))))
        if kind == "alt":
            return ast.Alternation(tuple(node(depth + 1) for _ in range(draw(st.integers(1, 3)))))
        low = draw(st.integers(0, 2))
        high = draw(st.one_of(st.none(), st.integers(low, low + 2)))
        return ast.Repeat(node(depth + 1), low, high)

    rules = []
    for name in names:
        body = node(0)
        if name == "r0":
            body = ast.Alternation((body, ast.Literal(b"b")))  # keep the language non-empty
        rules.append(ast.Rule(name, body))
    return ast.GrammarAST(tuple(rules), "r0")


RANDOM_PIECES = [b"a", b"b", b"ab", b"ba", b"aa", b"bb", b"\xc3", b"\xa9", "\u00e9".encode(),
                 b"a\xc3", b"aab", b"bab", b"abab", b"b\xc3\xa9a"]


@pytest.mark.filterwarnings("ignore:rule .* is never used")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_grammars(), st.integers(0, 2**16))
def test_random_grammars_match_reference(grammar_ast, seed):
    try:
        grammar = grammask.Grammar.from_ast(grammar_ast)
    except grammask.GrammarError:
        return  # e.g. an empty language: the front end's tests cover the message
    vocab = make_vocab(RANDOM_PIECES)
    reference = ReferenceRecognizer(grammar_ast)
    engine = grammask.Engine(grammask.compile(grammar, vocab))
    random_walk(engine, reference, 6, random.Random(seed))


# -- the optimized mask against the plain trie walk ---------------------------

def test_mask_computer_equals_plain_trie_walk():
    """MaskComputer (per-terminal sets, exit tries, recursion) against the
    plain byte-by-byte trie walk over the same recognizer (``fill_walk``)."""
    from grammask._core.trie_walk import fill_walk
    from grammask._core.recognizer import ByteRecognizer

    vocab = make_vocab(SMALL_PIECES)
    rng = random.Random(5)
    for name in ("json", "arith", "regex_continue", "complement", "utf8"):
        compiled = grammask.compile(grammar_by_name(name), vocab)
        engine = grammask.Engine(compiled)
        for _ in range(30):
            recognizer = engine._recognizer
            optimized = np.zeros(compiled.n_words, dtype=np.uint32)
            compiled.mask_computer.fill(recognizer, optimized)
            walked = np.zeros(compiled.n_words, dtype=np.uint32)
            fill_walk(recognizer, compiled.mask_computer.vocab_trie, walked)
            assert optimized.tolist() == walked.tolist(), (name, engine.output_bytes())
            ids = [t for t in range(vocab.size) if (walked[t >> 5] >> (t & 31)) & 1]
            if not ids:
                break
            engine.try_accept_new_token(rng.choice(ids))
    empty = np.zeros(compiled.n_words, dtype=np.uint32)
    assert fill_walk(ByteRecognizer(), compiled.mask_computer.vocab_trie, empty) == 0
    assert not empty.any()


def test_bounded_state_classes_agree_within_depth():
    """States merged by bounded_state_classes(depth) behave alike (dead-ness
    and acceptance) on every input of at most ``depth`` bytes."""
    from grammask._core.mask_computer import bounded_state_classes
    from grammask.terminals import compile_regex

    for pattern in ("[a-z ]{0,40}\n", "(ab|ba){0,9}c", "[0-9]{1,12}(\\.[0-9]{0,5})?"):
        dfa = compile_regex(pattern)
        table, accepting = np.asarray(dfa.transitions), np.asarray(dfa.accepting)
        for depth in (1, 3):
            representatives = bounded_state_classes(table, accepting, depth)
            if pattern.startswith("[a-z ]"):  # 42 counted states, few distinguishable classes
                assert len(set(representatives.tolist())) < dfa.n_states

            def behaviour(state):
                frontier, seen = [state], []
                for _ in range(depth + 1):
                    seen.append(tuple((s == 0, bool(accepting[s])) for s in frontier))
                    frontier = [int(table[s, c]) for s in frontier for c in range(table.shape[1])]
                return seen

            for state in range(dfa.n_states):
                assert behaviour(state) == behaviour(int(representatives[state]))
