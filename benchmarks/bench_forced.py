"""Forced (jump-forward) tokens: their share in real JSON instances
(MaskBench), and the wall-clock gain in the llama-cpp-python demo.

What it measures
    MaskBench (default): over a stratified sample of ``../shared/workloads/maskbench`` (the same
    sampling as ``bench_maskbench.py``), each valid instance is written as
    compact JSON and as pretty JSON (``indent=2``), tokenized canonically by
    Llama-3's ``encode``, and replayed on a grammask Engine with the default
    ``Config()`` (canonical filter on).  At each position the engine's
    ``compute_forced_tokens()`` is asked; when it returns k tokens, they must
    equal the instance's next k tokens (else the instance counts as a
    mismatch, a bug), are counted as forced, and are accepted without a mask.
    Reported per format: tokens, forced tokens and their share, positions
    that forced something, mismatches, and the time per ``compute_forced_tokens``
    call; also the forced *bytes* share (``forced_bytes()``, tokenizer aside).

    ``--demo``: the demo of ``./run demo`` (SmolLM2-135M through
    llama-cpp-python, ``n_threads=1``, ``examples/schemas/person.json``, the
    Ada Lovelace prompt, 160 tokens, greedy) with
    ``generate(..., force_tokens=False)`` and ``True``, alternating, several
    runs each, in three settings: without the canonical filter
    (``Config(canonical=False)``), the demo as it is (the filter on, as by
    default), and that with compact JSON.  Per run: tokens, forced tokens, llama.cpp eval
    calls, prompt and total seconds; per setting and mode the medians of
    seconds per output and of decode tokens/s (tokens / (total - prompt)),
    the forced share and eval calls per token, the on/off ratios (of the
    medians, and the median of the per-run ratios: each run does both modes
    back to back, which cancels slow drifts of a shared machine), and
    whether the outputs were the same text (a batch is evaluated with other
    kernels than single tokens, so greedy outputs may part).

Usage: python benchmarks/bench_forced.py [--sample 60] [--out benchmarks/results/bench_forced.json]
       python benchmarks/bench_forced.py --demo [--runs 5] [--out benchmarks/results/bench_forced_demo.json]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402
from bench_maskbench import DATA, stratified_sample, tokenizer_path  # noqa: E402

import grammask  # noqa: E402

FORMATS = {"compact": {"separators": (",", ":")}, "pretty": {"indent": 2}}


def measure_instance(compiled, tokenizer, text: str, budget_s: float) -> dict:
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    engine = grammask.Engine(compiled)
    counts = {"tokens": len(ids), "forced": 0, "forcing_positions": 0, "mismatch": 0,
              "bytes": len(text.encode()), "forced_bytes": 0, "calls": 0, "call_s": 0.0}
    started = time.process_time()
    position = 0
    while position < len(ids):
        if time.process_time() - started > budget_s:
            counts["timeout"] = 1
            break
        counts["forced_bytes"] += len(engine.forced_bytes())
        t0 = time.process_time()
        forced = engine.compute_forced_tokens()
        counts["call_s"] += time.process_time() - t0
        counts["calls"] += 1
        if forced:
            if ids[position:position + len(forced)] != forced:
                counts["mismatch"] += 1
                break
            counts["forced"] += len(forced)
            counts["forcing_positions"] += 1
            for token_id in forced:
                engine.try_accept_new_token(token_id)
            position += len(forced)
            continue
        engine.try_accept_new_token(ids[position])
        position += 1
    return counts


ROOT = pathlib.Path(__file__).resolve().parents[1]
DEMO_PROMPT = ("Extract the person: Ada Lovelace, born 1815 in London, was a mathematician who wrote "
               "the first published algorithm.")
DEMO_SETTINGS = {"filter_off": ({"canonical": False}, {}),
                 "canonical": ({"canonical": True}, {}),
                 "canonical_compact": ({"canonical": True}, {"whitespace": "compact"})}


def _decode_rate(row: dict) -> float:
    """Generated tokens per second after the prompt's evaluation."""
    return row["tokens"] / (row["total_s"] - row["prompt_s"])


def _eval_seconds(row: dict) -> float:
    """Seconds per llama.cpp eval call after the prompt (sampling included)."""
    return (row["total_s"] - row["prompt_s"]) / max(row["evals"] - 1, 1)


