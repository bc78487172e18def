"""Random regexes that mean the same in Rust regex syntax and Python's ``regex``
module, with a sampler of matching strings, for differential tests of
``grammask.terminals``.

A pattern is a small tree (``Literal``, ``CharClass``, ``Sequence``,
``Alternation``, ``Repeat``); ``render()`` gives its text in the syntax both
engines share (``render(lazy=False)`` drops lazy quantifiers, which mean the
same for full matches but trip the ``regex`` module's partial matching), ``sample(rng)`` a string that the pattern matches by
construction (the oracle is still the ``regex`` module; the sampler only
makes sure many test inputs are near the pattern's language).
``reference_minimal_size`` is a plain minimization (reachability,
co-reachability, naive partition refinement over all 256 bytes) used to
check that exported tables are minimal.

Constructs used: literal characters (escaped where both engines need it),
``.``, ``\\d \\w \\s \\D \\W \\S \\p{L} \\P{L} \\p{Greek} \\p{Lu} \\p{N}``,
bracket classes with ranges and negation (``[^"\\\\]``), ``?  *  +  {n}
{n,}  {n,m}`` (greedy and lazy), alternation, capturing and non-capturing
groups.  Avoided on purpose: ``$`` (Python also matches before a final
newline), Unicode ``\\b`` (no DFA), stacked quantifiers (``a*+`` is possessive
in Python), empty classes (the regex module's partial matching misreports
them).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import regex
from hypothesis import strategies as st

CHAR_POOL = (
    "abcAz07_ -\"\\.\n\t"
    "\u00e9\u00df\u4e2d\U0001F600\u0663\u216b\u00aa\u00a0\u2003\u03a3\u03c2\u0301\x1c\U00010400"
)
"""Characters for literals and inputs: ASCII (incl. metacharacters), 2/3/4-byte
UTF-8, digits and letters of other scripts, Unicode spaces, a combining mark,
a control.  All are classified alike by Rust's regex-syntax and ``regex``."""

CASE_POOL = "aAkKsS\u017f\u212a\u00e9\u00c9\u00df\u1e9e\u03c3\u03a3\u03c2\u216b\u217b\U00010400\U00010428"
"""Characters whose simple case folding both engines agree on (excludes the
Turkish dotted/dotless i and ligatures, where they differ)."""

_ESCAPE_OUTSIDE_CLASS = set("\\.+*?()|[]{}^$#&-~\"")
_ESCAPE_INSIDE_CLASS = set("\\[]^-&~")

NAMED_CLASSES = ("\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "\\p{L}", "\\P{L}", "\\p{Greek}",
                 "\\p{Lu}", "\\p{N}", ".", "[^\"\\\\]", "[a-z]", "[^a-z]", "[0-9a-f]", "[\\w-]")


def escape_literal(char: str) -> str:
    return "\\" + char if char in _ESCAPE_OUTSIDE_CLASS else char


def _class_members(pattern: str) -> tuple[str, ...]:
    return tuple(char for char in CHAR_POOL if regex.fullmatch(pattern, char))


@dataclass(frozen=True)
class Literal:
    char: str

    def render(self, lazy: bool = True) -> str:
        return escape_literal(self.char)

    def sample(self, rng: random.Random) -> str:
        return self.char


@dataclass(frozen=True)
class CharClass:
    text: str
    members: tuple[str, ...]

    def render(self, lazy: bool = True) -> str:
        return self.text

    def sample(self, rng: random.Random) -> str:
        return rng.choice(self.members)


@dataclass(frozen=True)
class Sequence:
    items: tuple

    def render(self, lazy: bool = True) -> str:
        return "".join(f"(?:{item.render(lazy)})" if isinstance(item, Alternation)
                       else item.render(lazy) for item in self.items)

    def sample(self, rng: random.Random) -> str:
        return "".join(item.sample(rng) for item in self.items)


@dataclass(frozen=True)
class Alternation:
    branches: tuple

    def render(self, lazy: bool = True) -> str:
        return "|".join(branch.render(lazy) for branch in self.branches)

    def sample(self, rng: random.Random) -> str:
        return rng.choice(self.branches).sample(rng)


@dataclass(frozen=True)
class Repeat:
    item: object
    low: int
    high: int | None
    operator: str
    lazy: bool
    capturing: bool

    def render(self, lazy: bool = True) -> str:
        inner = self.item.render(lazy)
        if not isinstance(self.item, (Literal, CharClass)):
            inner = f"({inner})" if self.capturing else f"(?:{inner})"
        return inner + self.operator + ("?" if lazy and self.lazy else "")

    def sample(self, rng: random.Random) -> str:
        high = self.low + 3 if self.high is None else self.high
        return "".join(self.item.sample(rng) for _ in range(rng.randint(self.low, high)))


