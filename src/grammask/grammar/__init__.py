"""The grammar front end and the public ``Grammar`` class.

``Grammar`` holds a validated AST and its normalized form: parse (``kbnf.py``,
``gbnf.py``, with built-ins ``name!(...)`` expanded by ``builtins.py``;
or an AST from a program) -> ``validate.py`` -> ``normalize.py``
(named passes) -> ``lnf.py`` (flat arrays).  Everything that can fail is
computed once, at construction, so every error surfaces there; the printout
and fingerprint are derived on first use; the object never changes after.

- ``ast``: the GrammarAST (source spans on parsed nodes)
- ``lnf``: the LNF arrays consumed by the Earley core
- ``warnings``: messages about unused rules of a grammar a user wrote (also
  emitted as warnings at the caller); none for one a translator generated (JSON
  Schema, pydantic), whose unused helper rules are pruned silently
- ``start_accepts_empty``: the empty string is a sentence
- ``token_terminal_kinds``: the token terminals used (``grammar/token_terminals.py``)
- ``fingerprint``: sha256 hex of the canonical LNF (names, arrays, terminal keys)
- ``pass_sizes``: grammar size after each normalization pass
- ``to_ebnf()``: the normalized grammar as KBNF (re-parses to the same grammar;
  GrammarError when a literal is not UTF-8, which KBNF cannot spell)

``builtin(name)`` loads a grammar shipped in ``grammask/grammars/``.

Limits (``Config`` fields; each violation raises ``LimitExceeded`` naming the
field, the size asked for and the maximum):

- ``max_nesting`` (1,000): nesting depth of groups in source text (for ASTs
  from programs: composite-node depth up to ``2 * max_nesting + 2``);
- ``max_repetition`` (10,000): the largest bound of ``{m,n}`` (work and size
  of its expansion are O(log m + (n - m)));
- ``max_rules`` (100,000): nonterminals while expanding repetitions and after
  normalization;
- ``max_dfa_states`` / ``max_dfa_bytes``: one regex terminal's DFA
  (``max_product_dfa_states`` / ``max_product_dfa_bytes`` in their place
  for an intersection or difference terminal, the product of several
  regexes).

Parsing and every pass use explicit stacks, so deep input never raises
``RecursionError``.
"""

from __future__ import annotations

from importlib import resources

from grammask.config import Config
from grammask.errors import warn_caller
from grammask.grammar.ast import GrammarAST, Regex, Rule
from grammask.grammar.collector import collector_paused
from grammask.grammar.gbnf import parse_gbnf
from grammask.grammar.kbnf import parse_kbnf
from grammask.grammar.lnf import LNF, build_lnf, lnf_fingerprint
from grammask.grammar.normalize import normalize
from grammask.grammar.token_terminals import check_reserved_bytes
from grammask.grammar.validate import validate

__all__ = ["Grammar", "builtin", "builtin_names"]


class Grammar:
    """A validated, normalized grammar (see the module docstring)."""

    def __init__(self, ast: GrammarAST, config: Config | None = None, *, generated: bool = False):
        self._config = config or Config()
        self._ast = ast
        with collector_paused():
            unused, self._token_terminal_kinds = validate(ast, self._config)
            normalized = normalize(ast, self._config)
            self._lnf = build_lnf(normalized.flat, normalized.compiler)
        self._warnings = [] if generated else unused
        for message in self._warnings:
            warn_caller(message)
        self._pass_sizes = normalized.pass_sizes
        if self._token_terminal_kinds:
            check_reserved_bytes(ast)
        self._text: str | None = None
        self._fingerprint: str | None = None

    # --- constructors -----------------------------------------------------------

    @classmethod
    def from_ebnf(cls, text: str, start: str = "start", *, config: Config | None = None) -> "Grammar":
        """A KBNF grammar (docs/design.md section 3)."""
        config = config or Config()
        with collector_paused():   # one pause over parsing and normalizing
            return cls(parse_kbnf(text, start, config), config)

    @classmethod
    def from_gbnf(cls, text: str, start: str = "root", *, config: Config | None = None) -> "Grammar":
        """A llama.cpp GBNF grammar (docs/design.md section 3)."""
        config = config or Config()
        with collector_paused():
            return cls(parse_gbnf(text, start, config), config)

    @classmethod
    def from_regex(cls, pattern: str, *, config: Config | None = None) -> "Grammar":
        """The language of one Rust-syntax regex, anchored at both ends."""
        return cls(GrammarAST((Rule("start", Regex(pattern)),), "start"), config)

    @classmethod
    def from_ast(cls, ast: GrammarAST, *, config: Config | None = None) -> "Grammar":
        """A grammar built by a program (e.g. the JSON Schema compiler)."""
        return cls(ast, config)

    @classmethod
    def from_json_schema(cls, schema, *, config: Config | None = None, **options) -> "Grammar":
        """JSON documents valid for ``schema`` (a dict or JSON text)."""
        from grammask.json_schema import schema_to_ast

        with collector_paused():
            return cls(schema_to_ast(schema, **options), config, generated=True)

    @classmethod
    def from_pydantic(cls, model, *, config: Config | None = None, **options) -> "Grammar":
        """JSON documents valid for a pydantic model class."""
        from grammask.json_schema import pydantic_to_ast

        return cls(pydantic_to_ast(model, **options), config, generated=True)

    # --- properties -------------------------------------------------------------

    @property
    def ast(self) -> GrammarAST:
        return self._ast

    @property
    def lnf(self) -> LNF:
        return self._lnf

    @property
    def config(self) -> Config:
        return self._config

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    @property
    def token_terminal_kinds(self) -> frozenset:
        """Kinds of token terminals (``paragraph_token!``, ``any!``) the grammar uses."""
        return self._token_terminal_kinds

    @property
    def start_accepts_empty(self) -> bool:
        return self._lnf.start_accepts_empty

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = lnf_fingerprint(self._lnf)
        return self._fingerprint

    @property
    def pass_sizes(self) -> list[tuple[str, dict[str, int]]]:
        return list(self._pass_sizes)

    def to_ebnf(self) -> str:
        if self._text is None:
            self._text = self._lnf.to_ebnf()
        return self._text

    def __repr__(self) -> str:
        sizes = self._lnf.sizes()
        return (f"Grammar(start={self._ast.start!r}, nonterminals={sizes['n_nonterminals']}, "
                f"productions={sizes['n_productions']}, terminals={sizes['n_terminals']}, "
                f"dfas={sizes['n_dfas']}, start_accepts_empty={self.start_accepts_empty}, "
                f"fingerprint={self.fingerprint[:12]})")


BUILTIN_FILES = {"json": ("json.ebnf", "start"), "json_gbnf": ("json.gbnf", "root")}


def builtin_names() -> list[str]:
    return sorted(BUILTIN_FILES)


def builtin_text(name: str) -> str:
    """Source text of a shipped grammar (``json`` is KBNF, ``json_gbnf`` GBNF)."""
    if name not in BUILTIN_FILES:
        raise KeyError(f"no built-in grammar {name!r}; available: {', '.join(builtin_names())}")
    filename, _ = BUILTIN_FILES[name]
    return resources.files("grammask").joinpath("grammars", filename).read_text(encoding="utf-8")


def builtin(name: str, *, config: Config | None = None) -> Grammar:
    """A grammar shipped with grammask, by name (see ``builtin_names()``)."""
    text = builtin_text(name)
    filename, start = BUILTIN_FILES[name]
    if filename.endswith(".gbnf"):
        return Grammar.from_gbnf(text, start, config=config)
    return Grammar.from_ebnf(text, start, config=config)
