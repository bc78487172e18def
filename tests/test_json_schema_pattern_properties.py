"""``patternProperties`` without approximation (issue 17), against ``jsonschema``.

A key falls in exactly one class: a declared name (its ``properties`` schema
merged with every pattern that finds it), a cell of the patterns (keys found
by exactly the patterns of a subset, under the merge of their schemas), or
no pattern and no name (``additionalProperties``).  Each schema below has a
pool of keys and of values; every object of one or two members drawn from
them is written with ``json.dumps`` (ASCII and raw UTF-8) and with every key
character as a ``\\uXXXX`` escape, and grammask must accept the text iff
``jsonschema`` calls the instance valid.  Declared names are accepted only
in their canonical spellings (``objects.key_node``), so escaped texts naming
a declared property are only checked one way (accepted implies valid).
Random walks through the grammar are all valid.  No key ends in a newline
where a pattern ends in ``$``: the oracle's Python ``re`` lets ``$`` match
before a final newline, ECMA-262 (and grammask) does not.  The key terminals are
``difference`` terminals (``terminals.DIFFERENCE_SEPARATOR``), checked on
their own at the end.
"""

from __future__ import annotations

import itertools
import json
import random

import jsonschema
import pytest

from grammask.terminals import DIFFERENCE_SEPARATOR, INTERSECTION_SEPARATOR, compile_regex
from support.schema_matcher import SchemaMatcher

VALUES = [True, None, -1, 0, 3, 12, 2.5, "s", "", [], {}]

CASES = [
    # one pattern, additionalProperties absent
    ({"patternProperties": {"^x-": {"type": "integer"}}},
     ["x-a", "x-", "ax-", "b", ""]),
    # two disjoint patterns, additionalProperties false
    ({"patternProperties": {"^a": {"type": "boolean"}, "^b": {"type": "integer"}},
      "additionalProperties": False},
     ["a", "ab", "b", "ba", "c", ""]),
    # three overlapping patterns, additionalProperties a schema
    ({"patternProperties": {"^a": {"type": "integer"}, "b$": {"type": "integer", "minimum": 0},
                            "c": {"type": "number", "maximum": 5}},
      "additionalProperties": {"type": "string"}},
     ["a", "ab", "acb", "ac", "cb", "c", "b", "x", "ba"]),
    # overlapping patterns whose schemas have no common value
    ({"patternProperties": {"^a": {"type": "boolean"}, "z$": {"type": "integer"}},
      "additionalProperties": False},
     ["a", "az", "z", "za", "q"]),
    # overlapping patterns with equal schemas
    ({"patternProperties": {"^a": {"type": "string"}, "b": {"type": "string"}},
      "additionalProperties": {"type": "integer"}},
     ["a", "ab", "b", "cbc", "c"]),
    # a pattern finds a declared name; additionalProperties false
    ({"properties": {"ab": {"type": "integer"}, "q": {"type": "string"}},
      "patternProperties": {"^a": {"minimum": 10}}, "additionalProperties": False},
     ["ab", "a", "abc", "q", "qa", "b"]),
    # declared names, a required name, a pattern and an additional schema
    ({"properties": {"id": {"type": "integer"}}, "required": ["id"],
      "patternProperties": {"_at$": {"type": "string"}, "^id": {"type": "integer", "maximum": 3}},
      "additionalProperties": {"type": "boolean"}},
     ["id", "id_at", "created_at", "idx", "other", ""]),
    # escapes and non-ASCII in patterns and keys
    ({"patternProperties": {"é$": {"type": "integer"}, '^"': {"type": "string"},
                            "\\\\": {"type": "null"}, "\\n": {"type": "boolean"}},
      "additionalProperties": False},
     ["é", "aé", "éa", '"q', "q", "a\\b", "\n", "\né", "\u2028", "😀é"]),
    # a pattern whose schema is false, overlapping another
    ({"patternProperties": {"^a": False, "b": {"type": "integer"}}},
     ["a", "ab", "b", "cb", "c"]),
    # counts beside patterns
    ({"patternProperties": {"^a": {"type": "integer"}}, "additionalProperties": {"type": "null"},
      "minProperties": 2, "maxProperties": 2},
     ["a", "ab", "b", "c"]),
]


def escaped_key(text: str) -> str:
    units = text.encode("utf-16-be")
    return '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'


def instances(schema: dict, keys: list[str]) -> list[dict]:
    """Objects of zero to two members, declared names in schema order."""
    declared = list(schema.get("properties", {}))
    order = {name: index for index, name in enumerate(declared)}
    result = [{}]
    for size in (1, 2):
        for chosen in itertools.permutations(keys, size):
            names = [k for k in chosen if k in order]
            if names != sorted(names, key=order.get):
                continue
            for values in itertools.product(VALUES, repeat=size):
                result.append(dict(zip(chosen, values)))
    return result


