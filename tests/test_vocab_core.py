"""Vocabulary core: validation, special/EOS/empty handling, duplicate bytes, fingerprint, pickling."""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.errors import VocabularyError
from grammask.vocab import Vocabulary


def test_basic_attributes():
    vocab = Vocabulary([b"a", b"b", None, b"", b"<eos>", b"ab"], eos_token_ids=[4], special_token_ids=[])
    assert vocab.size == 6
    assert len(vocab) == 6
    assert vocab.token_bytes(5) == b"ab"
    assert vocab.token_bytes[0] == b"a"
    assert vocab.token_bytes(2) is None
    assert vocab.eos_token_ids == (4,)
    assert vocab.special_token_ids == frozenset({4})
    assert vocab.allowed_text_token_ids.dtype == np.int32
    # None (unused), b"" (empty) and EOS are never text
    assert vocab.allowed_text_token_ids.tolist() == [0, 1, 5]
    assert vocab.tokenizer is None and vocab.tokenizer_kind is None


def test_allowed_ids_are_read_only():
    vocab = Vocabulary([b"a", b"b"], eos_token_ids=1)
    with pytest.raises(ValueError):
        vocab.allowed_text_token_ids[0] = 1


def test_special_tokens_are_never_text_even_with_text_bytes():
    # kbnf in exllamav3: a special token with ordinary-looking bytes was allowed inside strings
    vocab = Vocabulary([b"a", b"{", b"</s>", b"[INST]"], eos_token_ids=[2], special_token_ids=[1, 3])
    assert vocab.allowed_text_token_ids.tolist() == [0]
    assert vocab.special_token_ids == frozenset({1, 2, 3})
    assert vocab.is_special(1) and not vocab.is_special(0)


def test_several_ids_with_the_same_bytes_all_stay_allowed():
    # formatron collapsed Mistral's <0x5F> and "_" into one id
    vocab = Vocabulary([b"_", b"x", b"_", b"_", b"</s>"], eos_token_ids=[4])
    assert vocab.allowed_text_token_ids.tolist() == [0, 1, 2, 3]


def test_several_eos_ids_in_order_without_repeats():
    vocab = Vocabulary([b"a", b"<eot>", b"<eos>"], eos_token_ids=[2, 1, 2])
    assert vocab.eos_token_ids == (2, 1)
    assert vocab.special_token_ids == frozenset({1, 2})


@pytest.mark.parametrize("token_bytes, eos, special, token_id", [
    ([b"a", "b"], [0], [], 1),                  # str instead of bytes
    ([b"a", 5], [0], [], 1),
    ([b"a", b"b"], [2], [], 2),                 # EOS out of range
    ([b"a", b"b"], [-1], [], -1),
    ([b"a", b"b"], [0], [7], 7),                # special out of range
])
def test_invalid_input_names_the_offending_id(token_bytes, eos, special, token_id):
    with pytest.raises(VocabularyError) as error:
        Vocabulary(token_bytes, eos, special)
    assert error.value.token_id == token_id
    assert str(token_id) in str(error.value)


@pytest.mark.parametrize("token_bytes, eos", [
    ([], [0]),
    ([b"a"], []),
    ([b"a"], None),
    ([b"a"], [True]),
    ([b"a"], ["0"]),
    (b"abc", [0]),
    ("abc", [0]),
])
def test_invalid_input_raises_vocabulary_error(token_bytes, eos):
    with pytest.raises(VocabularyError):
        Vocabulary(token_bytes, eos)


def test_token_bytes_call_checks_the_id():
    vocab = Vocabulary([b"a", b"b"], eos_token_ids=[1])
    with pytest.raises(VocabularyError) as error:
        vocab.token_bytes(2)
    assert error.value.token_id == 2
    with pytest.raises(VocabularyError):
        vocab.token_bytes(-1)
    with pytest.raises(VocabularyError):
        vocab.token_bytes("0")


def test_bytearray_and_numpy_ids_are_accepted():
    vocab = Vocabulary([bytearray(b"a"), memoryview(b"bc"), b"z"], eos_token_ids=np.array([2]),
                       special_token_ids=np.array([1], dtype=np.int64))
    assert vocab.token_bytes(0) == b"a" and type(vocab.token_bytes(1)) is bytes
    assert vocab.eos_token_ids == (2,)
    assert vocab.allowed_text_token_ids.tolist() == [0]
    assert vocab.token_bytes(np.int32(1)) == b"bc"


def test_fingerprint_distinguishes_content():
    base = Vocabulary([b"a", b"b", None], eos_token_ids=[1])
    assert re.fullmatch("[0-9a-f]{64}", base.fingerprint)
    same = Vocabulary((bytearray(b"a"), memoryview(b"b"), None), eos_token_ids=np.array([1]))
    variants = [
        Vocabulary([b"a", b"b", b""], eos_token_ids=[1]),       # None vs empty
        Vocabulary([b"a", b"c", None], eos_token_ids=[1]),
        Vocabulary([b"a", b"b", None], eos_token_ids=[0]),
        Vocabulary([b"a", b"b", None], eos_token_ids=[1], special_token_ids=[0]),
        Vocabulary([b"ab", b"", None], eos_token_ids=[1]),      # same concatenation
    ]
    assert base.fingerprint == same.fingerprint and base == same and hash(base) == hash(same)
    fingerprints = {vocab.fingerprint for vocab in variants} | {base.fingerprint}
    assert len(fingerprints) == len(variants) + 1


def test_fingerprint_is_the_same_in_another_process():
    """It keys the disk cache, so it must not depend on the process (hash seed)."""
    code = ("from grammask.vocab import Vocabulary; "
            "print(Vocabulary([b'a', b'b', None], eos_token_ids=[1]).fingerprint)")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == Vocabulary([b"a", b"b", None], eos_token_ids=[1]).fingerprint


def test_pickle_round_trip_keeps_everything():
    vocab = Vocabulary([b"a", b"\xff", None, b"</s>"], eos_token_ids=[3], special_token_ids=[1])
    clone = pickle.loads(pickle.dumps(vocab))
    assert clone == vocab
    assert list(clone.token_bytes) == list(vocab.token_bytes)
    assert clone.eos_token_ids == vocab.eos_token_ids
    assert clone.special_token_ids == vocab.special_token_ids
    assert clone.allowed_text_token_ids.tolist() == vocab.allowed_text_token_ids.tolist()


def test_decode_bytes_concatenates():
    vocab = Vocabulary([b"he", b"llo", b" ", b"</s>"], eos_token_ids=[3])
    assert vocab.decode_bytes([0, 1, 2, 0]) == b"hello he"
    with pytest.raises(VocabularyError):
        vocab.decode_bytes([4])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=4)), min_size=1, max_size=30), st.data())
def test_allowed_ids_match_a_plain_filter(token_bytes, data):
    size = len(token_bytes)
    eos = data.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=3))
    special = data.draw(st.lists(st.integers(0, size - 1), max_size=5))
    vocab = Vocabulary(token_bytes, eos, special)
    expected = [token_id for token_id in range(size)
                if token_bytes[token_id] and token_id not in eos and token_id not in special]
    assert vocab.allowed_text_token_ids.tolist() == expected
    assert vocab.special_token_ids == frozenset(eos) | frozenset(special)
