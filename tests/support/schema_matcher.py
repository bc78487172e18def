"""The real JSON Schema pipeline as a matcher, shared by the JSON Schema tests.

``SchemaMatcher(schema, **options)`` builds ``Grammar.from_json_schema`` (front
end -> LNF -> Earley core) and answers ``accepts(text)`` with a fresh
``EarleyRecognizer`` per call; ``random_walk`` draws random allowed bytes
until the output is a complete sentence.  The oracles the tests compare it
with are never this code: Python ``json``, ``jsonschema``, ``re``, pydantic.

``declared_oracle(schema)`` is the validator of the draft a schema declares;
``assert_exact_and_silent(schema, instances)`` is the check the tests of each
exact translation share (no warning, the oracle's verdict on every instance
in several spellings, valid random walks); ``assert_agrees_on_generated``
the same verdicts on objects Hypothesis draws.

Its self-tests (tests/test_json_schema_harness.py) check it on a grammar whose
language is known without grammask (a fixed enum).

``FORMAT_CHECKER`` is the ``jsonschema`` format oracle.  jsonschema checks
several formats only when an optional package is installed (``date-time`` and
``time`` need rfc3339-validator, ``uri`` rfc3987, ``hostname`` fqdn, ...) and
otherwise calls every string valid, so a missing package would make the
oracle wrong without a word.  ``require_format_oracle()`` runs when this
module is imported and raises unless every format grammask translates is
really checked (``jsonschema[format]`` in the test extra installs them).
"""

from __future__ import annotations

import decimal
import json
import random
import warnings

import jsonschema

from grammask._core.earley import EarleyRecognizer
from grammask.errors import GrammarError
from grammask.grammar import Grammar
from grammask.json_schema import GrammarWarning, translate_schema
from support.paths import WORKLOADS

FORMAT_CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER

FORMAT_PROBES = {
    "date": ("2024-02-29", "2023-02-29"),
    "time": ("10:00:00Z", "10:00"),
    "date-time": ("2024-01-01T10:00:00Z", "2024-01-01 10:00"),
    "email": ("ada@example.org", "ada.example.org"),
    "uuid": ("123e4567-e89b-12d3-a456-426614174000", "123e4567"),
    "uri": ("https://example.org/a?b=c", "no scheme"),
    "uri-reference": ("/a/b?c#d", "a b"),
    "ipv4": ("192.168.0.1", "256.0.0.1"),
    "hostname": ("example.org", "-bad-.org"),
}
"""format -> (an instance it accepts, one it rejects): one row per format
that grammask translates to a pattern."""


def require_format_oracle() -> None:
    """Raise unless ``FORMAT_CHECKER`` really checks every probed format."""
    broken = [name for name, (good, bad) in FORMAT_PROBES.items()
              if name not in FORMAT_CHECKER.checkers
              or not FORMAT_CHECKER.conforms(good, name) or FORMAT_CHECKER.conforms(bad, name)]
    if broken:
        raise RuntimeError(
            f"jsonschema does not check the formats {broken}: install the test extra "
            "(pip install 'jsonschema[format]'; ./run test does it), or the format oracle "
            "would call every string valid")


require_format_oracle()

JSONSCHEMABENCH = WORKLOADS / "jsonschemabench"
TEST_SUITE = WORKLOADS / "json-schema-test-suite"


class SchemaMatcher:
    def __init__(self, schema, **options):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.grammar = Grammar.from_json_schema(schema, **options)
            self.lnf = self.grammar.lnf
        self.warnings = [w.message for w in caught if isinstance(w.message, GrammarWarning)]
        self.other_warnings = [w.message for w in caught
                               if not isinstance(w.message, GrammarWarning)]

    def recognizer(self) -> EarleyRecognizer:
        return EarleyRecognizer(self.lnf)

    def accepts(self, text) -> bool:
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        recognizer = self.recognizer()
        return bool(recognizer.push_bytes(data)) and bool(recognizer.is_accepting())

    def viable(self, text) -> bool:
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        return bool(self.recognizer().push_bytes(data))

    def random_walk(self, rng: random.Random, max_bytes: int = 400, stop_probability=0.3):
        """Random allowed bytes until complete (None if max_bytes is hit first).

        Bytes are drawn uniformly from the recognizer's allowed set, with two
        biases that make walks end: ASCII is preferred (nine times in ten),
        and past half the budget the walk takes a closing quote inside a
        string, else the first allowed byte of CLOSING_PREFERENCE, so strings,
        arrays and objects close.  At an
        accepting position it stops with probability ``stop_probability``
        (always past half the budget).
        """
        recognizer = self.recognizer()
        output = bytearray()
        while len(output) < max_bytes:
            late = len(output) > max_bytes // 2
            if recognizer.is_accepting() and (late or rng.random() < stop_probability):
                return bytes(output)
            allowed = list(recognizer.allowed_byte_values())
            if not allowed:
                return bytes(output) if recognizer.is_accepting() else None
            byte = None
            if late:
                preference = b'"' if _inside_string(output) else CLOSING_PREFERENCE
                byte = next((b for b in preference if b in allowed), None)
            if byte is None:
                ascii_bytes = [b for b in allowed if b < 0x80]
                pool = ascii_bytes if ascii_bytes and rng.random() < 0.9 else allowed
                byte = rng.choice(pool)
            if not recognizer.push_byte(byte):
                raise AssertionError(f"allowed byte {byte} rejected after {bytes(output)!r}")
            output.append(byte)
        return None


