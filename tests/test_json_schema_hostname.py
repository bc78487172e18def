"""``format: hostname`` (``json_schema/formats.py``) against ``jsonschema``'s
format checker (``fqdn``), on hypothesis-drawn names, and its warnings.

What is compared: the checker validates RFC 1123 labels of 1..63 letters,
digits and inner hyphens and names of at most 253 characters.  grammask's
pattern counts the labels exactly; a name's 253 characters are not counted
in the pattern (warned, unless a ``maxLength`` of at most 253 is enforced
beside it); ``xn--`` labels are accepted as letters-digits-hyphens labels,
as the checker does, and warned (RFC 5891 Punycode is not decoded).  One
deliberate difference, stricter: a trailing dot ("example.") is refused, as
the JSON-Schema-Test-Suite requires, while ``fqdn`` accepts it.

Names are drawn from an ASCII alphabet (letters, digits, "-", "_", ".");
``fqdn`` reads ``\\d`` and case-insensitive ``A-Z`` over Unicode (Arabic-Indic
digits, KELVIN SIGN) and accepts a trailing newline, cases the suite refuses
and ``test_json_schema_formats`` checks against the suite instead.
Hypothesis runs derandomized (the conftest profile): fixed examples.
"""

from __future__ import annotations

import json
import warnings

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.json_schema import GrammarWarning, translate_schema
from grammask.json_schema.formats import HOSTNAME_MAX_LENGTH, LOOSER
from support.schema_matcher import FORMAT_CHECKER, SchemaMatcher

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ALPHABET = "abyzABYZ0189-_"
SHORT_LIMIT = 120
"""A maxLength under which the name limit is moot (and the DFA of labels
times lengths stays within ``Config.max_dfa_states``)."""


def _schema(**keywords) -> dict:
    return {"$schema": DRAFT, "type": "string", "format": "hostname", **keywords}


HOSTNAME = SchemaMatcher(_schema())
SHORT = SchemaMatcher(_schema(maxLength=SHORT_LIMIT))
ORACLE = jsonschema.Draft202012Validator(_schema(), format_checker=FORMAT_CHECKER)


def _label_ok(label: str) -> bool:
    """The checker's verdict on one label as a whole name (a single label is
    at most 63 characters, far under the name limit)."""
    return ORACLE.is_valid(label)


_labels = st.one_of(
    st.text(ALPHABET, max_size=8),
    st.text(ALPHABET, min_size=55, max_size=70),
    st.integers(1, 66).map(lambda n: "a" * (n - 1) + "9"),
    st.text(ALPHABET, max_size=61).map(lambda text: "xn--" + text),
    st.text(ALPHABET, max_size=10).map(lambda text: "ab--" + text),
)
_names = st.builds(lambda labels, end: ".".join(labels) + end,
                   st.lists(_labels, min_size=1, max_size=7), st.sampled_from(["", "", "", "."]))
_long_names = st.builds(lambda sizes: ".".join("b" * (size - 1) + "0" for size in sizes),
                        st.lists(st.integers(55, 64), min_size=4, max_size=5))


@settings(max_examples=600, suppress_health_check=list(HealthCheck))
@given(st.one_of(_names, _long_names))
def test_hostname_agrees_with_the_checker(name):
    accepted = HOSTNAME.accepts(json.dumps(name))
    if name.endswith("."):
        assert not accepted, name  # the suite's "trailing dot" case: refused
    elif len(name) <= HOSTNAME_MAX_LENGTH:
        assert accepted == ORACLE.is_valid(name), name
    else:  # the warned name limit: labels still exact
        assert accepted == all(_label_ok(label) for label in name.split(".")), name
    short = SHORT.accepts(json.dumps(name))
    assert short == (accepted and len(name) <= SHORT_LIMIT and ORACLE.is_valid(name)), name


def test_boundaries():
    label_63, label_64 = "a" * 62 + "b", "a" * 63 + "b"
    assert HOSTNAME.accepts(json.dumps(label_63)) and ORACLE.is_valid(label_63)
    assert not HOSTNAME.accepts(json.dumps(label_64)) and not ORACLE.is_valid(label_64)
    name_253 = ".".join([label_63] * 3 + ["c" * 61])
    assert len(name_253) == 253 and HOSTNAME.accepts(json.dumps(name_253))
    assert ORACLE.is_valid(name_253)
    name_254 = name_253 + "c"
    assert not ORACLE.is_valid(name_254)
    assert HOSTNAME.accepts(json.dumps(name_254))  # warned: the name limit is not counted
    for valid in ("xn--9n2bp8q.xn--9t4b11yi5a", "ab--cd", "XN--X", "a--b"):
        assert HOSTNAME.accepts(json.dumps(valid)) and ORACLE.is_valid(valid), valid


def _warnings(schema: dict) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        translate_schema(schema)
    return [str(warning.message) for warning in caught
            if issubclass(warning.category, GrammarWarning)]


@pytest.mark.parametrize("keywords,counted", [
    ({}, False),
    ({"maxLength": 300}, False),
    ({"maxLength": SHORT_LIMIT}, True),
    ({"pattern": "^[a-z.]{1,40}$"}, True),
    ({"pattern": "^[a-z.]+$"}, False),
])
def test_warning_names_what_is_not_checked(keywords, counted):
    messages = _warnings(_schema(**keywords))
    assert len(messages) == 1 and messages[0].startswith("'format'"), messages
    assert LOOSER["hostname"] in messages[0]
    assert (f"names longer than {HOSTNAME_MAX_LENGTH}" in messages[0]) != counted


def test_a_max_length_above_the_limit_is_implied():
    """maxLength 255 is implied by the format (whose warning says the names'
    limit is not counted), so it is not intersected: no maxLength warning."""
    schema = _schema(maxLength=255, minLength=5)
    messages = _warnings(schema)
    assert len(messages) == 1 and "nor a larger maxLength" in messages[0], messages
    matcher = SchemaMatcher(schema)
    assert matcher.accepts(json.dumps("ab.cd")) and not matcher.accepts(json.dumps("ab.c"))


def test_not_beside_hostname_warns_too():
    messages = _warnings(_schema(**{"not": {"pattern": "^a"}}))
    assert any(m.startswith("'format'") and LOOSER["hostname"] in m for m in messages), messages

