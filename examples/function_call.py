"""Function-call arguments: the model picks one of three tools and fills its arguments.

``schemas/tool_call.json`` is an ``anyOf`` over the tools; each branch fixes
the tool's name (``const``) and its argument object (enums, a time pattern,
an email format).  The call is always well-formed and can be dispatched
without checking.

Run: ``python examples/function_call.py [--request "..."]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from grammask.integrations.llama_cpp import generate, load_model

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = "get_weather(city, unit), set_alarm(time, label), send_email(to, subject, body)"


def dispatch(call: dict) -> str:
    """What a program would do with the call: here, describe it."""
    arguments = call["arguments"]
    if call["tool"] == "get_weather":
        return f"looking up the weather in {arguments['city']} ({arguments['unit']})"
    if call["tool"] == "set_alarm":
        return f"alarm set for {arguments['time']} {arguments.get('label', '')}".rstrip()
    return f"email to {arguments['to']}: {arguments['subject']!r}"


def main(argv=None, llm=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--request", default="What's the weather like in Lisbon? I use celsius.")
    parser.add_argument("--max-tokens", type=int, default=160)
    args = parser.parse_args(argv)
    with open(os.path.join(HERE, "schemas", "tool_call.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    llm = llm or load_model()
    prompt = f"Tools: {TOOLS}. Answer with the JSON tool call for this request: {args.request}"
    result = generate(llm, schema, prompt, max_tokens=args.max_tokens, warn=False)
    if result.complete:
        print(json.dumps(result.data, ensure_ascii=False))
        print(dispatch(result.data), file=sys.stderr)
    else:
        print(result.text)
        print(f"incomplete after {result.n_tokens} tokens: raise --max-tokens", file=sys.stderr)
    return result


if __name__ == "__main__":
    sys.exit(0 if main().complete else 3)
