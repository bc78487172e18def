"""Hostile inputs: each case of ``tests/support/hostile_cases.py`` in its own
process, with its time, peak memory and outcome.

The target (issue "Bounded by construction"): every case ends within
``TIME_BUDGET_S`` (1 s) and ``MEMORY_BUDGET_MB`` (500 MB) with a result or a
typed ``GrammaskError``.  A case still over budget is reported as a timeout
after ``--timeout`` CPU seconds (``run_case``).  The budget is judged on
CPU seconds (the import of grammask included), which a loaded machine
inflates less than wall seconds; both are reported.

Usage: python benchmarks/bench_hostile.py [--timeout 60] [--out benchmarks/results/bench_hostile.json]
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402
from support.hostile_cases import CASES, MEMORY_BUDGET_MB, TIME_BUDGET_S, as_expected, run_case  # noqa: E402


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="CPU seconds before a case counts as a timeout")
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path(__file__).parent / "results" / "bench_hostile.json")
    args = parser.parse_args(argv)
    rows = []
    print(f"| case | outcome | CPU s | wall s | peak MB | within {TIME_BUDGET_S:g} s and {MEMORY_BUDGET_MB} MB |")
    print("|---|---|---|---|---|---|")
    for case in CASES:
        measured = run_case(case, args.timeout)
        within = (as_expected(case, measured["outcome"]) and measured["cpu_seconds"] is not None
                  and measured["cpu_seconds"] <= TIME_BUDGET_S and measured["peak_mb"] <= MEMORY_BUDGET_MB)
        rows.append({"case": case.name, "expect": case.expect, "within_budget": within, **measured})
        peak = "-" if measured["peak_mb"] is None else f"{measured['peak_mb']:.0f}"
        cpu = "-" if measured["cpu_seconds"] is None else f"{measured['cpu_seconds']:.2f}"
        print(f"| {case.name} | {measured['outcome']} | {cpu} | {measured['seconds']:.2f} | {peak} | "
              f"{'yes' if within else 'NO'} |", flush=True)
    results = {"machine": machine_info(), "command": " ".join(sys.argv),
               "budget": {"seconds": TIME_BUDGET_S, "peak_mb": MEMORY_BUDGET_MB, "timeout_cpu_s": args.timeout},
               "cases": rows}
    write_results(results, args.out)
    return results


if __name__ == "__main__":
    main()
