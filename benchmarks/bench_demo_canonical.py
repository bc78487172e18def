"""The llama-cpp-python demo with a feature off and on (the canonical filter, or the overlapped steps), each run a fresh process.

What it measures
    The demo of ``./run demo`` (SmolLM2-135M Q4_1 through llama-cpp-python,
    ``n_threads=1``, ``examples/schemas/person.json``, the Ada Lovelace
    prompt, 160 tokens, greedy) with the compared feature off and on,
    alternating, each run in a fresh process as a user runs the demo (the
    filter's tables come from the disk cache, every per-process cache starts
    empty).  ``--compare canonical`` (the default): ``Config(canonical=False)``
    against ``Config(canonical=True)``, steps overlapped in both;
    ``--compare overlap``: ``generate(overlap=False)`` against
    ``overlap=True`` (``grammask.engine.step_ahead``), the filter off (as
    the demo ran before the filter was on by default for GGUF vocabularies,
    which keeps that comparison's figures comparable).  Per run: tokens, the CPU seconds of the
    vocabulary and the compile, the generation's wall seconds with and
    without the prompt's evaluation, its CPU seconds (the process's,
    llama.cpp's thread included) and grammask's own wall seconds inside the
    logits processor (and, with ``overlap``, its worker's CPU seconds).
    Per mode the medians
    of decode milliseconds per token (wall after the prompt / tokens), CPU
    milliseconds per token and grammask's milliseconds per token; on / off as
    the median of the per-round ratios (each round runs both modes back to
    back, which cancels slow drifts of a shared machine).  The outputs may
    differ between modes (the filter forbids non-canonical tokens the model
    would have picked), so per-token figures are compared, not per output.

Output: a JSON file (default ``benchmarks/results/bench_demo_canonical.json``,
``bench_demo_overlap.json`` for ``--compare overlap``) with the machine, the
commit, every run's figures and the summary.

Run: ``python benchmarks/bench_demo_canonical.py [--compare overlap] [--rounds 8]``
(about 10 s per run on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROMPT = ("Extract the person: Ada Lovelace, born 1815 in London, was a mathematician who wrote "
          "the first published algorithm.")
MODES = ("off", "on")


def child(compare: str, mode: str, max_tokens: int) -> dict:
    """One demo run in this process (``--child``): its figures."""
    import grammask
    from grammask.integrations.llama_cpp import compile_for, generate, load_model

    llm = load_model(n_ctx=2048, n_threads=1)
    schema = json.loads((ROOT / "examples" / "schemas" / "person.json").read_text())
    started = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        canonical = mode == "on" if compare == "canonical" else False
        compiled, _ = compile_for(llm, schema, grammask.Config(canonical=canonical))
    compile_s = time.process_time() - started
    started = time.process_time()
    overlap = mode == "on" if compare == "overlap" else True
    result = generate(llm, compiled, PROMPT, max_tokens=max_tokens, json_output=True, warn=False,
                      overlap=overlap)
    cpu_s = time.process_time() - started
    timings = result.timings
    return {"mode": mode, "tokens": result.n_tokens, "complete": result.complete,
            "compile_cpu_s": round(compile_s, 4), "generate_s": round(timings["generate_s"], 4),
            "prompt_s": round(timings["prompt_s"], 4), "generate_cpu_s": round(cpu_s, 4),
            "grammask_s": round(timings["grammask_s"], 4), "ahead_cpu_s": round(timings["ahead_s"], 4),
            "text": result.text}


def _per_token_ms(row: dict) -> dict:
    tokens = max(row["tokens"], 1)
    return {"decode_ms": 1e3 * (row["generate_s"] - row["prompt_s"]) / tokens,
            "cpu_ms": 1e3 * row["generate_cpu_s"] / tokens,
            "grammask_ms": 1e3 * row["grammask_s"] / tokens,
            "ahead_cpu_ms": 1e3 * row["ahead_cpu_s"] / tokens}


def run(compare: str, rounds: int, max_tokens: int) -> dict:
    """``rounds`` rounds of both modes in fresh processes (order alternating); the summary."""
    runs = {mode: [] for mode in MODES}
    for index in range(rounds):
        for mode in (MODES if index % 2 == 0 else MODES[::-1]):
            output = subprocess.run([sys.executable, __file__, "--compare", compare, "--child", mode,
                                     "--max-tokens", str(max_tokens)],
                                    capture_output=True, text=True, check=True).stdout
            row = json.loads(output.strip().splitlines()[-1])
            row.update({key: round(value, 3) for key, value in _per_token_ms(row).items()})
            runs[mode].append(row)
            print(f"round {index + 1}/{rounds} {compare} {mode}: {row['tokens']} tokens, decode {row['decode_ms']} ms "
                  f"per token, grammask {row['grammask_ms']} ms per token", file=sys.stderr)
    summary = {mode: {key: round(statistics.median(row[key] for row in rows), 3)
                      for key in ("tokens", "compile_cpu_s", "decode_ms", "cpu_ms", "grammask_ms",
                                  "ahead_cpu_ms")}
               for mode, rows in runs.items()}
    pairs = list(zip(runs["on"], runs["off"]))
    summary["on_over_off"] = {key: round(statistics.median(on[key] / off[key] for on, off in pairs), 3)
                              for key in ("decode_ms", "cpu_ms")}
    summary["all_complete"] = all(row["complete"] for rows in runs.values() for row in rows)
    return {"summary": summary, "runs": runs}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", choices=("canonical", "overlap"), default="canonical",
                        help="the feature turned off and on (default: the canonical filter)")
    parser.add_argument("--rounds", type=int, default=8, help="rounds of both modes (fresh processes)")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=pathlib.Path, help="results file (default: results/bench_demo_<compare>.json)")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.compare, args.child, args.max_tokens)))
        return {}
    out = args.out or pathlib.Path(__file__).parent / "results" / f"bench_demo_{args.compare}.json"
    results = {"machine": machine_info(), "command": " ".join(sys.argv),
               "config": {"compare": args.compare, "rounds": args.rounds, "max_tokens": args.max_tokens,
                          "n_threads": 1, "prompt": PROMPT, "schema": "examples/schemas/person.json"},
               **run(args.compare, args.rounds, args.max_tokens)}
    write_results(results, out)
    print(json.dumps(results["summary"], indent=1))
    return results


if __name__ == "__main__":
    main()