CLOSING_PREFERENCE = b'}]":,aelrstunf10'


def _inside_string(output: bytes) -> bool:
    """Whether JSON text ``output`` ends inside a string (quotes not escaped)."""
    inside = escaped = False
    for byte in output:
        if escaped:
            escaped = False
        elif inside and byte == 0x5C:
            escaped = True
        elif byte == 0x22:
            inside = not inside
    return inside


def _resolve(ref: str, root, base: str):
    """(target, base inside it) of a reference, for ordering members only
    (verdicts never depend on it)."""
    from grammask.json_schema.refs import RefResolver, UnresolvedRef

    resolver = _RESOLVERS.get(id(root))
    if resolver is None:
        resolver = _RESOLVERS[id(root)] = RefResolver(root)
    try:
        target, _, target_base = resolver.resolve(ref, base or resolver.root_uri)
    except UnresolvedRef:
        return {}, base
    return target, target_base


_RESOLVERS: dict = {}


def _resolve_dynamic(ref: str, root, base: str):
    """A ``$dynamicRef`` for ordering members only: the root resource's
    dynamic anchor of its name when the root declares one (the outermost
    scope), else like ``$ref``."""
    _resolve(ref, root, base)
    resolver = _RESOLVERS[id(root)]
    name = resolver.dynamic_target(ref, base or resolver.root_uri)
    anchored = resolver.dynamic_anchors.get(resolver.root_uri, {}).get(name)
    if anchored is not None:
        return anchored[0], anchored[2]
    return _resolve(ref, root, base)


def _schema_parts(schema, root, base="", depth=0):
    """The schemas whose properties apply to an instance, in the order the
    translator merges them ($ref target before its siblings, allOf and
    anyOf/oneOf branches after the schema's own keywords)."""
    if not isinstance(schema, dict) or depth > 20:
        return []
    if isinstance(schema.get("$id"), str):
        from grammask.json_schema.refs import join_uri

        base = join_uri(base or "urn:grammask:root", schema["$id"]).split("#")[0]
    parts = []
    if "$ref" in schema and isinstance(schema["$ref"], str):
        target, target_base = _resolve(schema["$ref"], root, base)
        parts.extend(_schema_parts(target, root, target_base, depth + 1))
    if "$dynamicRef" in schema and isinstance(schema["$dynamicRef"], str):
        target, target_base = _resolve_dynamic(schema["$dynamicRef"], root, base)
        parts.extend(_schema_parts(target, root, target_base, depth + 1))
    parts.append(schema)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(keyword, []) if isinstance(schema.get(keyword), list) else []:
            parts.extend(_schema_parts(branch, root, base, depth + 1))
    return parts


def schema_ordered(instance, schema, root=None):
    """``instance`` with object members in the schema's declaration order
    (the order the default grammar writes), undeclared members last."""
    root = schema if root is None else root
    parts = _schema_parts(schema, root)
    if isinstance(instance, dict):
        order: list[str] = []
        property_schema = {}
        for part in parts:
            for name, sub in (part.get("properties") or {}).items():
                if name not in property_schema:
                    order.append(name)
                    property_schema[name] = sub
        from grammask.json_schema.strings import finite_pattern_strings

        for part in parts:
            for pattern, sub in (part.get("patternProperties") or {}).items():
                for name in finite_pattern_strings(pattern) or []:
                    if name not in property_schema:
                        order.append(name)
                        property_schema[name] = sub
        for part in parts:
            for name in part.get("required") or []:
                if name not in order:
                    order.append(name)
        for part in parts:
            for keyword in ("dependentRequired", "dependencies"):
                value = part.get(keyword)
                for trigger, targets in (value.items() if isinstance(value, dict) else ()):
                    if isinstance(targets, list):
                        for name in [trigger] + targets:
                            if name not in order:
                                order.append(name)
        rank = {name: index for index, name in enumerate(order)}
        keys = sorted(instance, key=lambda k: rank.get(k, len(order)))
        return {k: schema_ordered(instance[k], property_schema.get(k, {}), root) for k in keys}
    if isinstance(instance, list):
        result = []
        for index, item in enumerate(instance):
            sub = {}
            for part in parts:
                prefix = part.get("prefixItems") or (part.get("items")
                                                      if isinstance(part.get("items"), list)
                                                      else [])
                if index < len(prefix):
                    sub = prefix[index]
                    break
                if isinstance(part.get("items"), dict):
                    sub = part["items"]
                    break
            result.append(schema_ordered(item, sub, root))
        return result
    return instance


