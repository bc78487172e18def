"""Regression rows: small grammars, each guarding one bug or one property
that a pass or the Earley core could lose, with the verdict expected on each
string (same shape and meaning as ``support.grammar_cases.CASES``; ``about``
says what the row guards).  tests/test_grammar_cases.py runs them through
every recognizer.  Add a row here when a bug is found on a small grammar.
"""

from __future__ import annotations

from support.grammar_cases import GrammarCase

FORTY_DISTINCT_OPTIONALS = ("start ::= " + " ".join(f"b{i}?" for i in range(40)) + ";\n"
                            + "".join(f'b{i} ::= "{chr(97 + i % 26)}{i}";\n' for i in range(40)))

REGRESSIONS: tuple[GrammarCase, ...] = (
    GrammarCase(
        "leo definition", "kbnf",
        'start ::= "x" a | "x" a "y" | "z" b; a ::= "a" a | "a"; b ::= "b" b | "b" | "b" b "c";',
        "Leo applies only when exactly one item waits for the completed nonterminal "
        "(the seed's counterexample): after 'x', two items wait for a and only one "
        "completes; a Leo item there would lose 'xa..ay'",
        accepted=("xa", "xaay", "zb", "zbbc", "zbbbcc"), incomplete=("x", "z"),
        rejected=("xay ", "zc", "xyy", "zbcc", "zbbcc")),
    GrammarCase(
        "unit cycle", "kbnf", 'start ::= a | "c"; a ::= start "a" | "b";',
        "remove_unit_rules on a cycle through the start (start -> a -> start ...)",
        accepted=("c", "b", "ca", "baa"), incomplete=("",), rejected=("a", "cb", "ac")),
    GrammarCase(
        "chain through two rules", "kbnf", 'start ::= a "x"; a ::= b "y" | "a"; b ::= a "z" | "b";',
        "left recursion through two rules (a -> b -> a): completions that reach back "
        "several sets",
        accepted=("ax", "byx", "azyx", "byzyx"), incomplete=("a", "b", "az", "azy"),
        rejected=("x", "bx", "ay", "bz", "azx")),
    GrammarCase(
        "regex ends and continues", "kbnf", 'start ::= #"a+" "b" | #"a+" | #"ab*" start;',
        "a DFA item both advanced (terminal may end) and kept (may continue) on one byte",
        accepted=("a", "aab", "aba", "abbaa", "aaab"), incomplete=("",), rejected=("b", "aabb c", "ba")),
    GrammarCase(
        "terminal matching only the empty string", "kbnf", 'start ::= "a" #e"x*" "b" | #e"y*" "c";',
        "eliminate_nullable drops a terminal whose only match is the empty string "
        "(#e\"x*\" ends at once), so the core never completes a DFA at its start state",
        accepted=("ab", "c"), incomplete=("", "a"), rejected=("axb", "yc", "x")),
    GrammarCase(
        "nullable regex terminal", "kbnf", 'start ::= "<" #"[0-9]*" ">" | #"x*";',
        "a regex matching the empty string is made optional, including at the start "
        "(start_accepts_empty)",
        accepted=("", "<>", "<12>", "x", "xxx"), incomplete=("<", "<1"), rejected=("<x", "x<", ">", "<1>>")),
    GrammarCase(
        "language of only the empty string", "gbnf", 'root ::= "" | ("")*',
        "the start keeps no production when the language is {\"\"}",
        accepted=("",), rejected=("a", " ")),
    GrammarCase(
        "forty distinct optionals", "kbnf", FORTY_DISTINCT_OPTIONALS,
        "nullable elimination stays polynomial (no 2^40 expansion) and keeps the order",
        accepted=("", "a0b1z25", "n39", "a0"), incomplete=("a", "a0b"), rejected=("b1a0", "a0a0", "9")),
    GrammarCase(
        "regular repetition folded into one DFA", "gbnf", 'root ::= "n=" [1-9] [0-9]{0,15} ("," [0-9]+)*',
        "fold_regular_repetitions keeps the bounds of {0,15} and the (...)* after it",
        accepted=("n=1", "n=10,0", "n=9,12,3", "n=1" + "0" * 15), incomplete=("n=", "n=1,"),
        rejected=("n=0", "n=1" + "0" * 16, "n=1,,", "=1")),
    GrammarCase(
        "fold that would explode", "gbnf", 'root ::= [ab]* "a" [ab]{30}',
        "a repetition whose DFA would have 2^30 states falls back to rules",
        accepted=("ba" + "b" * 30, "a" * 31), incomplete=("", "ab", "b" * 40),
        rejected=("bb" + "b" * 30 + "c",)),
    GrammarCase(
        "literal alternation compiled to a DFA", "kbnf",
        "start ::= " + " | ".join(f'"word{i}"' for i in range(10)) + ' | "w";',
        "compile_literal_alternations (>= 8 single literals become one DFA terminal) "
        "keeps literals that are prefixes of others",
        accepted=("w", "word0", "word9"), incomplete=("wo", "word"), rejected=("word10", "wx", "word0 ")),
    GrammarCase(
        "adjacent regex terminals joined", "kbnf",
        'start ::= #"[a-c]" #"[a-z0-9]*" ";" | #"[0-9]" #"[a-c]?" #"x+";',
        "join_adjacent_regexes makes each run one DFA terminal of the concatenation "
        "(a terminal ending after one byte before a wide one ends inside every token)",
        accepted=("a;", "bz9;", "7x", "7axx"), incomplete=("", "a", "7", "7a"),
        rejected=(";", "d;", "77x", "7ab", "a;;")),
    GrammarCase(
        "gbnf \\x escapes are code points", "gbnf", 'root ::= "\\xff" [\\x41-\\x43]',
        "GBNF \\xHH is the code point U+00HH (two UTF-8 bytes above 0x7F), as in llama.cpp",
        accepted=("ÿA", "ÿC"), incomplete=("ÿ", b"\xc3"), rejected=(b"\xff", "ÿD", "A")),
)
