"""Helpers shared by the test modules (test modules never import each other).

Oracles and references:
  ast_reference     fixpoint recognizer over a GrammarAST (never sees LNF)
  lnf_reference     plain-Python textbook Earley over LNF arrays (LNF or HandLNF)
  lark_translation  a GrammarAST as a Lark grammar, Lark's verdicts
  schema_matcher    the JSON Schema pipeline as a matcher, random walks
Grammars and inputs:
  grammar_cases     corpus of small grammars with hand-written verdicts
  regressions       rows of the same shape, each guarding a bug or property
  hand_lnf          hand-built LNF grammars from readable productions
  mini_dfa          small regex -> DFA compiler for hand_lnf terminals
  random_lnf        hypothesis strategies of random HandLNF grammars and inputs
  grammar_strategies  random GrammarASTs; compare two recognizers on short strings
  terminals_corpus  regex patterns and inputs for the terminal compiler tests
  sample_texts      texts for tokenizer round trips
Other:
  paths             the vendored workloads (a missing file fails the test)
  packages          files inside installed test-data packages (missing: fail)
  layering          the import layers of grammask and the upward-import checker

pytest puts tests/ on sys.path (rootdir conftest, no tests/__init__.py), so
test modules import these as ``support.<module>`` from any working directory.
"""
