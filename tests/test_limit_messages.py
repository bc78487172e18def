"""A LimitExceeded says how to raise its limit, or that no setting raises it."""

from __future__ import annotations

import pytest

import grammask


def test_a_setting_is_named_with_how_to_raise_it():
    with pytest.raises(grammask.LimitExceeded) as info:
        grammask.Grammar.from_regex("a{0,20000}")
    assert info.value.limit == "max_repetition" and info.value.settable
    assert "max_repetition=..." in str(info.value)


def test_a_fixed_limit_says_it_is_not_a_setting():
    schema = {"type": "array", "prefixItems": [{"type": "integer"}] * 10_001}
    with pytest.raises(grammask.LimitExceeded) as info:
        grammask.Grammar.from_json_schema(schema)
    assert info.value.limit == "MAX_EXPLICIT_POSITIONS" and not info.value.settable
    assert "not a setting" in str(info.value) and "=..." not in str(info.value)
