"""Share of forced (jump-forward) tokens in real JSON instances (MaskBench).

What it measures
    Over a stratified sample of ``../shared/workloads/maskbench`` (the same
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

Usage: python benchmarks/bench_forced.py [--sample 60] [--out benchmarks/results/bench_forced.json]
"""

from __future__ import annotations

import argparse
import json
import pathlib
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


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=20.0, help="CPU seconds per instance")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent / "results" / "bench_forced.json")
    args = parser.parse_args(argv)
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
    write_results(results, args.out)
    print(json.dumps(summary, indent=2))
    return results


if __name__ == "__main__":
    main()
