"""The guarantees of constrained decoding, shown with adversarial fake models.

Seed: the outlines lab (docs/references.md).  A fake model is a function
from the step to a logits vector; it prefers tokens that break the grammar
(garbage bytes, a special token, EOS at once).  After ``engine.mask_logits``
the highest (or a sampled) logit is taken, exactly as a runtime would.  What
is checked, always with an oracle independent of the engine:

- the mask is exactly the set of surviving tokens (python ``regex`` partial
  matching over every token of the vocabulary);
- 0 invalid outputs in 1,000 generations across the shared grammars
  (``tests/workloads``): outputs that ended with EOS are sentences,
  outputs cut at max tokens are viable prefixes (``support/ast_reference.py``'s
  ``ReferenceRecognizer`` over the grammar's AST, ``regex``, ``json`` and
  ``jsonschema``);
- EOS is allowed exactly when the output so far is complete;
- the truncation caveat: a model that never reaches the end leaves, at max
  tokens, a valid prefix that is not a sentence, with ``is_finished()`` and
  ``can_end()`` False.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import regex

import grammask
from grammask.grammar.gbnf import parse_gbnf
from grammask.grammar.kbnf import parse_kbnf
from support.ast_reference import ReferenceRecognizer
from support.paths import workload

N_GENERATIONS = 1_000
MAX_TOKENS = 24

# Multi-byte tokens that the shared grammars can use, plus garbage the fake
# models love; single bytes 0-255 cover everything else.
USEFUL_TOKENS = [
    b'{"', b'":', b'", "', b'"}', b"true", b"false", b"null", b"  ", b"\n", b"\n  ", b", ",
    b"1. ", b"e4", b"Nf3", b"O-O", b"O-O-O", b"x", b"=Q", b"- ", b"item", b"the ", b" and",
    b"int ", b"main", b"()", b" {", b"return ", b"0;", b" + ", b" * ", b"12", b"345", b"(-",
    b"ticket_id", b'"ABC-', b"1234", b"priority", b"high", b"reporter", b"@example.com",
    "こんにちは".encode(), "日本".encode(), "、".encode(), b"2024-01-02", b"T12:30:00", b"Z",
    b"abc", b"def", b".com", b"ab", b"cd",
]
GARBAGE_TOKENS = [b"q@", b"zz", b"}}", b"\x00\x01", b"<<", b"@@@", b"\\"]
SPECIAL_TEXT = b"<|tool|>"


def build_vocabulary():
    """Bytes 0-255, useful and garbage tokens, a special token and EOS."""
    token_bytes = [bytes([value]) for value in range(256)] + USEFUL_TOKENS + GARBAGE_TOKENS
    special_id = len(token_bytes)
    token_bytes.append(SPECIAL_TEXT)
    eos_id = len(token_bytes)
    token_bytes.append(b"")
    vocab = grammask.Vocabulary(token_bytes, [eos_id], special_token_ids=[special_id])
    garbage_ids = [256 + len(USEFUL_TOKENS) + index for index in range(len(GARBAGE_TOKENS))]
    garbage_ids += [ord(char) for char in "q@#~"] + [special_id]
    return vocab, np.asarray(garbage_ids), eos_id


VOCAB, GARBAGE_IDS, EOS_ID = build_vocabulary()


def fake_generate(engine, rng, *, max_tokens, eos_bonus=0.0, garbage_bonus=8.0, greedy=False,
                  preferred_ids=None, record=None):
    """Run one generation with a fake model; return (token ids, ended_with_eos).

    The model's logits: standard normal noise, ``garbage_bonus`` on garbage
    tokens (or on ``preferred_ids``) and ``eos_bonus`` on EOS.  ``record``
    (a list) receives ``(output_bytes, eos_allowed)`` before each step."""
    engine.reset()
    token_ids = []
    favourite = GARBAGE_IDS if preferred_ids is None else np.asarray(preferred_ids)
    for _ in range(max_tokens):
        logits = rng.standard_normal(VOCAB.size).astype(np.float32)
        logits[favourite] += garbage_bonus
        logits[EOS_ID] += eos_bonus
        engine.mask_logits(logits)
        if record is not None:
            record.append((engine.output_bytes(), bool(np.isfinite(logits[EOS_ID]))))
        finite = np.isfinite(logits)
        assert finite.any(), f"empty mask after {engine.output_bytes()!r}"
        if greedy:
            token_id = int(np.argmax(logits))
        else:
            weights = np.exp(logits[finite] - logits[finite].max())
            token_id = int(rng.choice(np.flatnonzero(finite), p=weights / weights.sum()))
        engine.try_accept_new_token(token_id)
        token_ids.append(token_id)
        if token_id == EOS_ID:
            return token_ids, True
    return token_ids, False


# --- oracles ------------------------------------------------------------------------

class GrammarOracle:
    """accepts(data) / viable_prefix(data) over the grammar's own AST."""

    def __init__(self, ast):
        self.reference = ReferenceRecognizer(ast)

    def accepts(self, data: bytes) -> bool:
        return self.reference.accepts(data)

    def viable_prefix(self, data: bytes) -> bool:
        return self.reference.viable_prefix(data)


