"""Benchmark: construction time of terminal DFAs (Rust crate + Python wrapper).

Workloads (issue 2, item 9): the JSON string regex, the email regex of
``tests/workloads/bench/regex_email.regex`` and ``[a-z ]{0,500}``, plus
the other regex workloads of that folder and one instance of each variant
kind (500 seeded random words as a literal set; the substrings of
``ticket_schema.json``).  Each case is compiled ``--repeat`` times with the cache bypassed
(parse, determinize, export, trim, minimize, wrap in numpy); the JSON result
gives the median and minimum in milliseconds, the DFA's states, classes and
table bytes, with the machine, versions and git commit.

Run: ``python benchmarks/bench_dfa.py [--repeat 21] [--out benchmarks/results/bench_dfa.json]``.
The machine is shared and noisy: compare figures within one run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import random
import re
import statistics
import string
import subprocess
import time

import numpy

from grammask import terminals

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "tests" / "workloads" / "bench"
JSON_STRING_REGEX = r'"([^"\\\x00-\x1f]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*"'


def _workload_regex(name: str) -> str:
    return (WORKLOADS / name).read_text(encoding="utf-8").rstrip("\n")


def cases() -> list[tuple[str, object]]:
    """(name, zero-argument builder) pairs; builders bypass the DFA cache."""
    build_regex = terminals._build_regex
    build_literals = terminals._compile_literals_cached.__wrapped__
    build_substrings = terminals._compile_substrings_cached.__wrapped__
    max_states, max_bytes = terminals._DEFAULTS.max_dfa_states, terminals._DEFAULTS.max_dfa_bytes

    def regex_case(pattern: str, kind: str = "regex"):
        return lambda: build_regex(pattern, kind, False, max_states, max_bytes)

    generator = random.Random(2)
    keywords = tuple(sorted({"".join(generator.choice(string.ascii_lowercase + "_")
                                     for _ in range(generator.randint(2, 10)))
                             for _ in range(500)}))
    long_text = (WORKLOADS / "ticket_schema.json").read_text(encoding="utf-8")
    return [
        ("json_string", regex_case(JSON_STRING_REGEX)),
        ("email", regex_case(_workload_regex("regex_email.regex"))),
        ("lowercase_space_0_500", regex_case("[a-z ]{0,500}")),
        ("freetext_workload", regex_case(_workload_regex("regex_freetext.regex"))),
        ("datetime_workload", regex_case(_workload_regex("regex_datetime.regex"))),
        ("early_end_digits", regex_case("[0-9]+", "early_end")),
        ("complement_comment_end", regex_case(r"\*/", "complement")),
        (f"literals_{len(keywords)}_words", lambda: build_literals(keywords, False, max_states,
                                                                    max_bytes)),
        (f"substrings_ticket_schema_{len(long_text.encode())}_bytes", lambda: build_substrings(long_text,
                                                                                  max_states,
                                                                                  max_bytes)),
    ]


def measure(builder, repeat: int) -> dict:
    timings_ms = []
    dfa = None
    for _ in range(repeat):
        began = time.perf_counter()
        dfa = builder()
        timings_ms.append((time.perf_counter() - began) * 1e3)
    return {
        "median_ms": round(statistics.median(timings_ms), 4),
        "min_ms": round(min(timings_ms), 4),
        "repeat": repeat,
        "n_states": dfa.n_states,
        "n_classes": dfa.n_classes,
        "table_bytes": dfa.table_bytes,
        "source": dfa.source,
    }


def _command_output(command: list[str]) -> str | None:
    try:
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _locked_crate_version(crate: str) -> str | None:
    lock = (ROOT / "csrc" / "dfa" / "Cargo.lock").read_text()
    found = re.search(rf'name = "{re.escape(crate)}"\nversion = "([^"]+)"', lock)
    return found.group(1) if found else None


def machine() -> dict:
    commit = _command_output(["git", "rev-parse", "HEAD"]) or "unknown"
    dirty = _command_output(["git", "status", "--porcelain", "--untracked-files=no", "--",
                             "csrc/dfa", "src/grammask/terminals.py"])
    return {
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit + ("-dirty" if dirty else ""),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "rustc": _command_output(["rustc", "--version"]),
        "regex_automata": _locked_crate_version("regex-automata"),
        "regex_syntax": _locked_crate_version("regex-syntax"),
        "pyo3": _locked_crate_version("pyo3"),
        "dfa_format_version": terminals.FORMAT_VERSION,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--out", type=pathlib.Path,
                        default=ROOT / "benchmarks" / "results" / "bench_dfa.json")
    arguments = parser.parse_args()
    results = {}
    for name, builder in cases():
        results[name] = measure(builder, arguments.repeat)
        row = results[name]
        print(f"{name:28} {row['median_ms']:9.3f} ms  states={row['n_states']:5}  "
              f"classes={row['n_classes']:3}  bytes={row['table_bytes']}")
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps({"benchmark": "bench_dfa", "machine": machine(),
                                         "results": results}, indent=2) + "\n")
    print(f"wrote {arguments.out}")


if __name__ == "__main__":
    main()
