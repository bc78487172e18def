"""Token terminals (paragraph_token!, any!): one whole token of the vocabulary per terminal.

The oracle is a reference automaton written here over token sequences, for
grammars of the shape ``prefix T{m,n} suffix`` (``T`` a token terminal):
configurations (phase, offset or count) advanced byte by byte through the
literals and token by token through ``T``, with the ordinary byte path taking
precedence (a token the literals accept is read as bytes).  On random small
vocabularies, every step's mask and EOS verdict must equal the reference's,
and accepting agrees with the mask.  The token sets are checked against a
real tokenizer's own ``decode``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import grammask
import grammask.engine.token_terminals
from grammask.grammar.ast import GrammarAST, Literal, Repeat, Rule, Sequence, TokenTerminal

EOS = 0
ALPHABET = [b"a", b"b", b" ", b"\n", "é".encode(), b"\xc3", b"\xff"]


def in_set(kind: str, data: bytes) -> bool:
    """Koo et al.'s PARAGRAPH_TOKEN (a text token without a line break), or any text token."""
    if not data:
        return False
    if kind == "any":
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\n" not in data and b"\r" not in data


class Reference:
    """``prefix T{low,high} suffix`` over tokens: configurations are
    ("pre", offset), ("mid", count), ("suf", offset)."""

    def __init__(self, prefix: bytes, kind: str, low: int, high, suffix: bytes):
        self.prefix, self.kind, self.low, self.high, self.suffix = prefix, kind, low, high, suffix

    def closure(self, configs: set) -> frozenset:
        out, stack = set(), list(configs)
        while stack:
            config = stack.pop()
            if config in out:
                continue
            out.add(config)
            phase, value = config
            if phase == "pre" and value == len(self.prefix):
                stack.append(("mid", 0))
            elif phase == "mid" and value >= self.low:
                stack.append(("suf", 0))
        return frozenset(out)

    def start(self) -> frozenset:
        return self.closure({("pre", 0)})

    def push_byte(self, configs, byte: int) -> frozenset:
        moved = set()
        for phase, value in configs:
            text = self.prefix if phase == "pre" else self.suffix if phase == "suf" else None
            if text is not None and value < len(text) and text[value] == byte:
                moved.add((phase, value + 1))
        return self.closure(moved)

    def step(self, configs, data: bytes) -> frozenset:
        current = configs
        for byte in data:
            current = self.push_byte(current, byte)
            if not current:
                break
        if current:
            return current  # the byte path wins
        if in_set(self.kind, data):
            return self.closure({("mid", value + 1) for phase, value in configs
                                 if phase == "mid" and (self.high is None or value < self.high)})
        return frozenset()

    def complete(self, configs) -> bool:
        return ("suf", len(self.suffix)) in configs


def make_grammar(prefix: bytes, kind: str, low: int, high, suffix: bytes) -> grammask.Grammar:
    items = [Repeat(TokenTerminal(kind), low, high)]
    if prefix:
        items.insert(0, Literal(prefix))
    if suffix:
        items.append(Literal(suffix))
    return grammask.Grammar.from_ast(GrammarAST((Rule("start", Sequence(tuple(items))),), "start"))


text_bytes = st.lists(st.sampled_from([b"a", b"b", b" ", b"\n", "é".encode()]), max_size=3).map(b"".join)
pieces = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=3).map(b"".join)


@seed(20261125)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=text_bytes, suffix=text_bytes, kind=st.sampled_from(["paragraph", "any"]),
       low=st.integers(0, 2), extra=st.sampled_from([0, 1, 2, None]),
       vocab_pieces=st.lists(pieces, min_size=3, max_size=14, unique=True),
       choices=st.lists(st.integers(0, 10**6), min_size=12, max_size=12))
