"""The shipped JSON grammars (``grammask/grammars/json.ebnf`` and ``json.gbnf``)
against Python's ``json`` module as the oracle.

Documents come from hypothesis (random JSON values dumped with random
indentation and separators) and from single-character mutations of them; a
text is in the language exactly when ``json.loads`` (strict, with NaN and
Infinity refused) accepts it.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.lnf_reference import LNFRecognizer

from grammask.grammar import builtin, builtin_names, builtin_text

GRAMMAR_NAMES = ["json", "json_gbnf"]


@pytest.fixture(scope="module")
def recognizers():
    return {name: LNFRecognizer(builtin(name).lnf) for name in GRAMMAR_NAMES}


def json_oracle(text: str) -> bool:
    def refuse(constant):
        raise ValueError(constant)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(codec="utf-8"), max_size=6),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=3),
                               st.dictionaries(st.text(max_size=4), children, max_size=3)),
    max_leaves=6,
)
layouts = st.sampled_from([{}, {"indent": 2}, {"separators": (",", ":")}, {"indent": "\t"},
                           {"ensure_ascii": False}, {"indent": 0, "ensure_ascii": False}])


def test_builtin_files_are_package_data():
    for filename in ("json.ebnf", "json.gbnf"):
        assert resources.files("grammask").joinpath("grammars", filename).is_file()
    assert set(GRAMMAR_NAMES) <= set(builtin_names())
    assert "regex" not in builtin_text("json_gbnf") and '#"' in builtin_text("json")


def test_builtin_unknown_name():
    with pytest.raises(KeyError):
        builtin("yaml")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, layouts, st.sampled_from(["", " ", "\n", "\r\n\t"]))
def test_dumped_documents_are_accepted(recognizers, value, layout, padding):
    text = padding + json.dumps(value, **layout) + padding
    assert json_oracle(text)
    for name, recognizer in recognizers.items():
        assert recognizer.accepts(text.encode("utf-8")), f"{name} rejects {text!r}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, layouts, st.data())
def test_mutated_documents_match_json_module(recognizers, value, layout, data):
    text = json.dumps(value, **layout)
    position = data.draw(st.integers(0, len(text)))
    action = data.draw(st.sampled_from(["delete", "insert", "replace"]))
    char = data.draw(st.sampled_from(list('{}[]",:0123456789.eE+- \t\nabtrufnlsx\\\x01')))
    if action == "delete":
        mutated = text[:position] + text[position + 1:]
    elif action == "insert":
        mutated = text[:position] + char + text[position:]
    else:
        mutated = text[:position] + char + text[position + 1:]
    expected = json_oracle(mutated)
    for name, recognizer in recognizers.items():
        assert recognizer.accepts(mutated.encode("utf-8")) == expected, f"{name} on {mutated!r}"


@pytest.mark.parametrize("text", [
    "0", "-0", "1e5", "1E+5", "-1.5e-7", "\"\\ud83d\\ude00\"", "\"\u00e9\u4e2d\"", "[[[[]]]]",
    "{\"\": {}}", " \r\n\t[ 1 , 2 ]\n",
    "01", "1.", ".5", "+1", "1e", "[1,]", "{\"a\"}", "{'a': 1}", "\"\\x41\"", "\"a\nb\"", "nul", "truefalse",
    "NaN", "Infinity", "[1 2]", "", " ",
])
def test_hand_picked_documents(recognizers, text):
    expected = json_oracle(text)
    for name, recognizer in recognizers.items():
        assert recognizer.accepts(text.encode("utf-8")) == expected, name


def test_prefixes_are_viable(recognizers):
    text = '{"key": [1, 2.5e-3, "s\\u00e9", {"n": null}], "t": true}'
    for recognizer in recognizers.values():
        for cut in range(len(text) + 1):
            assert recognizer.viable_prefix(text[:cut].encode())
        assert not recognizer.viable_prefix(b'{"key" 1')
        assert not recognizer.viable_prefix(b"[01")
