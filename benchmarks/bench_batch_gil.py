"""The share of ``BatchMasker.fill_bitmask``'s CPU time that runs without the
GIL, on bench_batch's workload: the fraction of 2-thread speedup a batch
can reach whatever the machine's load.

What it measures
    One thread masks a batch of ``--batch`` sequences (bench_batch's
    workload: Llama-3 vocabulary, the first ``--schemas`` MaskBench
    schemas, ``Config(canonical=False, mask_cache_entries=0)``, token sets
    warm) in a loop for ``--seconds``, twice, under ``py-spy record`` at
    ``--rate`` Hz: once sampling every stack, once only stacks holding the
    GIL (``--gil``).  The samples whose stack is inside
    ``BatchMasker.fill_bitmask`` give the share that holds the GIL; what is
    left runs without it, p, and Amdahl's law bounds 2 threads at
    1 / (1 - p / 2) the masks per second of 1.  Sampling counts CPU time
    of the one masking thread, so other processes' load changes how many
    samples arrive, not their split.  Also reported: CPU microseconds per
    mask (the process's, one thread masking), and of them those inside
    ``MaskWorkers.run`` (the GIL-free phase, thread CPU time): their ratio
    is the same share measured without sampling.

Output: ``--out`` (default ``benchmarks/results/bench_batch_gil.json``) with
the machine and commit; a summary on stdout.

Usage: python benchmarks/bench_batch_gil.py [--py-spy PATH] [--seconds 8]
       [--rate 250] [--batch 32] [--schemas 16] [--data DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402
from bench_maskbench import DATA, tokenizer_path  # noqa: E402

OUT = pathlib.Path(__file__).parent / "results" / "bench_batch_gil.json"
FRAME = "fill_bitmask ("
"""How py-spy names the frames of ``BatchMasker.fill_bitmask``."""


def child(args) -> None:
    """Mask the batch in a loop; print masks and thread CPU ns as JSON."""
    import tokenizers

    import grammask
    from bench_batch import Batch, load_workloads

    tokenizer = tokenizers.Tokenizer.from_file(tokenizer_path())
    vocab = grammask.Vocabulary.from_tokenizer(tokenizer)
    config = grammask.Config(canonical=False, mask_cache_entries=0)
    workloads = load_workloads(pathlib.Path(args.data), args.schemas, tokenizer, vocab, config)
    batch = Batch(workloads, args.batch, 1)
    workers = TimedWorkers(batch.masker._workers)
    batch.masker._workers = workers
    masks = cpu = 0
    deadline = time.monotonic() + args.seconds
    try:
        while time.monotonic() < deadline:
            n, _, spent = batch.run(args.batch)
            masks += n
            cpu += spent
    finally:
        batch.masker._workers = workers.workers
        batch.masker.close()
    print(json.dumps({"masks": masks, "cpu_us_per_mask": cpu / 1e3 / masks,
                      "gil_free_cpu_us_per_mask": workers.cpu_ns / 1e3 / masks}))


class TimedWorkers:
    """A ``MaskWorkers`` whose ``run`` (the GIL-free phase) is timed in
    thread CPU time."""

    def __init__(self, workers):
        self.workers = workers
        self.cpu_ns = 0

    def run(self, batch) -> None:
        start = time.thread_time_ns()
        self.workers.run(batch)
        self.cpu_ns += time.thread_time_ns() - start


def record(args, gil: bool) -> tuple:
    """(samples inside fill_bitmask, the child's report) of one py-spy run."""
    with tempfile.TemporaryDirectory() as directory:
        raw = pathlib.Path(directory) / "stacks.txt"
        command = [args.py_spy, "record", "--format", "raw", "--rate", str(args.rate),
                   "--output", str(raw)] + (["--gil"] if gil else []) + [
            "--", sys.executable, __file__, "--child", "--seconds", str(args.seconds),
            "--batch", str(args.batch), "--schemas", str(args.schemas), "--data", args.data]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        report = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
        samples = 0
        for line in raw.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if FRAME in stack:
                samples += int(count)
    return samples, report


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--py-spy", default="py-spy")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rate", type=int, default=250)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--schemas", type=int, default=16)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return {}
    load_before = os.getloadavg()[0]
    all_samples, report = record(args, gil=False)
    gil_samples, _ = record(args, gil=True)
    free = 1 - gil_samples / all_samples
    results = {
        "machine": machine_info(),
        "command": " ".join(sys.argv),
        "batch": args.batch,
        "schemas": args.schemas,
        "seconds": args.seconds,
        "rate": args.rate,
        "samples": all_samples,
        "gil_samples": gil_samples,
        "gil_free_share": round(free, 3),
        "amdahl_2_threads": round(1 / (1 - free / 2), 2),
        "cpu_us_per_mask": round(report["cpu_us_per_mask"], 2),
        "gil_free_cpu_us_per_mask": round(report["gil_free_cpu_us_per_mask"], 2),
        "gil_free_share_cpu": round(report["gil_free_cpu_us_per_mask"] / report["cpu_us_per_mask"], 3),
        "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    write_results(results, args.out)
    print(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
