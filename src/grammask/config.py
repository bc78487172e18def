"""Configuration of grammar compilation and decoding, with every documented limit.

``Config`` is frozen and hashable: it is part of the compile cache key.  Each
limit is a field; ``LimitExceeded`` errors name the field to raise.  Every
field is checked when the Config is made (``InvalidArgumentType`` for a
wrong type, ``InvalidArgument`` for a value out of range, both naming the
field), so a bad value never reaches a compile.  ``cache_dir()`` names the
directory of grammask's on-disk caches and ``disk_caches_enabled()`` says
whether they are used (environment settings, not fields: every Config
shares them).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, fields
from typing import Optional

from grammask.errors import InvalidArgument, InvalidArgumentType

_MINIMUM = {"canonical_lookahead": 0, "canonical_lookahead_budget": 1, "mask_cache_entries": 0,
            "max_dfa_states": 2, "max_product_dfa_states": 2, "max_dfa_bytes": 1,
            "max_product_dfa_bytes": 1, "max_rules": 1, "max_nesting": 1, "max_repetition": 0,
            "max_earley_items": 1, "max_earley_work_per_byte": 1, "max_earley_work_per_mask": 1,
            "max_rollback_bytes": 0}
"""The smallest value each integer field takes (``max_rollback_bytes`` may also be None)."""


@dataclass(frozen=True)
class Config:
    # Decoding semantics
    eager_end: bool = False
    """Finish at the first complete match (kbnf's behaviour) instead of
    allowing both EOS and continuation when the output is complete."""

    canonical: Optional[bool] = None
    """Canonical-tokenization filter: True forces it on, False off, None turns
    it on wherever the filter is exact for the vocabulary's tokenizer (GGUF /
    llama.cpp vocabularies included)."""

    canonical_lookahead: int = 4
    """How many tokens ahead the canonical filter checks that a token can
    still be followed canonically (see ``grammask.engine.lookahead``); 0
    turns the check off, so a forced continuation (``t`` then ``rue``) can
    dead-end and fall back to the grammar mask."""

    accept_non_canonical: bool = False
    """With a canonical filter, ``try_accept_new_token`` refuses a token the
    mask forbids (``TokenRejected`` says it is not canonical here and which
    allowed tokens spell like it), so the mask and accept always agree.
    True accepts such a token and only counts it in
    ``stats()["non_canonical_accepts"]``: for callers that feed tokens they
    did not sample from the mask (a prompt's tail, text forced from outside);
    the canonical state follows the tokens either way."""

    canonical_lookahead_budget: int = 20_000
    """Work one mask's canonical lookahead may spend: a search node or one
    canonical ``is_allowed`` query costs 1, a whole keep bitset 64.  Past it
    the undecided tokens stay in the mask and ``stats()["lookahead_cutoffs"]``
    counts the step (at about 30-50 µs a unit, 20,000 bounds a step near
    1 s; most masks of real JSON schemas on Llama-3 spend under 5,000, a
    ``true``/``false`` value start after flexible whitespace about 10,700)."""

    mask_cache_entries: int = 256
    """Whole masks kept per compiled grammar, keyed by the Earley state's
    exact key and the canonical state (4 bytes per 32 tokens each: 16 KB
    for a 131k vocabulary); 0 turns the cache off."""

    # Limits (each named in LimitExceeded messages)
    max_dfa_states: int = 10_000
    """States of one regex terminal's DFA."""

    max_product_dfa_states: int = 50_000
    """States of one intersection or difference terminal's DFA (the product
    of several regexes: a ``pattern`` or ``format`` with ``minLength`` /
    ``maxLength``, several patterns of one string, a pattern minus its
    guarded look-aheads), in place of ``max_dfa_states``.  A length bound
    multiplies the pattern's states by about the count (``format: uri`` with
    ``maxLength: 255``: 42,197 states, built in about 0.4 s, 3.8 MB), so one
    limit for every terminal would either refuse these exact translations or
    let any plain regex grow as large; 50,000 admits the length products of
    the MaskBench schemas up to ``maxLength`` 255 beside a ``uri`` and keeps
    word counts (``^(?:\\S+\\s+){0,K}\\S+$`` with ``maxLength``: 68k to 1.4M
    states) out.  Masks over such a terminal build a token set at most
    positions of a long value (see docs/performance.md, section 7).  The
    JSON Schema translator spends it on length bounds and on the strings a
    ``not`` removes (a difference terminal); a product of patterns and a
    format alone is kept within ``max_dfa_states``, as before."""

    max_dfa_bytes: int = 8 << 20
    """Bytes of one regex terminal's DFA tables while it is built."""

    max_product_dfa_bytes: int = 32 << 20
    """Bytes of one intersection or difference terminal's tables while it is
    built, in place of ``max_dfa_bytes``.  The crate builds the product of
    the parts' minimal tables pair by pair and minimizes it after each; a
    product before minimization holds every reachable pair, also those from
    which no string matches every part, so it can be several times its
    minimal size: MaskBench's string5 has "four patterns minus a fifth" of
    33,937 states (3.1 MB minimal) that needs 16-24 MB before minimizing.
    32 MB lets such products within ``max_product_dfa_states`` be built (in
    about a second for string5's) while a plain regex keeps the tighter
    ``max_dfa_bytes``."""

    max_rules: int = 100_000
    """Rules (nonterminals) after normalization."""

    max_nesting: int = 1_000
    """Nesting depth of groups in a grammar's source text."""

    max_repetition: int = 10_000
    """Largest bound m or n of a ``{m,n}`` repetition."""

    max_earley_items: int = 50_000_000
    """Live Earley items in one recognizer (memory guard)."""

    max_earley_work_per_byte: int = 1_000_000
    """Earley work of one set: one byte accepted, or one byte or terminal end
    that a mask's token-trie walk tries.  A unit is one item read or written
    while the set is built: a scan item of the previous set, an item a
    completion looks through (plus one per completion), a predicted item;
    about 10 ns each on the shared 2-core EPYC (8-15), so 1,000,000 bounds
    a byte near 10 ms.  JSON spends 10-100 units a byte (the first byte of a large
    schema more: its predictions cover much of the grammar); a highly
    ambiguous grammar (``s ::= s s s | ...``) about n² at byte n."""

    max_earley_work_per_mask: int = 10_000_000
    """Earley work (units as in ``max_earley_work_per_byte``) of computing
    one mask: every byte and terminal end the token-trie walk pushes, and
    the canonical lookahead's probes.  Past it the mask raises
    ``LimitExceeded`` and the engine is unchanged.  10,000,000 units bound
    a mask near 0.1 s; real JSON schemas on Llama-3 spend up to about
    200,000 (``stats()["max_mask_work"]``, canonical lookahead on; under
    2,000 without it), while the ambiguous 4-rule grammar of
    ``tests/test_earley_work_budget.py`` on 293 tokens spends 1,500,000 at
    byte 20 (22 ms) and 6,500,000 at byte 40 (86 ms); unbounded, its mask
    took 1.3 s at byte 120 and 4.9 s at byte 200."""

    max_rollback_bytes: Optional[int] = 4096
    """How far back ``Engine.rollback`` may go, in bytes of output (4096:
    several hundred tokens, enough for speculative decoding).  The
    recognizer compacts older Earley sets away (kbnf's and ZapFormat's
    compaction) and the engine forgets older steps, so a long output keeps
    bounded memory (the output's own bytes aside).  None keeps everything
    (about 200 bytes of memory per output byte on JSON) and allows rolling
    back to the start."""

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name == "canonical":
                if value is not None and not isinstance(value, bool):
                    raise InvalidArgumentType(f"Config.canonical must be True, False or None, got {value!r}")
            elif field.type in (bool, "bool"):
                if not isinstance(value, bool):
                    raise InvalidArgumentType(f"Config.{field.name} must be a bool, got {value!r}")
            elif field.name in _MINIMUM:
                if value is None and field.name == "max_rollback_bytes":
                    continue
                if isinstance(value, bool) or not isinstance(value, int):
                    raise InvalidArgumentType(f"Config.{field.name} must be an int, got {value!r}")
                if value < _MINIMUM[field.name]:
                    raise InvalidArgument(
                        f"Config.{field.name} must be >= {_MINIMUM[field.name]}, got {value}")


def disk_caches_enabled() -> bool:
    """Whether grammask reads and writes its on-disk caches (off when
    ``$GRAMMASK_NO_DISK_CACHE`` is set to anything non-empty; read at every
    access, so a test or benchmark may switch it at run time)."""
    return not os.environ.get("GRAMMASK_NO_DISK_CACHE")


def cache_dir() -> str:
    """Directory of grammask's on-disk caches (the canonical filter's tables,
    the token sets' disk tier): ``$GRAMMASK_CACHE_DIR`` or ``~/.cache/grammask``
    (read at every call; the home directory's expansion is kept per ``$HOME``)."""
    configured = os.environ.get("GRAMMASK_CACHE_DIR")
    if configured is not None:
        return configured
    return _default_cache_dir(os.environ.get("HOME"))


@functools.lru_cache(maxsize=4)
def _default_cache_dir(home: str | None) -> str:
    """``~/.cache/grammask`` as ``expanduser`` gives it under ``$HOME`` = ``home``."""
    return os.path.join(os.path.expanduser("~"), ".cache", "grammask")
