"""A llama.cpp GBNF grammar with SmolLM2: any ``.gbnf`` file, e.g. llama.cpp's own.

By default ``grammars/shopping_list.gbnf``.  Try llama.cpp's own grammars,
vendored for the tests: ``--grammar tests/workloads/gbnf/chess.gbnf --prompt
"Write a chess game."``.

Run: ``python examples/gbnf_grammar.py [--grammar FILE] [--prompt "..."]``
"""

from __future__ import annotations

import argparse
import os
import sys

import grammask
from grammask.integrations.llama_cpp import generate, load_model

HERE = os.path.dirname(os.path.abspath(__file__))


def default_grammar() -> str:
    return os.path.join(HERE, "grammars", "shopping_list.gbnf")


def main(argv=None, llm=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grammar", default=default_grammar(), help="a GBNF file (start symbol root)")
    parser.add_argument("--prompt", default="Write a shopping list with three items for a pancake breakfast.")
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args(argv)
    with open(args.grammar, encoding="utf-8") as handle:
        grammar = grammask.Grammar.from_gbnf(handle.read())
    llm = llm or load_model()
    result = generate(llm, grammar, args.prompt, max_tokens=args.max_tokens, warn=False)
    print(result.text, end="" if result.text.endswith("\n") else "\n")
    if not result.complete:
        print(f"incomplete after {result.n_tokens} tokens (a valid prefix): raise --max-tokens",
              file=sys.stderr)
    return result


if __name__ == "__main__":
    sys.exit(0 if main().complete else 3)
