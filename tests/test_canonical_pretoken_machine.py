"""The pre-tokenizer pattern's priority automaton and the region signatures built on it.

Oracles: ``regex.match`` with each real pattern (the match end at offset 0), and
the canonical filter's regex scans of whole regions (``_shape_codes``, itself
tested against the tokenizers' own encode): regions with one signature must
get the same verdict for every token shape."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import regex
from hypothesis import given, settings, strategies as st

from grammask.canonical import build_canonical_filter
from grammask.canonical._region_scan import shape_group_verdicts
from grammask.canonical.pretoken_machine import PretokenMachine
from grammask.canonical.pretokenizer import CharClasses

from test_canonical_pretokenized import LOADERS

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

_PATTERNS: dict = {}
_MACHINES: dict = {}
_FILTERS: dict = {}


def _pattern(name: str) -> str:
    if name == "gpt2":
        return GPT2
    if name not in _PATTERNS:
        source, _encode = LOADERS[name]()
        pattern = getattr(source, "_pat_str", None)
        if pattern is None:  # a tokenizers.Tokenizer: the Split pre-tokenizer's regex
            pretokenizers = json.loads(source.to_str())["pre_tokenizer"]["pretokenizers"]
            pattern = next(p["pattern"]["Regex"] for p in pretokenizers if p["type"] == "Split")
        _PATTERNS[name] = pattern
    return _PATTERNS[name]


def _machine(name: str):
    if name not in _MACHINES:
        classes = CharClasses(_pattern(name))
        _MACHINES[name] = (classes, PretokenMachine.build(classes))
    return _MACHINES[name]


def _filter(name: str):
    if name not in _FILTERS:
        source, _encode = LOADERS[name]()
        _FILTERS[name] = build_canonical_filter(source)
    return _FILTERS[name]


NAMES = ["cl100k", "gpt2", "llama3", "qwen2", "tekken"]
ALPHABET = st.sampled_from(list("aZs'tdmlrevESLT9 0\t\n\r.,!/_-éß日🎉Ⅻ\u0301\u00a0\u2028"))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=400, deadline=None, derandomize=True)
@given(text=st.lists(ALPHABET, max_size=12).map("".join), represent=st.booleans())
def test_match_end_equals_the_backtracking_engine(name, text, represent):
    classes, machine = _machine(name)
    assert machine is not None and machine.covering
    if represent:
        text = classes.represent(text)
    found = regex.match(classes.pattern, text)
    assert machine.match_end(text) == (found.end() if found else None)


@pytest.mark.parametrize("pattern", [
    r"(?<=a)b|\s+",        # look-behind
    r"a\Bb|\s+",            # word-boundary escape
    r"^a|\s+",             # start anchor
    r"(?:ab)++|\s+",       # possessive group
    r"\s+$",               # '$' that could stop before a final newline
    r"(?!ab)\w+",          # look-ahead of two characters
    r"[ ]++$|\s",          # '$' after a possessive atom that does not take a newline
])
def test_unsupported_syntax_gives_no_machine(pattern):
    assert PretokenMachine.build(CharClasses(pattern)) is None


def test_possessive_and_lazy_quantifiers_match_like_the_engine():
    pattern = r"a{1,3}+b|a*?c|x?+y|\s++$|\s"
    classes = CharClasses(pattern)
    machine = PretokenMachine.build(classes)
    assert machine is not None
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice("aabcxy \n") for _ in range(rng.randint(0, 7)))
        found = regex.match(pattern, text)
        assert machine.match_end(text) == (found.end() if found else None), text


def _states(flt, rng, n_walks: int, n_steps: int):
    """States after random token walks: canonical steps mostly, any text token sometimes."""
    backend = flt.backend
    texts = [t for t in range(min(flt.vocab_size, backend.merges.n_tokens))
             if backend.merges.token_bytes[t] is not None and t not in backend.never_filtered_ids]
    short = [t for t in texts if len(backend.merges.token_bytes[t]) <= 3]
    states = []
    for _ in range(n_walks):
        state = flt.initial_state()
        for _ in range(n_steps):
            if rng.random() < 0.8:
                allowed = np.ones(flt.vocab_size, dtype=bool)
                allowed[flt.forbidden_token_ids(state)] = False
                pool = [t for t in rng.sample(short, 400) if allowed[t]] or [rng.choice(texts)]
            else:
                pool = short
            state = flt.advance(state, rng.choice(pool))
            states.append(state)
    return states


@pytest.mark.parametrize("name", ["cl100k", "llama3", "qwen2", "tekken"])
def test_equal_signatures_give_equal_verdicts(name):
    flt = _filter(name)
    backend = flt.backend
    machine = backend._machine
    assert machine is not None
    by_signature: dict = {}
    by_core: dict = {}
    n_compared = n_signed = 0
    checked = set()
    for inner in _states(flt, random.Random(5), n_walks=10, n_steps=30):
        if inner.partial or (inner.region, inner.cuts) in checked:
            continue
        checked.add((inner.region, inner.cuts))
        signature = machine.signature(inner.region, inner.cuts)
        if signature is None:
            continue
        n_signed += 1
        codes = backend._shape_codes(inner)
        seen = by_signature.setdefault(signature, (inner, codes))
        if seen[0] is not inner:
            assert np.array_equal(seen[1], codes), (seen[0], inner)
            n_compared += 1
        core = machine.core(inner.region)
        backend._words_cache.clear()
        fresh = backend.fresh_words(inner)
        seen = by_core.setdefault(core, (inner, fresh))
        assert np.array_equal(seen[1], fresh), (seen[0], inner)
    assert n_signed > 60 and n_compared > 30, (n_signed, n_compared)


@pytest.mark.parametrize("name", ["cl100k", "llama3", "qwen2", "tekken"])
def test_equal_signatures_give_equal_verdicts_on_random_regions(name):
    """Regions drawn as runs of a few classes, with token cuts whose pair verdicts are drawn
    too; up to three regions of each signature that several share are compared."""
    flt = _filter(name)
    backend = flt.backend
    machine = backend._machine
    classes = backend.classes
    rng = random.Random(7)
    groups: dict = {}
    for _ in range(3000):
        runs = [rng.choice(" a's0.\n") * rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
        region = classes.represent("".join(runs))
        offsets = sorted(rng.sample(range(1, len(region)), rng.randint(0, min(3, len(region) - 1))))
        cuts = tuple((offset, rng.random() < 0.8) for offset in offsets)
        signature = machine.signature(region, cuts)
        if signature is not None:
            members = groups.setdefault(signature, [])
            if len(members) < 3 and (region, cuts) not in members:
                members.append((region, cuts))
    n_compared = 0
    for members in groups.values():
        if len(members) < 2:
            continue
        first = backend._shape_codes(backend.initial_state()._replace(region=members[0][0], cuts=members[0][1]))
        for region, cuts in members[1:]:
            codes = backend._shape_codes(backend.initial_state()._replace(region=region, cuts=cuts))
            assert np.array_equal(first, codes), (members[0], (region, cuts))
            n_compared += 1
    assert n_compared > 40, n_compared


@pytest.mark.parametrize("name", ["cl100k", "llama3", "qwen2", "tekken"])
def test_table_verdicts_equal_the_scans(name):
    """The compiled walk of the automaton's table (``_shape_codes_by_table``) against the
    regex scans of region + shape + probe (``_shape_codes_by_scans``), shape by shape, on
    regions of runs of several classes (letters, digits, spaces, newlines, punctuation,
    apostrophes, non-ASCII), with token cuts whose pair verdicts are drawn."""
    flt = _filter(name)
    backend = flt.backend
    classes = backend.classes
    rng = random.Random(11)
    n_compared = 0
    for _ in range(100):
        runs = [rng.choice(" a's0.\n,éA日\t") * rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
        region = classes.represent("".join(runs))
        offsets = sorted(rng.sample(range(1, len(region)), rng.randint(0, min(3, len(region) - 1))))
        state = backend.initial_state()._replace(
            region=region, cuts=tuple((offset, rng.random() < 0.8) for offset in offsets))
        fast = backend._shape_codes_by_table(state)
        if fast is None:
            continue
        slow = backend._shape_codes_by_scans(state)
        differ = np.flatnonzero(fast != slow)
        assert not len(differ), (state, [(backend.shapes[i], fast[i], slow[i]) for i in differ[:5]])
        n_compared += 1
    assert n_compared >= 20, n_compared


def test_a_region_text_past_the_buffer_is_left_to_the_scans():
    """``shape_group_verdicts`` answers -1 (the caller scans) for every group when the
    region's text after its best match does not fit its buffer, instead of writing past it."""
    out = np.zeros(3, dtype=np.int8)
    shape_group_verdicts(np.zeros((1, 1), np.int32), np.zeros((1, 1), np.uint8), np.zeros(1, np.uint8), 0,
                         np.zeros(600, np.int32), np.zeros(0, np.int32), np.zeros(0, np.uint8),
                         np.zeros(0, np.int32), np.zeros(4, np.int64), np.zeros(0, np.int32),
                         np.zeros(4, np.int64), np.zeros(3, np.uint8), out)
    assert out.tolist() == [-1, -1, -1]


@pytest.mark.parametrize("pattern, covering", [
    (r"a*|\s", False),     # an empty match at the start
    (r"a|\s", False),      # no match starts with "b"
    (r"ab|[^a]", False),   # "a" then anything but "b": every thread dies unmatched
    (r"a+|[^a]", True),
    (r"\S+|\s+", True),
])
def test_covering_means_every_text_has_a_nonempty_match_at_the_start(pattern, covering):
    machine = PretokenMachine.build(CharClasses(pattern))
    assert machine.covering == covering
    if covering:
        for text in ("a", "ab", "b a", " \n", "aab!"):
            found = regex.match(pattern, text)
            assert found is not None and found.end() >= 1 and machine.match_end(text) == found.end()