def demo(runs: int, max_tokens: int) -> dict:
    """The llama-cpp-python demo with forcing off and on (see the module docstring)."""
    from grammask.integrations.llama_cpp import compile_for, generate, load_model

    llm = load_model(n_ctx=2048, n_threads=1)
    schema = json.loads((ROOT / "examples" / "schemas" / "person.json").read_text())
    settings = {}
    for name, (config_options, schema_options) in DEMO_SETTINGS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled, _ = compile_for(llm, schema, grammask.Config(**config_options), **schema_options)
        calls = {"off": [], "on": []}
        texts = {"off": set(), "on": set()}
        for run in range(runs + 1):          # run 0 warms the caches and is not recorded
            for mode in (("off", "on") if run % 2 else ("on", "off")):
                result = generate(llm, compiled, DEMO_PROMPT, max_tokens=max_tokens, json_output=True,
                                  force_tokens=mode == "on", warn=False)
                timings = result.timings
                if run == 0:
                    continue
                texts[mode].add(result.text)
                calls[mode].append({
                    "tokens": result.n_tokens, "forced": result.n_forced, "evals": timings["n_evals"],
                    "complete": result.complete, "prompt_s": round(timings["prompt_s"], 4),
                    "total_s": round(timings["generate_s"], 4), "grammask_s": round(timings["grammask_s"], 4),
                    "forced_s": round(timings["forced_s"], 4)})
        summary = {}
        for mode, rows in calls.items():
            summary[mode] = {
                "tokens": statistics.median(row["tokens"] for row in rows),
                "forced_share": round(sum(row["forced"] for row in rows) / max(sum(row["tokens"] for row in rows), 1), 4),
                "evals_per_token": round(sum(row["evals"] for row in rows) / max(sum(row["tokens"] for row in rows), 1), 4),
                "seconds_per_output": round(statistics.median(row["total_s"] for row in rows), 3),
                "decode_tokens_per_s": round(statistics.median(_decode_rate(row) for row in rows), 2),
                "grammask_s": round(statistics.median(row["grammask_s"] + row["forced_s"] for row in rows), 3)}
        pairs = list(zip(calls["on"], calls["off"]))      # the two modes of one run, back to back
        summary["on_over_off"] = {
            "seconds_per_output": round(summary["on"]["seconds_per_output"] / summary["off"]["seconds_per_output"], 3),
            "decode_tokens_per_s": round(summary["on"]["decode_tokens_per_s"] / summary["off"]["decode_tokens_per_s"], 3),
            "decode_tokens_per_s_paired": round(statistics.median(
                _decode_rate(on) / _decode_rate(off) for on, off in pairs), 3),
            "seconds_per_eval_paired": round(statistics.median(
                _eval_seconds(on) / _eval_seconds(off) for on, off in pairs), 3)}
        summary["same_text"] = texts["on"] == texts["off"]
        settings[name] = {"config": config_options, "schema_options": schema_options, "summary": summary,
                          "calls": calls, "texts": {mode: sorted(found) for mode, found in texts.items()}}
        print(f"{name}: {json.dumps(summary)}", file=sys.stderr)
    return settings


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=20.0, help="CPU seconds per instance")
    parser.add_argument("--demo", action="store_true", help="the llama-cpp-python demo, forcing off vs on")
    parser.add_argument("--runs", type=int, default=5, help="--demo: recorded runs per mode and setting")
    parser.add_argument("--max-tokens", type=int, default=160, help="--demo: the demo's token budget")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="default benchmarks/results/bench_forced.json (bench_forced_demo.json with --demo)")
    args = parser.parse_args(argv)
    results_dir = pathlib.Path(__file__).parent / "results"
    if args.demo:
        results = {"machine": machine_info(), "command": " ".join(sys.argv),
                   "config": {"runs": args.runs, "max_tokens": args.max_tokens, "n_threads": 1,
                              "prompt": DEMO_PROMPT, "schema": "examples/schemas/person.json"},
                   "settings": demo(args.runs, args.max_tokens)}
        write_results(results, args.out or results_dir / "bench_forced_demo.json")
        return results
    import tokenizers

    tokenizer = tokenizers.Tokenizer.from_file(tokenizer_path())
    vocab = grammask.Vocabulary.from_tokenizer(tokenizer)
    names = stratified_sample((path.name for path in args.data.glob("*.json")), args.sample, args.seed)
    totals = {name: {} for name in FORMATS}
    per_schema = {}
    for index, name in enumerate(names, 1):
        data = json.loads((args.data / name).read_text())
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compiled = grammask.compile(grammask.Grammar.from_json_schema(data["schema"]), vocab)
        except grammask.GrammaskError:
            continue
        per_schema[name] = {}
        for format_name, dump_options in FORMATS.items():
            for test in data["tests"]:
                if not test["valid"]:
                    continue
                text = json.dumps(test["data"], ensure_ascii=False, **dump_options)
                try:
                    counts = measure_instance(compiled, tokenizer, text, args.budget)
                except grammask.GrammaskError as error:
                    counts = {"error": 1}
                    print(f"  {name}: {type(error).__name__}: {error}"[:200], file=sys.stderr)
                for key, value in counts.items():
                    totals[format_name][key] = totals[format_name].get(key, 0) + value
                    per_schema[name][f"{format_name}_{key}"] = per_schema[name].get(f"{format_name}_{key}", 0) + value
        print(f"[{index}/{len(names)}] {name}", file=sys.stderr)
    summary = {}
    for format_name, total in totals.items():
        tokens = max(total.get("tokens", 0), 1)
        summary[format_name] = {
            "tokens": total.get("tokens", 0), "forced": total.get("forced", 0),
            "forced_share": round(total.get("forced", 0) / tokens, 4),
            "forced_bytes_share": round(total.get("forced_bytes", 0) / max(total.get("bytes", 0), 1), 4),
            "forcing_positions": total.get("forcing_positions", 0),
            "mismatches": total.get("mismatch", 0), "timeouts": total.get("timeout", 0),
            "errors": total.get("error", 0),
            "us_per_call": round(1e6 * total.get("call_s", 0.0) / max(total.get("calls", 0), 1), 1)}
    results = {"machine": machine_info(), "command": " ".join(sys.argv),
               "config": {"sample": args.sample, "seed": args.seed, "budget_s": args.budget},
               "summary": summary, "schemas": per_schema}
    write_results(results, args.out or results_dir / "bench_forced.json")
    print(json.dumps(summary, indent=2))
    return results


if __name__ == "__main__":
    main()
