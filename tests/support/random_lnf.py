"""Random hand-built LNF grammars and inputs for fuzzing the Earley core.

* ``grammars()``: a hypothesis strategy of random ``HandLNF`` grammars (left /
  right / middle recursion, ambiguity, unit cycles, literals sharing prefixes,
  regex terminals that can end and continue, early-end, complement and
  substring terminals, multi-byte UTF-8 literals and regexes) drawn from
  ``TERMINAL_POOL`` (``ASCII_POOL``: the ones Lark reads the same way);
* ``grammar_and_input()``: a grammar with an input that mixes random bytes of
  ``ALPHABET`` with bytes the grammar allows (so inputs go deep);
* ``examples(n)``: hypothesis settings for n examples times
  ``GRAMMASK_FUZZ_SCALE`` (``SCALE``, default 1), derandomized.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings, strategies as st

from grammask._core.earley import EarleyRecognizer

from support.hand_lnf import Terminal, assemble_lnf

SCALE = float(os.environ.get("GRAMMASK_FUZZ_SCALE", "1"))


def examples(n):
    return settings(max_examples=max(1, int(n * SCALE)), deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


TERMINAL_POOL = [
    Terminal("literal", b"a"), Terminal("literal", b"b"), Terminal("literal", b"ab"),
    Terminal("literal", b"aba"), Terminal("literal", b"abb"), Terminal("literal", b"ba"),
    Terminal("literal", "\u00e9".encode()), Terminal("literal", "a\u20ac".encode()),
    Terminal("regex", b"a+"), Terminal("regex", b"[ab]b*"), Terminal("regex", b"a|ab"),
    Terminal("regex", b"(ab)+"), Terminal("regex", b"b?a"), Terminal("regex", b"(\\xc3\\xa9)+"),
    Terminal("early_end", b"a*b"), Terminal("early_end", b"(a|b)a"),
    Terminal("complement", b"bb"), Terminal("complement", b"a"),
    Terminal("substrings", b"abba"), Terminal("substrings", "a\u00e9b".encode()),
]
# Lark's lexer takes Python's leftmost-first match and then its shorter
# endings, so alternations whose later branch is longer ("a|ab") are left out.
ASCII_POOL = [t for t in TERMINAL_POOL
              if t.kind in ("literal", "regex") and t.value.isascii() and t.value != b"a|ab"]
ASCII_POOL.append(Terminal("regex", b"ab?"))

ALPHABET = b"ab" + "\u00e9\u20ac".encode() + b"c"


@st.composite
def grammars(draw, pool=TERMINAL_POOL, max_nonterminals=4):
    """Random LNF: nonterminal i's first production only uses terminals and
    nonterminals > i, so every nonterminal is productive."""
    n_nonterminals = draw(st.integers(1, max_nonterminals))
    terminal_ids = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=4, unique=True))
    terminals = [pool[k] for k in terminal_ids]

    def symbol(low):
        choices = [("t", k) for k in range(len(terminals))]
        choices += [("n", k) for k in range(low, n_nonterminals)]
        return draw(st.sampled_from(choices))

    productions = []
    for nt in range(n_nonterminals):
        alternatives = [[symbol(nt + 1) for _ in range(draw(st.integers(1, 3)))]]
        for _ in range(draw(st.integers(0, 2))):
            alternatives.append([symbol(0) for _ in range(draw(st.integers(1, 3)))])
        productions.append(alternatives)
    return assemble_lnf(productions, terminals, start_accepts_empty=draw(st.booleans()))


@st.composite
def grammar_and_input(draw, pool=TERMINAL_POOL, max_len=8):
    lnf = draw(grammars(pool))
    # Inputs mix random bytes with bytes the grammar allows (so they go deep).
    recognizer = EarleyRecognizer(lnf)
    data = bytearray()
    for _ in range(draw(st.integers(0, max_len))):
        allowed = recognizer.allowed_byte_values()
        if allowed and draw(st.integers(0, 3)) > 0:
            byte = draw(st.sampled_from(allowed))
        else:
            byte = draw(st.sampled_from(list(ALPHABET)))
        data.append(byte)
        if not recognizer.push_byte(byte):
            break
    return lnf, bytes(data)
