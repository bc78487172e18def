"""One corpus of small grammars with the verdict expected on each string.

Every ``GrammarCase`` gives a grammar text, its dialect (``kbnf``: KBNF via
``Grammar.from_ebnf``, start rule ``start``; ``gbnf``: llama.cpp GBNF via
``Grammar.from_gbnf``, start rule ``root``), what it is about, and strings in
three groups by verdict:

* ``accepted``: whole sentences of the language;
* ``incomplete``: viable prefixes that are not sentences (some continuation
  makes them one);
* ``rejected``: not a prefix of any sentence.

The verdicts are written by hand from the grammar's meaning, never taken from
a recognizer.  tests/test_grammar_cases.py runs ``CASES`` and
``support.regressions.REGRESSIONS`` (the same shape, each row naming the bug
or property it guards) through every recognizer of the project.  Strings are
``str`` (UTF-8 encoded) or ``bytes`` (for invalid or split UTF-8).

``RIGHT_RECURSIVE_JSON`` is a right-recursive JSON-like KBNF grammar used by
the Leo and state-key tests on long inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

Text = Union[str, bytes]


@dataclass(frozen=True)
class GrammarCase:
    name: str
    dialect: str                    # "kbnf" or "gbnf"
    grammar: str
    about: str                      # what the case covers, or (regressions) what it guards
    accepted: tuple[Text, ...] = ()
    incomplete: tuple[Text, ...] = ()
    rejected: tuple[Text, ...] = ()

    def verdicts(self) -> list[tuple[bytes, str]]:
        """(bytes, "accepted" | "incomplete" | "rejected") for every string."""
        return [(text.encode() if isinstance(text, str) else text, verdict)
                for verdict, texts in (("accepted", self.accepted), ("incomplete", self.incomplete),
                                       ("rejected", self.rejected))
                for text in texts]


CASES: tuple[GrammarCase, ...] = (
    GrammarCase(
        "literal alternation", "kbnf", 'start ::= "cat" | "car" | "dog";',
        "literals sharing a prefix",
        accepted=("cat", "car", "dog"), incomplete=("", "c", "ca", "do"),
        rejected=("cab", "cats", "x", "d o")),
    GrammarCase(
        "right recursion", "kbnf", 'start ::= "a" start | "b";',
        "right recursion (Leo chains)",
        accepted=("b", "ab", "aaaab"), incomplete=("", "a", "aaa"), rejected=("ba", "bb", "c")),
    GrammarCase(
        "left recursion", "kbnf", 'start ::= start "a" | "b";',
        "left recursion",
        accepted=("b", "ba", "baaa"), incomplete=("",), rejected=("a", "ab", "bab")),
    GrammarCase(
        "middle recursion", "kbnf", 'start ::= "(" start ")" | "x";',
        "balanced nesting",
        accepted=("x", "(x)", "((x))"), incomplete=("(", "((x", "((x)"),
        rejected=("()", "x)", "(x))", ")")),
    GrammarCase(
        "ambiguous sums", "kbnf", 'start ::= start "+" start | "1";',
        "an ambiguous grammar (several derivations per sentence)",
        accepted=("1", "1+1", "1+1+1"), incomplete=("1+", "1+1+"), rejected=("+", "1++", "11")),
    GrammarCase(
        "nullable rules", "kbnf", 'start ::= a b "c"; a ::= "a" | ; b ::= "b" | a;',
        "nullable rules inside a sequence",
        accepted=("c", "ac", "bc", "abc", "aac"), incomplete=("", "a", "ab", "aa"),
        rejected=("ca", "bb", "aaa", "cb")),
    GrammarCase(
        "empty sentence", "kbnf", 'start ::= "" | "a" start;',
        "a language containing the empty string",
        accepted=("", "a", "aaa"), rejected=("b", "ab")),
    GrammarCase(
        "kbnf option and repetition", "kbnf", 'start ::= "<" [ "-" ] { "ab" } ">";',
        "KBNF [option] and {repetition}",
        accepted=("<>", "<->", "<ab>", "<-abab>"), incomplete=("<", "<-", "<a", "<-aba"),
        rejected=("<--", "<ba", "<>>", "<b")),
    GrammarCase(
        "postfix operators", "kbnf", 'start ::= "x"? "y"+ "z"*;',
        "?, + and * on literals",
        accepted=("y", "xy", "yyy", "xyzz", "yz"), incomplete=("", "x"),
        rejected=("z", "xx", "yzy", "xz")),
    GrammarCase(
        "regex terminals", "kbnf", 'start ::= #"[0-9]+" ("." #"[0-9]+")?;',
        "a regex terminal that can end and continue",
        accepted=("7", "42", "3.14"), incomplete=("", "3."), rejected=(".5", "3..", "3.x", "a")),
    GrammarCase(
        "early end regex", "kbnf", 'start ::= #e"a*b" "!";',
        "#e: the terminal ends at its first match",
        accepted=("b!", "aab!"), incomplete=("", "a", "aab"), rejected=("bb!", "ab b", "!")),
    GrammarCase(
        "complement regex", "kbnf", 'start ::= "/*" #ex"\\*/" "*/";',
        "#ex: any text not containing the pattern (a C comment body)",
        accepted=("/**/", "/* x */", "/* * / */"), incomplete=("/*", "/* x", "/* x *"),
        rejected=("/* */ */", "*/")),
    GrammarCase(
        "substrings", "kbnf", 'start ::= "[" #substrs"hello" "]";',
        "#substrs: any substring of a text",
        accepted=("[hello]", "[ell]", "[o]", "[]"), incomplete=("[", "[he", "[hel"),
        rejected=("[hh]", "[leh]", "[x]")),
    GrammarCase(
        "multi-byte literals", "kbnf", 'start ::= "é" start | "€";',
        "UTF-8 literals of 2 and 3 bytes",
        accepted=("€", "é€", "ééé€"), incomplete=("", "é", b"\xc3", b"\xe2\x82"),
        rejected=(b"\xc3\xc3", "e€", b"\xe2\x82\xad")),
    GrammarCase(
        "gbnf classes", "gbnf", 'root ::= [a-c]+ [^a-c\\n]',
        "character classes, negated ones matching any other code point",
        accepted=("ad", "cba!", "aé", "b😀"), incomplete=("", "a", "abc", b"a\xf0\x9f"),
        rejected=("d", "a\n", "ad!")),
    GrammarCase(
        "gbnf any char", "gbnf", 'root ::= "<" . ">"',
        "'.' is one Unicode scalar value (1 to 4 bytes)",
        accepted=("<a>", "<é>", "<😀>", "<>>"), incomplete=("<", "<>", b"<\xf0\x9f\x98"),
        rejected=("<ab>", b"<\xff", b"<\xc3\x28")),
    GrammarCase(
        "gbnf counted repetition", "gbnf", 'root ::= ("x" | "yy"){2,4} "."',
        "{m,n} counts items, not bytes",
        accepted=("xx.", "yyx.", "xyyxyy."), incomplete=("x", "yy", "xxxx", "xy"),
        rejected=("x.", "xxxxx", "xyx yy.", "y.")),
    GrammarCase(
        "gbnf exact and open counts", "gbnf", 'root ::= "a"{3} "b"{2,}',
        "{m} and {m,}",
        accepted=("aaabb", "aaabbbb"), incomplete=("aa", "aaa", "aaab"), rejected=("aab", "aaaab")),
    GrammarCase(
        "gbnf multi-line rules", "gbnf", 'root ::= item ("," item)*\nitem ::= "a" |\n  "b"',
        "a rule continued after '|' on the next line",
        accepted=("a", "a,b", "b,b,a"), incomplete=("", "a,"), rejected=(",", "ab", "a,,")),
    GrammarCase(
        "json-like values", "kbnf",
        'start ::= value; value ::= "[" (value ("," value)*)? "]" | "n" | #"-?[0-9]+";',
        "nested lists of atoms: mutual recursion through a group",
        accepted=("n", "[]", "[n,[1,-2]]", "-12"), incomplete=("[", "[n,", "-", "[[]"),
        rejected=("]", "[,", "[n]]", "--1")),
)


RIGHT_RECURSIVE_JSON = r"""
start ::= value;
value ::= "[" ws elements ws "]" | "[]" | object | #"-?[0-9]+" | "true" | "null" | #"\"[a-z]*\"";
elements ::= value | value ws "," ws elements;
object ::= "{" ws members ws "}" | "{}";
members ::= #"\"[a-z]*\"" ws ":" ws value | #"\"[a-z]*\"" ws ":" ws value ws "," ws members;
ws ::= #"[ \n]*";
"""