class RegexOracle:
    """Python ``regex`` (Rust syntax of the shared patterns is compatible)."""

    def __init__(self, pattern: str):
        self.pattern = regex.compile(pattern)

    def accepts(self, data: bytes) -> bool:
        text = _decode(data)
        return text is not None and self.pattern.fullmatch(text) is not None

    def viable_prefix(self, data: bytes) -> bool:
        text, tail = _split_incomplete_utf8(data)
        if text is None:
            return False
        if self.pattern.fullmatch(text, partial=True) is None:
            return False
        return not tail or any(self.pattern.fullmatch(text + char, partial=True)
                               for char in _completions(tail))


class SchemaOracle:
    """json.loads + jsonschema for complete outputs; prefixes over the AST."""

    def __init__(self, schema, ast):
        import jsonschema

        self.validator = jsonschema.Draft202012Validator(schema)
        self.reference = ReferenceRecognizer(ast)

    def accepts(self, data: bytes) -> bool:
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return False
        return self.validator.is_valid(document)

    def viable_prefix(self, data: bytes) -> bool:
        return self.reference.viable_prefix(data)


def _decode(data: bytes):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _split_incomplete_utf8(data: bytes):
    for cut in range(0, 4):
        text = _decode(data[:len(data) - cut])
        if text is not None:
            return text, data[len(data) - cut:]
    return None, b""


def _completions(tail: bytes):
    """Characters whose UTF-8 encoding starts with ``tail`` (a sample)."""
    for code_point in range(0x80, 0x30000, 7):
        if 0xD800 <= code_point <= 0xDFFF:
            continue
        encoded = chr(code_point).encode("utf-8")
        if encoded.startswith(tail):
            yield chr(code_point)


def _read(*parts: str) -> str:
    return workload(*parts).read_text(encoding="utf-8")


def shared_grammars():
    """(name, Grammar, oracle) for every shared grammar this test covers."""
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["arithmetic", "c", "chess", "english", "japanese", "json", "json_arr", "list"]:
            text = _read("gbnf", f"{name}.gbnf")
            cases.append((f"gbnf/{name}", grammask.Grammar.from_gbnf(text),
                          GrammarOracle(parse_gbnf(text))))
        text = _read("bench", "arith.kbnf")
        cases.append(("bench/arith.kbnf", grammask.Grammar.from_ebnf(text),
                      GrammarOracle(parse_kbnf(text))))
        for name in ["regex_email", "regex_datetime", "regex_freetext"]:
            pattern = _read("bench", f"{name}.regex").rstrip("\n")
            cases.append((f"bench/{name}", grammask.Grammar.from_regex(pattern), RegexOracle(pattern)))
        schema = json.loads(_read("bench", "ticket_schema.json"))
        grammar = grammask.Grammar.from_json_schema(schema)
        cases.append(("bench/ticket_schema", grammar, SchemaOracle(schema, grammar.ast)))
    return cases


# --- the 1,000 generations ------------------------------------------------------------