def dumps_variants(value):
    """The serialisations every valid instance must be accepted in."""
    return [json.dumps(value), json.dumps(value, indent=2),
            json.dumps(value, separators=(",", ":")), json.dumps(value, ensure_ascii=False)]


def declared_oracle(schema):
    """jsonschema's validator for the draft ``schema`` declares (2020-12 without
    ``$schema`` or with one it does not know), with ``FORMAT_CHECKER``."""
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return validator(schema, format_checker=FORMAT_CHECKER)


def assert_exact_and_silent(schema, instances, *, indented=True, raw_unicode=False) -> tuple:
    """Check that ``schema`` translates without a ``GrammarWarning`` and that its
    grammar accepts each instance's text (members in the schema's order:
    compact, indented unless ``indented=False``, non-ASCII written raw too
    with ``raw_unicode``) exactly when ``declared_oracle`` calls it valid;
    40 random walks through the grammar must all be valid.  Returns the
    matcher, the validator and how many instances are valid."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", GrammarWarning)
        translate_schema(schema)
    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    validator = declared_oracle(schema)
    n_valid = 0
    for instance in instances:
        valid = validator.is_valid(instance)
        n_valid += valid
        ordered = schema_ordered(instance, schema)
        texts = [json.dumps(ordered)]
        if indented:
            texts.append(json.dumps(ordered, indent=2))
        if raw_unicode:
            texts.append(json.dumps(ordered, ensure_ascii=False))
        for text in texts:
            assert matcher.accepts(text) == valid, (instance, text)
    rng = random.Random(17)
    for _ in range(40):
        walk = matcher.random_walk(rng)
        value = None if walk is None else float_exact_loads(walk)
        if value is not _INEXACT:
            assert walk is None or validator.is_valid(value), walk
    return matcher, validator, n_valid


def assert_agrees_on_generated(schema, objects, max_examples: int = 150) -> None:
    """Check that ``schema`` translates silently and that its grammar accepts
    each object Hypothesis draws from ``objects`` (members in the schema's
    order, compact) exactly when ``declared_oracle`` calls it valid."""
    from hypothesis import HealthCheck, given, settings

    matcher = SchemaMatcher(schema)
    assert matcher.warnings == []
    oracle = declared_oracle(schema)

    @settings(max_examples=max_examples, suppress_health_check=list(HealthCheck))
    @given(objects)
    def check(instance):
        text = json.dumps(schema_ordered(instance, schema))
        assert matcher.accepts(text) == oracle.is_valid(instance), instance

    check()


_INEXACT = object()


class _InexactFloat(Exception):
    pass


def _exact_float(text: str) -> float:
    value = float(text)
    try:
        exact = decimal.Decimal(text) == decimal.Decimal(repr(value))
    except decimal.InvalidOperation:  # an exponent past Decimal's range
        exact = False
    if not exact:
        raise _InexactFloat(text)
    return value


def float_exact_loads(text):
    """``json.loads(text)``, or ``_INEXACT`` when a number of ``text`` has no
    float of the same decimal value (to ``repr`` precision: 9e-7354 becomes
    0.0, 33702579572797956854446.3 an integer).  Grammars decide numbers by
    their decimal value (``numbers.py``); the oracle sees floats, so such
    texts cannot be judged by it."""
    try:
        return json.loads(text, parse_float=_exact_float)
    except _InexactFloat:
        return _INEXACT


def disagreements(schema, values, format_checker=None) -> tuple[str, list]:
    """How the translation of ``schema`` (members in any order) went, "empty",
    "warned" or "silent", and, when silent, the values of ``values`` it and
    jsonschema (Draft 2020-12) disagree on.  A schema the translator finds
    empty must reject every value in jsonschema too (asserted here)."""
    validator = jsonschema.Draft202012Validator(schema, format_checker=format_checker)
    try:
        matcher = SchemaMatcher(schema, any_order=True)
    except GrammarError:
        assert not any(validator.is_valid(value) for value in values), schema
        return "empty", []
    if matcher.warnings:
        return "warned", []
    return "silent", [value for value in values
                      if matcher.accepts(json.dumps(value)) != validator.is_valid(value)]
