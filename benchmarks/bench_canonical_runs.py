"""Steps deep inside a long whitespace run, with the canonical filter on: does a step's cost grow with the run?

For each tokenizer (cl100k, Llama-3 by default), the text ``{"a": 1`` followed by
mixed whitespace (spaces, tabs, newlines, ``\\r\\n``; a fixed seed) and ``}`` is
encoded with the tokenizer's own encode, and its tokens are fed one by one
(every prefix of a canonical encoding is allowed), and every step is timed in
process CPU time; one part per process, so neither warms the other's caches:

  * ``--part filter``: ``CanonicalFilter.advance`` and the keep bitset of the
    new state (``keep_bitset``: what the engine's mask adds per token);
  * ``--part engine``: ``compute_allowed_token_ids`` under the shipped JSON
    grammar with ``Config(canonical=True)`` (lookahead included), then
    ``try_accept_new_token``.

Reported for the windows of ``--window`` steps ending at the 100th, 1,000th
and 5,000th whitespace token: median and max in microseconds (and, for the
filter, the length of its pre-token region there).  Run it under two builds
in the same minutes for an A/B.

Usage: python benchmarks/bench_canonical_runs.py [--only cl100k] [--part engine] [--depths 100 1000]
       [--window 20] [--out PATH]
"""

from __future__ import annotations

import argparse
import pathlib
import random
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402
from bench_canonical_generation import load_cl100k, load_llama3  # noqa: E402

import grammask  # noqa: E402
from grammask.grammar import builtin  # noqa: E402

TOKENIZERS = {"cl100k": load_cl100k, "llama3": load_llama3}
DEPTHS = (100, 1000, 5000)


def _run_text(seed: int) -> str:
    rng = random.Random(seed)
    pieces = [" ", "  ", "\n", "\t", "\n  ", "\r\n", "    ", "\t\t"]
    return '{"a": 1' + "".join(rng.choice(pieces) for _ in range(16_000)) + "}"


def measure(vocab, encode, window: int, part: str, depths=DEPTHS, report=print) -> dict:
    """Per depth, the median and max step of ``part`` ("filter" or "engine") over the window
    (each depth reported as soon as its window is timed)."""
    ids = encode(_run_text(5))
    head = len(encode('{"a": 1'))
    assert len(ids) > head + max(depths), len(ids)
    compiled = grammask.compile(builtin("json"), vocab, grammask.Config(canonical=True))
    engine = grammask.Engine(compiled)
    flt = compiled.canonical
    state = flt.initial_state()
    step_us, rows = {}, {}
    for step, token_id in enumerate(ids[:head + max(depths) + 1]):
        start = time.process_time_ns()
        if part == "engine":
            engine.compute_allowed_token_ids()
            engine.try_accept_new_token(token_id)
        else:
            state = flt.advance(state, token_id)
            flt.keep_bitset(state)
        step_us[step] = (time.process_time_ns() - start) / 1000
        depth = step - head
        if depth in depths:
            steps = [step_us[step - offset] for offset in range(window)]
            rows[depth] = {"step_median_us": round(float(np.median(steps)), 1),
                           "step_max_us": round(max(steps), 1)}
            if part == "filter":
                rows[depth]["region_chars"] = len(state.region)
            report(depth, rows[depth])
    return rows


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(TOKENIZERS))
    parser.add_argument("--window", type=int, default=20)
    parser.add_argument("--part", choices=("filter", "engine"), default="filter")
    parser.add_argument("--depths", type=int, nargs="*", default=list(DEPTHS))
    parser.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results"
                                             / "bench_canonical_runs.json"))
    args = parser.parse_args(argv)
    results = {"machine": machine_info(), "window": args.window, "part": args.part, "tokenizers": {}}
    for name, load in TOKENIZERS.items():
        if args.only and name not in args.only:
            continue
        vocab, encode = load()
        results["tokenizers"][name] = measure(
            vocab, encode, args.window, args.part, tuple(args.depths),
            lambda depth, row: print(f"{name:8s} {args.part:6s} after {depth:5d} whitespace tokens: {row}",
                                     flush=True))
    write_results(results, args.out)
    return results


if __name__ == "__main__":
    main()