def test_no_invalid_output_in_1000_generations_across_shared_grammars():
    cases = shared_grammars()
    rng = np.random.default_rng(1201)
    n_invalid = 0
    n_generations = 0
    n_ended = 0
    n_steps = 0
    eos_mismatches = []
    per_case = -(-N_GENERATIONS // len(cases))
    for name, grammar, oracle in cases:
        engine = grammask.Engine(grammask.compile(grammar, VOCAB, grammask.Config(canonical=False)))
        for _ in range(per_case):
            record = []
            eos_bonus = float(rng.uniform(-4.0, 10.0))
            token_ids, ended = fake_generate(engine, rng, max_tokens=MAX_TOKENS, eos_bonus=eos_bonus,
                                             record=record)
            output = VOCAB.decode_bytes(token_ids)
            valid = oracle.accepts(output) if ended else oracle.viable_prefix(output)
            n_invalid += not valid
            n_ended += ended
            n_generations += 1
            n_steps += len(token_ids)
            # EOS allowed exactly when complete, at up to three steps of this generation
            picks = {len(record) - 1, int(rng.integers(len(record))), int(rng.integers(len(record)))}
            for index in picks:
                prefix, eos_allowed = record[index]
                if eos_allowed != oracle.accepts(prefix):
                    eos_mismatches.append((name, prefix, eos_allowed))
    assert n_generations >= N_GENERATIONS
    assert n_invalid == 0
    assert eos_mismatches == []
    assert n_ended > n_generations // 4, "too few generations reached EOS to test the EOS rule"
    assert n_steps > 5 * n_generations


def test_fake_model_prefers_invalid_tokens_without_the_mask():
    """The adversary is real: unmasked, its greedy choice at the start of a
    JSON document is a garbage token that the JSON grammar never allows."""
    rng = np.random.default_rng(7)
    oracle = GrammarOracle(parse_gbnf(_read("gbnf", "json.gbnf")))
    n_invalid_choices = 0
    for _ in range(50):
        logits = rng.standard_normal(VOCAB.size)
        logits[GARBAGE_IDS] += 8.0
        token_id = int(np.argmax(logits))
        data = VOCAB.token_bytes[token_id] or b""
        n_invalid_choices += token_id == GARBAGE_IDS[-1] or not oracle.viable_prefix(data)
    assert n_invalid_choices == 50


# --- the lab's tests, on grammask --------------------------------------------------------

HEX_PATTERN = "0x[0-9a-f]+"
HEX_TOKENS = [b"0", b"0x", b"x", b"1x", b"q", b"@", b"zz", b"1", b"a", b"f", b"g", b"ff", b"x0", b"xg"]


def hex_engine(pattern: str = HEX_PATTERN, tokens=HEX_TOKENS):
    vocab = grammask.Vocabulary(list(tokens) + [b""], [len(tokens)])
    return grammask.Engine(grammask.compile(grammask.Grammar.from_regex(pattern), vocab)), vocab


def test_mask_is_exactly_the_survivors():
    engine, vocab = hex_engine()
    oracle = regex.compile(HEX_PATTERN)
    rng = np.random.default_rng(3)
    for _ in range(30):
        engine.reset()
        for _ in range(6):
            output = engine.output_bytes().decode()
            expected = {token_id for token_id, data in enumerate(HEX_TOKENS)
                        if oracle.fullmatch(output + data.decode(), partial=True)}
            if oracle.fullmatch(output):
                expected.add(len(HEX_TOKENS))
            assert set(engine.compute_allowed_token_ids().tolist()) == expected, output
            if not expected:
                break
            token_id = int(rng.choice(sorted(expected)))
            engine.try_accept_new_token(token_id)
            if token_id == len(HEX_TOKENS):
                break
    engine.reset()
    assert sorted(engine.compute_allowed_token_ids().tolist()) == [0, 1]   # "0" and "0x"


def test_a_token_dying_midway_leaves_the_state_intact():
    engine, _ = hex_engine()
    engine.try_accept_new_token(HEX_TOKENS.index(b"0"))
    with pytest.raises(grammask.TokenRejected) as first:
        engine.try_accept_new_token(HEX_TOKENS.index(b"1x"))
    assert first.value.offset == 0                       # dies at its first byte
    with pytest.raises(grammask.TokenRejected) as second:
        engine.try_accept_new_token(HEX_TOKENS.index(b"xg"))
    assert second.value.offset == 1                      # dies at its second byte
    assert engine.output_bytes() == b"0"
    engine.try_accept_new_token(HEX_TOKENS.index(b"x0"))
    assert engine.output_bytes() == b"0x0" and engine.can_end()


def test_constrained_output_always_matches():
    engine, vocab = hex_engine()
    preferred = [HEX_TOKENS.index(t) for t in (b"q", b"@", b"zz", b"g", b"1x")]
    eos_id = len(HEX_TOKENS)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        engine.reset()
        for _ in range(8):
            logits = rng.standard_normal(vocab.size).astype(np.float32)
            logits[preferred] += 10.0
            logits[eos_id] += 3.0
            engine.mask_logits(logits)
            token_id = int(np.argmax(logits))
            engine.try_accept_new_token(token_id)
            if token_id == eos_id:
                break
        output = engine.output_bytes()
        assert regex.fullmatch(HEX_PATTERN, output.decode(), partial=True)
        if engine.is_finished():
            assert regex.fullmatch(HEX_PATTERN, output.decode())


def test_fuzzed_preferences_never_violate():
    engine, vocab = hex_engine("0x[0-9a-f]{1,4}")
    n_violations = 0
    for seed in range(50):
        rng = np.random.default_rng(100 + seed)
        preferences = rng.normal(0.0, 5.0, vocab.size).astype(np.float32)
        engine.reset()
        for _ in range(10):
            logits = preferences.copy()
            engine.mask_logits(logits)
            token_id = int(np.argmax(logits))
            engine.try_accept_new_token(token_id)
            if engine.is_finished():
                break
        n_violations += regex.fullmatch("0x[0-9a-f]{1,4}", engine.output_bytes().decode()) is None
    assert n_violations == 0


def test_eos_only_when_accepting():
    """A model that wants to stop at once must first write a digit."""
    engine, vocab = hex_engine("[0-9]+", [b"1", b"2", b"a", b"12"])
    eos_id = 4
    logits = np.zeros(vocab.size, dtype=np.float32)
    logits[eos_id] = 100.0
    engine.mask_logits(logits)
    assert not np.isfinite(logits[eos_id])
    engine.try_accept_new_token(int(np.argmax(logits)))
    logits = np.zeros(vocab.size, dtype=np.float32)
    logits[eos_id] = 100.0
    engine.mask_logits(logits)
    assert int(np.argmax(logits)) == eos_id
    with pytest.raises(grammask.TokenRejected):
        grammask.Engine(engine.compiled).try_accept_new_token(eos_id)


def test_truncation_caveat_is_real():
    """A digit-loving model loops in [0-9]+ and never writes the '.': at max
    tokens the output is a valid prefix, not a match, and the engine says so."""
    pattern = r"[0-9]+\.[0-9]"
    engine, vocab = hex_engine(pattern, [b"1", b"23", b".", b"x"])
    rng = np.random.default_rng(0)
    token_ids, ended = fake_generate_small(engine, vocab, rng, preferred=[0, 1], max_tokens=10)
    output = engine.output_bytes().decode()
    assert not ended
    assert regex.fullmatch(pattern, output, partial=True) is not None
    assert regex.fullmatch(pattern, output) is None
    assert not engine.is_finished() and not engine.can_end()


def fake_generate_small(engine, vocab, rng, *, preferred, max_tokens):
    eos_id = vocab.eos_token_ids[0]
    token_ids = []
    for _ in range(max_tokens):
        logits = rng.standard_normal(vocab.size).astype(np.float32)
        logits[preferred] += 20.0
        engine.mask_logits(logits)
        token_id = int(np.argmax(logits))
        engine.try_accept_new_token(token_id)
        token_ids.append(token_id)
        if token_id == eos_id:
            return token_ids, True
    return token_ids, False


def test_special_tokens_are_never_emitted_as_text():
    """The fake models love a special token; no mask of a JSON string allows it."""
    engine = grammask.Engine(grammask.compile(
        grammask.Grammar.from_gbnf(_read("gbnf", "json.gbnf")), VOCAB, grammask.Config(canonical=False)))
    special_id = EOS_ID - 1
    engine.try_accept_new_bytes(b'{"text": "')
    assert not engine.is_token_allowed(special_id)
    assert engine.is_token_allowed(ord("q"))


ARITH_TOKENS = [b"1", b"23", b"(", b")", b" + ", b" * ", b"-", b";", b"+", b"*", b"x", b"((", b"1;", b"))"]


def arith_case():
    text = _read("bench", "arith.kbnf")
    vocab = grammask.Vocabulary(ARITH_TOKENS + [b""], [len(ARITH_TOKENS)])
    engine = grammask.Engine(grammask.compile(grammask.Grammar.from_ebnf(text), vocab))
    return engine, vocab, GrammarOracle(parse_kbnf(text))


def test_any_preference_vector_gives_valid_arithmetic():
    """Hypothesis draws the fake model: a fixed preference per token (any
    floats, ties included) and a token budget; greedy decoding under the mask
    must give a sentence when it ends with EOS, a viable prefix otherwise."""
    from hypothesis import given, settings, strategies as st

    engine, vocab, oracle = arith_case()
    preference = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)

    @settings(max_examples=150, deadline=None)
    @given(st.lists(preference, min_size=vocab.size, max_size=vocab.size), st.integers(1, 30))
    def check(preferences, max_tokens):
        engine.reset()
        ended = False
        for _ in range(max_tokens):
            logits = np.asarray(preferences, dtype=np.float64)
            engine.mask_logits(logits)
            assert np.isfinite(logits).any()
            token_id = int(np.argmax(logits))
            engine.try_accept_new_token(token_id)
            if token_id == len(ARITH_TOKENS):
                ended = True
                break
        output = engine.output_bytes()
        assert oracle.accepts(output) if ended else oracle.viable_prefix(output), output

    check()
