"""The options of a JSON Schema translation (their meaning: ``grammask.json_schema``).

Data layout: one frozen dataclass; ``grammask.json_schema._options`` checks
the values a user passes before a translation starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class Options:
    strict: bool = False
    whitespace: str = "flexible"
    max_whitespace: Optional[int] = 256
    any_order: bool = False
    close_objects: bool = False
    start: str = "start"
    max_grammar_nodes: int = 500_000
    max_any_order_states: int = 1024
    max_schema_depth: int = 128
    max_string_regex_repeat: int = 64
    format_assertion: bool = True
    resources: Optional[Mapping[str, Any]] = None
