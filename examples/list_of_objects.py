"""A list of objects: an array of books (title, author, year), 1 to 5 items.

The schema in ``schemas/books.json`` bounds the array (``minItems``,
``maxItems``) and each field; the output is always a valid array.

Run: ``python examples/list_of_objects.py [--topic "..."] [--max-tokens 300]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from grammask.integrations.llama_cpp import generate, load_model

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None, llm=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topic", default="classic science fiction novels")
    parser.add_argument("--max-tokens", type=int, default=300)
    args = parser.parse_args(argv)
    with open(os.path.join(HERE, "schemas", "books.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    llm = llm or load_model()
    prompt = (f"List three {args.topic} as a JSON array of objects with the fields title, author "
              "and year.")
    result = generate(llm, schema, prompt, max_tokens=args.max_tokens, warn=False)
    if result.complete:
        for book in result.data:
            print(f"{book['year']}  {book['title']} ({book['author']})")
    else:
        print(result.text)
        print(f"incomplete after {result.n_tokens} tokens: raise --max-tokens", file=sys.stderr)
    return result


if __name__ == "__main__":
    sys.exit(0 if main().complete else 3)
