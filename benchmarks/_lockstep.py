"""Two grammask trees run side by side, schema by schema: the scaffolding of the A/B benchmarks.

What it does
    ``bench_compile_ab.py`` and ``bench_canonical_ab.py`` each start their
    own script twice as a worker (``--worker``), under an *old* and a *new*
    interpreter (two virtual environments, each with its own grammask), and
    send both workers the same MaskBench schema names one at a time, which
    side first alternating per schema, so both see the same load on a noisy
    machine.  A worker answers each name with one JSON line.

Data layout
    ``lockstep`` yields (schema name, {"old": answer, "new": answer}) in the
    order of ``schema_names``: ``bench_maskbench``'s stratified sample
    (``--sample``, ``--seed``) or every Nth schema by name (``--every``).

Invariants
    Each worker is one long-lived process with its own per-process caches,
    as in ``bench_maskbench.py``; a worker prints one ``{"ready": ...}`` line
    (its grammask module) before its first answer.  ``percentile`` is the
    reports' order statistic (the value at index ``q * n`` of the sorted
    values).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def parse_args(description: str, default_sample: int, argv=None) -> argparse.Namespace:
    """``--old`` (required), ``--new``, ``--sample``, ``--seed``, ``--every`` and the hidden ``--worker``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--old", required=True, help="Python of the old tree's environment")
    parser.add_argument("--new", default=sys.executable, help="Python of the new tree's environment")
    parser.add_argument("--sample", type=int, default=default_sample)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--every", type=int, default=0, help="every Nth schema instead of the sample")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def schema_names(args: argparse.Namespace) -> list:
    """The schemas to run: every ``--every``-th by name, else the stratified sample."""
    sys.path.insert(0, str(HERE))
    import bench_maskbench

    every_name = sorted(path.name for path in bench_maskbench.DATA.glob("*.json"))
    if args.every:
        return every_name[::args.every]
    return bench_maskbench.stratified_sample(every_name, args.sample, args.seed)


def lockstep(script: str, args: argparse.Namespace, names: list):
    """Start ``script --worker`` under both interpreters and yield (name,
    answers by side) for each of ``names``; the workers are closed at the end."""
    sides = {}
    for side, python in (("old", args.old), ("new", args.new)):
        sides[side] = subprocess.Popen([python, str(pathlib.Path(script).resolve()), "--worker", "--old", python],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        print(f"{side}: {json.loads(sides[side].stdout.readline())['ready']}")
    try:
        for index, name in enumerate(names):
            answers = {}
            for side in (("old", "new") if index % 2 == 0 else ("new", "old")):
                sides[side].stdin.write(name + "\n")
                sides[side].stdin.flush()
                answers[side] = json.loads(sides[side].stdout.readline())
            yield name, answers
    finally:
        for process in sides.values():
            process.stdin.close()
            process.wait()


def percentile(ordered: list, q: float) -> float:
    """The value at index ``q * len(ordered)`` (clamped) of sorted values; 0 when there are none."""
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else 0.0
