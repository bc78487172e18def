"""Front-end benchmark: parse + validate + normalize + LNF arrays.

Workloads: a generated 1,000-rule GBNF grammar (target: under 200 ms for the
whole front end) and every grammar in ``workloads/gbnf/`` and
``workloads/bench/`` (``*.gbnf``, ``*.kbnf``), plus the shipped JSON grammars.
For each: the median of ``--repeats`` runs of each phase (milliseconds), the
fastest run (wall and process CPU time), the first (cold) run, the grammar size after every normalization pass, and the LNF
sizes.  Regex DFAs are cached by ``grammask.terminals`` across runs, so the
cold figure includes DFA construction and the medians mostly do not.

Results go to ``benchmarks/results/bench_frontend.json`` with machine facts
(including the load average: the machine is shared, so compare the minimum
and the medians of one run) and the git commit.  Run: ``python benchmarks/bench_frontend.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
import warnings

from grammask.config import Config
from grammask.grammar import builtin_text
from grammask.grammar.gbnf import parse_gbnf
from grammask.grammar.kbnf import parse_kbnf
from grammask.grammar.lnf import build_lnf
from grammask.grammar.normalize import normalize
from grammask.grammar.validate import validate

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOADS = pathlib.Path(os.environ.get("GRAMMASK_WORKLOADS", pathlib.Path(__file__).resolve().parents[1] / "tests" / "workloads"))


def generated_grammar(n_rules: int = 1000) -> str:
    """A GBNF grammar of ``n_rules`` rules mixing every construct: literals,
    classes, groups, alternations, ``? * +``, counted repetitions, forward and
    backward references (including left recursion)."""
    lines = ["root ::= r0 (\",\" r0)*"]
    for index in range(n_rules - 1):
        forward = f"r{index + 1}" if index + 1 < n_rules - 1 else '"end"'
        back = f"r{(index * 7) % (index + 1)}"
        shape = index % 5
        if shape == 0:
            lines.append(f'r{index} ::= "kw{index}" ws {forward} | "(" {back} ")" | [a-z]+ [0-9]{{0,3}}')
        elif shape == 1:
            lines.append(f'r{index} ::= r{index} "+" {forward} | {forward} ("-" {forward})?')
        elif shape == 2:
            lines.append(f'r{index} ::= ("x{index}" | "y{index}" | [A-F]{{2}}) {forward}? "z"')
        elif shape == 3:
            lines.append(f'r{index} ::= {forward} ws* ( "a" | "b" | "c" )+ | "q{index}"')
        else:
            lines.append(f'r{index} ::= "[" ws ( {forward} ( ws "," ws {forward} )* )? ws "]" | {back} "!"')
    lines.append('ws ::= | " " | "\\n" [ \\t]{0,4}')
    return "\n".join(lines) + "\n"


def run_phases(text: str, dialect: str, start: str, config: Config) -> dict:
    timings = {}
    cpu_began = time.process_time()
    began = time.perf_counter()
    ast = parse_gbnf(text, start, config) if dialect == "gbnf" else parse_kbnf(text, start, config)
    timings["parse_ms"] = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    validate(ast, config)
    timings["validate_ms"] = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    normalized = normalize(ast, config)
    timings["normalize_ms"] = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    lnf = build_lnf(normalized.flat, normalized.compiler)
    timings["lnf_ms"] = (time.perf_counter() - began) * 1000
    timings["total_ms"] = sum(timings.values())
    timings["cpu_total_ms"] = (time.process_time() - cpu_began) * 1000
    return {"timings": timings, "pass_sizes": normalized.pass_sizes, "lnf_sizes": lnf.sizes(),
            "n_source_rules": len(ast.rules)}


def measure(name: str, text: str, dialect: str, start: str, repeats: int) -> dict:
    config = Config()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cold = run_phases(text, dialect, start, config)
        runs = [run_phases(text, dialect, start, config) for _ in range(repeats)]
    medians = {key: round(statistics.median(run["timings"][key] for run in runs), 3)
               for key in cold["timings"]}
    minimum = round(min(run["timings"]["total_ms"] for run in runs), 3)
    cpu_minimum = round(min(run["timings"]["cpu_total_ms"] for run in runs), 3)
    return {
        "name": name,
        "dialect": dialect,
        "source_bytes": len(text.encode()),
        "n_source_rules": cold["n_source_rules"],
        "cold_total_ms": round(cold["timings"]["total_ms"], 3),
        "min_total_ms": minimum,
        "min_cpu_total_ms": cpu_minimum,
        "median_ms": medians,
        "pass_sizes": [{"pass": pass_name, **sizes} for pass_name, sizes in cold["pass_sizes"]],
        "lnf_sizes": cold["lnf_sizes"],
    }


def workload_grammars():
    yield "generated_1000_rules", generated_grammar(1000), "gbnf", "root"
    for folder in ("gbnf", "bench"):
        for path in sorted((WORKLOADS / folder).glob("*.gbnf")):
            yield f"{folder}/{path.name}", path.read_text(), "gbnf", "root"
        for path in sorted((WORKLOADS / folder).glob("*.kbnf")):
            yield f"{folder}/{path.name}", path.read_text(), "kbnf", "start"
    yield "builtin/json.ebnf", builtin_text("json"), "kbnf", "start"
    yield "builtin/json.gbnf", builtin_text("json_gbnf"), "gbnf", "root"


def machine_info() -> dict:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {"python": sys.version.split()[0], "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
            "git_commit": commit, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_average_1m": round(os.getloadavg()[0], 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results" / "bench_frontend.json"))
    args = parser.parse_args(argv)
    results = [measure(name, text, dialect, start, args.repeats)
               for name, text, dialect, start in workload_grammars()]
    report = {"benchmark": "frontend", "machine": machine_info(), "repeats": args.repeats,
              "target_ms": {"generated_1000_rules": 200}, "results": results}
    pathlib.Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    for result in results:
        sizes = result["lnf_sizes"]
        print(f"{result['name']:32s} median {result['median_ms']['total_ms']:8.2f} ms  "
              f"min {result['min_total_ms']:8.2f} ms  cpu min {result['min_cpu_total_ms']:8.2f} ms  "
              f"cold {result['cold_total_ms']:8.2f} ms  rules {result['n_source_rules']:5d} -> "
              f"{sizes['n_nonterminals']:5d} nonterminals, {sizes['n_productions']:5d} productions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