@st.composite
def _bracket_class(draw) -> CharClass:
    chars = draw(st.lists(st.sampled_from(CHAR_POOL), min_size=1, max_size=4, unique=True))
    body = "".join("\\" + c if c in _ESCAPE_INSIDE_CLASS else c for c in chars)
    if draw(st.booleans()):
        low, high = sorted(draw(st.lists(st.sampled_from("acz07"), min_size=2, max_size=2)))
        body += f"{low}-{high}"
    negated = draw(st.booleans())
    text = f"[{'^' if negated else ''}{body}]"
    return CharClass(text, _class_members(text))


def _char_class(draw_class: CharClass | str) -> CharClass:
    return CharClass(draw_class, _class_members(draw_class))


atoms = st.one_of(
    st.sampled_from(CHAR_POOL).map(Literal),
    st.sampled_from(NAMED_CLASSES).map(_char_class),
    _bracket_class(),
).filter(lambda atom: not isinstance(atom, CharClass) or atom.members)


@st.composite
def _repeat(draw, inner) -> Repeat:
    item = draw(inner)
    shape = draw(st.sampled_from(["?", "*", "+", "{n}", "{n,}", "{n,m}"]))
    low = draw(st.integers(0, 3))
    high = low + draw(st.integers(0, 3))
    low, high, operator = {
        "?": (0, 1, "?"), "*": (0, None, "*"), "+": (1, None, "+"),
        "{n}": (low, low, f"{{{low}}}"), "{n,}": (low, None, f"{{{low},}}"),
        "{n,m}": (low, high, f"{{{low},{high}}}"),
    }[shape]
    return Repeat(item, low, high, operator, draw(st.booleans()), draw(st.booleans()))


patterns = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda items: Sequence(tuple(items))),
        st.lists(inner, min_size=2, max_size=3).map(lambda items: Alternation(tuple(items))),
        _repeat(inner),
    ),
    max_leaves=8,
)
"""Hypothesis strategy of pattern trees (render() for the text)."""


def near_inputs(tree, rng: random.Random, n_samples: int) -> list[bytes]:
    """Inputs around the pattern's language: samples, edits of samples
    (delete, insert, replace, truncate), a cut multi-byte character, invalid
    UTF-8 bytes, and strings over the pool."""
    inputs: list[bytes] = []
    for _ in range(n_samples):
        text = tree.sample(rng)
        inputs.append(text.encode())
        position = rng.randint(0, len(text))
        char = rng.choice(CHAR_POOL)
        inputs.append((text[:position] + char + text[position:]).encode())
        if text:
            cut = rng.randrange(len(text))
            inputs.append((text[:cut] + text[cut + 1:]).encode())
            inputs.append((text[:cut] + char + text[cut + 1:]).encode())
            encoded = text.encode()
            inputs.append(encoded[:rng.randrange(len(encoded))])
        inputs.append(text.encode() + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"]))
    for _ in range(3):
        inputs.append("".join(rng.choice(CHAR_POOL) for _ in range(rng.randint(0, 5))).encode())
    inputs.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 6))))
    return inputs


def reference_minimal_size(dfa) -> int:
    """Number of states of the minimal complete DFA (dead state included),
    by reachability, co-reachability and naive partition refinement over
    all 256 bytes."""
    reachable = {dfa.start}
    stack = [dfa.start]
    while stack:
        state = stack.pop()
        for byte in range(256):
            target = int(dfa.transitions[state, dfa.class_map[byte]])
            if target not in reachable:
                reachable.add(target)
                stack.append(target)
    live = {s for s in reachable if dfa.accepting[s]}
    changed = True
    while changed:
        changed = False
        for state in reachable - live:
            if any(int(dfa.transitions[state, c]) in live for c in range(dfa.n_classes)):
                live.add(state)
                changed = True
    if not live:
        return 1
    block = {s: (1 if dfa.accepting[s] else 2) if s in live else 0 for s in range(dfa.n_states)}
    while True:
        signatures = {s: (block[s],) + tuple(block[int(dfa.transitions[s, dfa.class_map[b]])]
                                             for b in range(256)) for s in block}
        numbering: dict[tuple, int] = {}
        refined = {s: numbering.setdefault(signatures[s], len(numbering)) for s in block}
        if len(numbering) == len(set(block.values())):
            return len({refined[s] for s in reachable if s in live}) + 1
        block = refined