def texts(instance: dict) -> list[tuple[str, bool]]:
    """(text, whether grammask must also accept it when it is valid)."""
    plain = [(json.dumps(instance), True), (json.dumps(instance, ensure_ascii=False), True)]
    members = [f"{escaped_key(k)}: {json.dumps(v)}" for k, v in instance.items()]
    return plain + [("{" + ", ".join(members) + "}", False)]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_pattern_properties_agree_with_jsonschema(index):
    keywords, keys = CASES[index]
    schema = {"type": "object", **keywords}
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = jsonschema.validators.validator_for(schema)(schema)
    declared = set(schema.get("properties", {}))
    n_valid = n_invalid = 0
    for instance in instances(schema, keys):
        expected = validator.is_valid(instance)
        n_valid += expected
        n_invalid += not expected
        for text, complete in texts(instance):
            accepted = matcher.accepts(text)
            if complete or not declared & set(instance):
                assert accepted == expected, (schema, text)
            else:
                assert not accepted or expected, (schema, text)
    assert n_valid and n_invalid
    rng = random.Random(index)
    for _ in range(40):
        text = matcher.random_walk(rng, max_bytes=160)
        if text is not None:
            assert validator.is_valid(json.loads(text)), (schema, text)


def test_any_order_members_agree_with_jsonschema():
    schema = {"type": "object", "properties": {"ab": {"type": "integer"}, "q": {}},
              "patternProperties": {"^a": {"minimum": 10}, "b$": {"maximum": 20}},
              "additionalProperties": {"type": "string"}}
    matcher = SchemaMatcher(schema, any_order=True)
    assert matcher.warnings == []
    validator = jsonschema.validators.validator_for(schema)(schema)
    keys = ["ab", "q", "a", "cb", "acb", "z"]
    for size in (1, 2):
        for chosen in itertools.permutations(keys, size):
            for values in itertools.product([5, 15, 25, "s"], repeat=size):
                instance = dict(zip(chosen, values))
                assert matcher.accepts(json.dumps(instance)) == validator.is_valid(instance), \
                    instance


def test_many_overlapping_patterns_warn():
    patterns = {f"{chr(97 + i)}": {"type": "integer", "minimum": i} for i in range(5)}
    matcher = SchemaMatcher({"type": "object", "patternProperties": patterns})
    assert [w.keyword for w in matcher.warnings] == ["patternProperties"]
    assert "5 patterns with overlapping keys" in str(matcher.warnings[0])


def test_difference_terminal_removes_later_patterns():
    text = DIFFERENCE_SEPARATOR.join([INTERSECTION_SEPARATOR.join(["[a-c]+", ".*a.*"]), "ab", "c.*"])
    dfa = compile_regex(text, kind="difference")
    for length in range(5):
        for letters in itertools.product("abc", repeat=length):
            word = "".join(letters)
            expected = "a" in word and word != "ab" and not word.startswith("c")
            assert dfa.fullmatch(word) == expected, word


def test_difference_terminal_with_many_removed_patterns_agrees_with_regex_module():
    """Several removed patterns are removed in one product (csrc/dfa/src/table.rs
    ``subtract_all``): the strings of the kept patterns that match none of
    the removed ones, as the ``regex`` module decides."""
    import random

    import regex

    kept = [r'"(?:[a-z_]|\\u00[0-9a-f]{2})*"', r'"[^0-9]*"']
    removed = [r'"(?:n|\\u006e)(?:a|\\u0061)me"', r'"id"', r'"_.*"', r'"x[a-c]{0,3}"', r'""',
               r'"(?:t|\\u0074)ype"', r'"[a-z]{9,}"']
    dfa = compile_regex(DIFFERENCE_SEPARATOR.join([INTERSECTION_SEPARATOR.join(kept), *removed]),
                        kind="difference")
    rng = random.Random(5)
    pieces = ["a", "b", "c", "x", "n", "_", "me", "id", "type", "\\u006e", "\\u0061", "\\u00", "1", "é"]
    words = ["name", "\\u006eame", "n\\u0061me", "id", "_x", "xab", "xabcd", "", "type", "\\u0074ype",
             "abcdefghi", "abcdefgh"]
    words += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(3_000)]
    for word in words:
        text = f'"{word}"'
        expected = (all(regex.fullmatch(pattern, text) for pattern in kept)
                    and not any(regex.fullmatch(pattern, text) for pattern in removed))
        assert dfa.fullmatch(text.encode()) == expected, text


def test_difference_terminal_round_trips_through_kbnf():
    from grammask.grammar import Grammar

    grammar = Grammar.from_json_schema({"type": "object", "patternProperties": {"^a": {}},
                                        "additionalProperties": {"type": "integer"}})
    text = grammar.to_ebnf()
    assert "#-" in text
    assert Grammar.from_ebnf(text).to_ebnf() == text
    assert Grammar.from_ebnf('start ::= #-"[a-z]+\\u{1}ab";').to_ebnf().count("#-") == 1
