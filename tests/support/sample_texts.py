"""Texts that tokenizer round-trip tests encode with every real tokenizer:
prose, pretty and compact JSON, code with tabs, numbers, non-Latin scripts
and emoji (including a ZWJ sequence), runs of spaces, tabs and newlines, and a
no-break space."""

from __future__ import annotations

import json

PRETTY_JSON = json.dumps({"name": "Ada Lovelace", "born": 1815, "tags": ["math", "poetry"],
                          "nested": {"ok": True, "ratio": -0.125, "none": None}}, indent=2)
SAMPLE_TEXTS = [
    "The quick brown fox jumps over the lazy dog. It's 5 o'clock, isn't it?",
    PRETTY_JSON,
    json.dumps(json.loads(PRETTY_JSON), separators=(",", ":")),
    "def fib(n):\n    if n < 2:\n        return n\n\treturn fib(n - 1) + fib(n - 2)\n",
    "3.14159 2718281828 0x1F 1e-9 -42 100000000000000000000",
    "Ünïcödé: 日本語のテキスト, 中文, 한국어, emoji 😀🎉👩‍💻, math ∑∫√",
    "spaces:     four\t\ttabs\n\n\nnewlines   \r\n  trailing   ",
    "  leading spaces and a \u00a0 no-break space",
]