def test_masks_and_accepts_match_the_reference(prefix, suffix, kind, low, extra, vocab_pieces, choices):
    high = None if extra is None else low + extra
    if high == 0:
        high = 1
    token_bytes = [b"<eos>", *vocab_pieces]
    vocab = grammask.Vocabulary(token_bytes, eos_token_ids=[EOS], special_token_ids=[EOS])
    engine = grammask.Engine(make_grammar(prefix, kind, low, high, suffix), vocab)
    reference = Reference(prefix, kind, low, high, suffix)
    configs = reference.start()
    for choice in choices:
        expected = {t for t in range(1, len(token_bytes)) if reference.step(configs, token_bytes[t])}
        if reference.complete(configs):
            expected.add(EOS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", grammask.DeadEndWarning)
            allowed = set(engine.compute_allowed_token_ids().tolist())
        assert allowed == expected, (engine.output_bytes(), configs)
        for token_id in range(1, len(token_bytes)):
            if token_id in allowed:
                continue
            with pytest.raises(grammask.TokenRejected):
                engine.try_accept_new_token(token_id)
        if not allowed or EOS in allowed and len(allowed) == 1:
            break
        text_choices = sorted(allowed - {EOS})
        if not text_choices:
            break
        token_id = text_choices[choice % len(text_choices)]
        engine.try_accept_new_token(token_id)
        configs = reference.step(configs, token_bytes[token_id])


def test_output_rollback_and_copy_keep_the_tokens_bytes():
    token_bytes = [b"<eos>", b"Sum: ", b"hello", b" world", b"\n", b"\xff", b"a\xffb"]
    vocab = grammask.Vocabulary(token_bytes, eos_token_ids=[EOS], special_token_ids=[EOS])
    engine = grammask.Engine(make_grammar(b"Sum: ", "paragraph", 1, None, b"\n"), vocab)
    engine.try_accept_new_token(1)
    assert engine.compute_allowed_token_ids().tolist() == [1, 2, 3]  # never a reserved byte's
    engine.try_accept_new_token(2)
    clone = engine.copy()
    engine.try_accept_new_token(3)
    assert engine.output_bytes() == b"Sum: hello world"
    assert clone.output_bytes() == b"Sum: hello"
    engine.try_accept_new_token(4)
    assert engine.can_end() and engine.output_bytes() == b"Sum: hello world\n"
    engine.rollback(2)
    assert engine.output_bytes() == b"Sum: hello"
    assert engine.compute_allowed_token_ids().tolist() == [1, 2, 3, 4]
    assert engine.forced_bytes() == b"" and engine.compute_forced_tokens() == []
    with pytest.raises(grammask.TokenRejected, match="reserved"):
        engine.try_accept_new_bytes(b"\xff")
    with pytest.raises(grammask.TokenRejected, match="reserved"):
        engine.try_accept_new_token(5)
    assert engine.output_bytes() == b"Sum: hello"


def test_forced_bytes_stop_at_a_token_terminal():
    token_bytes = [b"<eos>", b"S", b"um", b"x"]
    vocab = grammask.Vocabulary(token_bytes, eos_token_ids=[EOS], special_token_ids=[EOS])
    engine = grammask.Engine(make_grammar(b"Sum", "any", 1, 1, b""), vocab)
    assert engine.forced_bytes() == b"Sum"
    assert engine.compute_forced_tokens() == [1, 2]


def test_a_grammar_that_matches_a_reserved_byte_otherwise_is_refused():
    body = Sequence((Literal(b"\xfe"), TokenTerminal("any")))
    with pytest.raises(grammask.GrammarError, match="reserved for token terminals"):
        grammask.Grammar.from_ast(GrammarAST((Rule("start", body),), "start"))
    with pytest.raises(grammask.GrammarError, match="unknown token terminal kind"):
        grammask.Grammar.from_ast(GrammarAST((Rule("start", TokenTerminal("word")),), "start"))


def test_the_printout_names_the_token_terminals():
    grammar = make_grammar(b"Sum: ", "paragraph", 1, 1, b"\n")
    assert "paragraph_token!" in grammar.to_ebnf()
    assert grammar.token_terminal_kinds == frozenset({"paragraph"})


def gpt2_byte_decoder() -> dict:
    """Byte-level BPE's printable alias of each byte (GPT-2's table), inverted."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    aliases, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            aliases[chr(byte)] = byte
        else:
            aliases[chr(256 + extra)] = byte
            extra += 1
    return aliases


def test_paragraph_tokens_of_llama3_follow_its_own_token_strings(llama3_tokenizer, llama3_vocab):
    from grammask.engine.token_terminals import token_set

    bits = token_set(llama3_vocab, "paragraph")
    allowed = set(grammask.bitset.token_ids(bits, llama3_vocab.size).tolist())
    decoder = gpt2_byte_decoder()
    expected = set()  # the added tokens (<|...|>) are all special
    for token, token_id in llama3_tokenizer.get_vocab(with_added_tokens=False).items():
        data = bytes(decoder[char] for char in token)
        if in_set("paragraph", data):
            expected.add(token_id)
    assert len(expected) > 100_000
    assert allowed == expected


def test_canonical_filter_is_off_with_token_terminals(llama3_tokenizer, llama3_vocab):
    grammar = make_grammar(b"A: ", "paragraph", 1, 4, b".")
    assert grammask.compile(grammar, llama3_vocab).canonical is None
    with pytest.raises(grammask.InvalidArgument, match="token terminals"):
        grammask.compile(grammar, llama3_vocab, grammask.Config(canonical=True))
    engine = grammask.Engine(grammar, llama3_vocab)
    engine.try_accept_new_bytes(b"A: ")
    paragraph = grammask.bitset.token_ids(grammask.engine.token_terminals.token_set(llama3_vocab, "paragraph"),
                                          llama3_vocab.size)
    assert np.array_equal(engine.compute_allowed_token_ids(), paragraph)
    hello = llama3_tokenizer.encode(" hello", add_special_tokens=False).ids[0]
    engine.try_accept_new_token(hello)
    assert engine.output_bytes() == b"A:  hello"
    period = llama3_tokenizer.encode(".", add_special_tokens=False).ids
    assert np.isin(period, engine.compute_allowed_token_ids()).all()
