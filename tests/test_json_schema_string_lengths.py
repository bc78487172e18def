"""String lengths counted in chunks (``string_nodes.string_with_length``).

Oracle: the definition of ``minLength`` / ``maxLength`` (the number of
characters of the decoded string) and ``jsonschema``, on every length up to
past three chunks, with ``max_string_regex_repeat`` small so that the chunked
split (the minimum's chunks and single characters, then the optional rest in
chunks and a tail) is exercised at every boundary: below, at and above each
multiple of the chunk size.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from support.schema_matcher import SchemaMatcher

CHUNK = 4
BOUNDS = [(low, high) for low in range(0, 3 * CHUNK + 2)
          for high in [None] + list(range(max(low, 1), 3 * CHUNK + 3))
          if low > CHUNK or high is None or high > CHUNK]
"""Every (minLength, maxLength) whose count does not fit one regex of ``CHUNK``."""

PIECES = ["a", "é", "\\n", "\\u00e9", "😀"]
"""Characters as JSON spells them: plain, two bytes, an escape, a \\u escape, four bytes."""


@pytest.mark.parametrize("low, high", BOUNDS)
def test_every_length_is_accepted_exactly_when_in_bounds(low, high):
    schema = {"type": "string", "minLength": low}
    if high is not None:
        schema["maxLength"] = high
    matcher = SchemaMatcher(schema, max_string_regex_repeat=CHUNK)
    validator = jsonschema.Draft202012Validator(schema)
    for length in range(0, 3 * CHUNK + 5):
        for index, piece in enumerate(PIECES):
            text = '"' + "".join(PIECES[(index + i) % len(PIECES)] for i in range(length)) + '"'
            expected = validator.is_valid(json.loads(text))
            assert expected == (low <= length and (high is None or length <= high))
            assert matcher.accepts(text) == expected, (low, high, text)
            # every prefix of an accepted string is viable; one more character past the maximum is not
            if expected:
                assert matcher.viable(text[:-1])
        if high is not None and length == high + 1:
            assert not matcher.viable('"' + "a" * length)
