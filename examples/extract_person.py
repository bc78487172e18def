"""Schema-constrained extraction from a paragraph, with SmolLM2-135M, offline.

The JSON Schema in ``schemas/person.json`` becomes a grammar; every token
SmolLM2 samples keeps the output a prefix of a valid document, so the result
always parses and validates (unless ``--max-tokens`` cuts it: then the
script says so and exits with 3).

Run: ``python examples/extract_person.py [--text "..."] [--max-tokens 200]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from grammask.integrations.llama_cpp import generate, load_model

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEXT = ("Ada Lovelace, born 1815 in London, was a mathematician and writer. She is known for "
                "her notes on Charles Babbage's Analytical Engine, which contain the first published "
                "algorithm, and for foreseeing that computers could go beyond calculation.")


def main(argv=None, llm=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text", default=DEFAULT_TEXT, help="the paragraph to extract from")
    parser.add_argument("--max-tokens", type=int, default=200)
    args = parser.parse_args(argv)
    with open(os.path.join(HERE, "schemas", "person.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    llm = llm or load_model()
    prompt = ("Extract the person described below as a JSON object with the fields name, born (the "
              f"year), birthplace, occupation and known_for (a short list).\n\n{args.text}")
    result = generate(llm, schema, prompt, max_tokens=args.max_tokens, warn=False)
    if result.complete:
        print(json.dumps(result.data, indent=2, ensure_ascii=False))
    else:
        print(result.text)
        print(f"incomplete after {result.n_tokens} tokens: raise --max-tokens", file=sys.stderr)
    return result


if __name__ == "__main__":
    sys.exit(0 if main().complete else 3)
