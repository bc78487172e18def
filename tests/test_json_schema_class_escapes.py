"""``strings.python_class``: the code points Python's ``re`` matches with
``\\d``, ``\\w`` and ``\\s``, which the pattern translation intersects with
ECMA-262's meaning (and complements for ``\\D`` ``\\W`` ``\\S``).

Oracle: ``re.match`` on each code point alone, over every code point but
the surrogates (the definition the run-finding pass replaces).
"""

from __future__ import annotations

import re

import pytest

from grammask.json_schema import strings
from grammask.json_schema.regex_text import MAX_CODE_POINT, SURROGATE_HI, SURROGATE_LO


@pytest.mark.parametrize("escape", [r"\d", r"\w", r"\s"])
def test_python_class_is_every_code_point_re_matches(escape):
    compiled = re.compile(escape)
    expected = [code for code in range(MAX_CODE_POINT + 1)
                if not SURROGATE_LO <= code <= SURROGATE_HI and compiled.match(chr(code))]
    found = [code for low, high in strings.python_class(escape) for code in range(low, high + 1)]
    assert found == expected
