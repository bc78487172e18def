"""JSON Schema benchmarks: compile times on JSONSchemaBench, coverage on the
official JSON-Schema-Test-Suite (draft 2020-12).

Usage::

    python benchmarks/bench_json_schema.py            # both, writes results JSON
    python benchmarks/bench_json_schema.py --compile  # compile times only
    python benchmarks/bench_json_schema.py --suite    # test-suite table only

Compile time per schema: ``schema_to_ast`` alone (the translator) and the
whole ``Grammar.from_json_schema(schema).lnf`` (translator + front end +
normalization + DFAs), cold (DFA caches emptied first) and warm (patterns
already compiled, as for a server seeing similar schemas), best of
``--repeat`` runs each, median and max over the 30 schemas.  Every schema is also checked to accept all its valid
instances (default options, members in schema order, and ``any_order=True``
in the instance's own order) and to reject its invalid ones.

Test suite: the main files with ``format_assertion=False`` (draft 2020-12
treats ``format`` as an annotation unless a metaschema asserts it, which
is how the suite's ``format.json`` is written) and again with grammask's
default (asserted), and ``optional/format`` with assertion, as
``jsonschema`` runs the suite; remote references resolve to the suite's
``remotes`` folder through the ``resources`` option.  Every group's schema is translated (warnings recorded) and every
instance, serialised with ``json.dumps`` (members in schema order), is fed
to the Earley recognizer; a verdict equal to the suite's is a pass.  A
failure in a group whose translation warned (or whose schema the translator
refused), or a valid instance rejected by an asserted ``format`` (a
documented decision), is listed as *known* with its reason; any other
failure is *unexpected*.  Results: ``benchmarks/results/json_schema_compile.json`` and
``benchmarks/results/json_schema_suite.json``, each with machine, versions and
git commit.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.schema_matcher import (  # noqa: E402
    JSONSCHEMABENCH, TEST_SUITE, SchemaMatcher, dumps_variants, schema_ordered,
)

from grammask.errors import GrammarError  # noqa: E402
from grammask.grammar import Grammar  # noqa: E402
from grammask.json_schema import schema_to_ast  # noqa: E402
from grammask.json_schema.formats import FORMAT_PATTERNS, GRAMMAR_FORMATS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def machine_info() -> dict:
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip()
    except OSError:
        commit = ""
    import grammask

    return {"python": sys.version.split()[0], "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "grammask": getattr(grammask, "__version__", ""), "git_commit": commit,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _best_ms(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def _cold(function):
    """Run ``function`` with grammask's DFA caches emptied first."""
    from grammask import terminals

    for name in ("REGEX_DFAS", "_compile_literals_cached", "_compile_substrings_cached"):
        cached = getattr(terminals, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()
    return function()


def bench_compile(repeat: int = 3) -> dict:
    rows = []
    for path in sorted(JSONSCHEMABENCH.glob("*.json")):
        data = json.loads(path.read_text())
        schema = data["schema"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            translate_ms = _best_ms(lambda: schema_to_ast(schema), repeat)
            cold_ms = _best_ms(lambda: _cold(lambda: Grammar.from_json_schema(schema).lnf), repeat)
            total_ms = _best_ms(lambda: Grammar.from_json_schema(schema).lnf, repeat)
        matcher = SchemaMatcher(schema)
        any_order = SchemaMatcher(schema, any_order=True)
        n_valid = n_valid_ok = n_invalid = n_invalid_rejected = 0
        for test in data["tests"]:
            ordered = schema_ordered(test["data"], schema)
            if test["valid"]:
                n_valid += 1
                n_valid_ok += all(matcher.accepts(text) for text in dumps_variants(ordered)) and \
                    all(any_order.accepts(text) for text in dumps_variants(test["data"]))
            else:
                n_invalid += 1
                n_invalid_rejected += not matcher.accepts(json.dumps(ordered))
        rows.append({"schema": path.name, "translate_ms": round(translate_ms, 3),
                     "compile_cold_ms": round(cold_ms, 3),
                     "compile_ms": round(total_ms, 3), "n_warnings": len(matcher.warnings),
                     "valid": n_valid, "valid_accepted": n_valid_ok,
                     "invalid": n_invalid, "invalid_rejected": n_invalid_rejected})
        print(f"{path.name:48s} translate {translate_ms:7.2f} ms  cold {cold_ms:8.2f} ms  "
              f"warm {total_ms:8.2f} ms  "
              f"valid {n_valid_ok}/{n_valid}  invalid rejected {n_invalid_rejected}/{n_invalid}")
    translate = [row["translate_ms"] for row in rows]
    cold = [row["compile_cold_ms"] for row in rows]
    total = [row["compile_ms"] for row in rows]
    summary = {
        "n_schemas": len(rows),
        "n_schemas_all_valid_accepted": sum(r["valid"] == r["valid_accepted"] for r in rows),
        "translate_ms_median": round(statistics.median(translate), 3),
        "translate_ms_max": round(max(translate), 3),
        "compile_cold_ms_median": round(statistics.median(cold), 3),
        "compile_cold_ms_max": round(max(cold), 3),
        "compile_ms_median": round(statistics.median(total), 3),
        "compile_ms_max": round(max(total), 3),
    }
    print(json.dumps(summary, indent=2))
    return {"machine": machine_info(), "summary": summary, "schemas": rows}


FORMAT_DECISION = ("formats are asserted (the format-assertion vocabulary); draft 2020-12 "
                   "treats format as an annotation by default")


REGEX_DECISION = ("format regex accepts the patterns both ECMA-262 and Python's re compile "
                  "(jsonschema's checker), a documented subset (json_schema.regex_format); "
                  "this one only ECMA-262 accepts")


METASCHEMA_DECISION = ("custom metaschemas ($schema other than a published draft, "
                       "$vocabulary) are not read: the 2020-12 vocabularies always apply")


def _custom_metaschema(schema) -> bool:
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    return bool(uri) and "json-schema.org" not in uri


def _asserts_format(schema, names=FORMAT_PATTERNS) -> bool:
    """Whether ``schema`` asserts a format of ``names`` anywhere."""
    if isinstance(schema, dict):
        if schema.get("format") in names:
            return True
        return any(_asserts_format(value, names) for value in schema.values())
    if isinstance(schema, list):
        return any(_asserts_format(value, names) for value in schema)
    return False


REMOTES_URI = "http://localhost:1234/"


def suite_remotes() -> dict:
    """The suite's remote documents by the URI its tests name them with."""
    folder = TEST_SUITE / "remotes"
    return {REMOTES_URI + path.relative_to(folder).as_posix(): json.loads(path.read_text())
            for path in sorted(folder.rglob("*.json"))}


def run_test_suite() -> dict:
    """The main files as the suite specifies them (``format`` an annotation,
    ``format_assertion=False``) and with grammask's default (asserted), and
    ``optional/format`` asserted; remote references resolve to the suite's
    ``remotes`` (the ``resources`` option)."""
    resources = suite_remotes()
    main = sorted(TEST_SUITE.glob("*.json"))
    annotation = run_suite_files(main, resources=resources, format_assertion=False)
    asserted = run_suite_files(main, resources=resources)
    optional = run_suite_files(sorted((TEST_SUITE / "optional" / "format").glob("*.json")),
                               resources=resources)
    return {"machine": machine_info(), "summary": annotation["summary"],
            "keywords": annotation["keywords"],
            "format_asserted": {"summary": asserted["summary"],
                                "format": asserted["keywords"]["format"]},
            "optional_format": optional}


def run_suite_files(paths, **options) -> dict:
    """Pass counts per file, with known and unexpected failures listed."""
    table = {}
    for path in paths:
        groups = json.loads(path.read_text())
        row = {"tests": 0, "passed": 0, "known_failures": [], "unexpected_failures": []}
        for group in groups:
            schema = group["schema"]
            refusal = None
            matcher = None
            try:
                matcher = SchemaMatcher(schema, **options)
                notes = [str(w) for w in matcher.warnings]
            except GrammarError as error:
                refusal = str(error)
                notes = [refusal]
            for test in group["tests"]:
                row["tests"] += 1
                if matcher is None:
                    accepted = False
                else:
                    accepted = matcher.accepts(json.dumps(schema_ordered(test["data"], schema)))
                if accepted == test["valid"]:
                    row["passed"] += 1
                    continue
                failure = {"group": group["description"], "test": test["description"],
                           "valid": test["valid"], "accepted": accepted}
                if notes:
                    failure["reason"] = notes[0][:300]
                    row["known_failures"].append(failure)
                elif (test["valid"] and options.get("format_assertion", True)
                      and _asserts_format(schema)):
                    failure["reason"] = FORMAT_DECISION
                    row["known_failures"].append(failure)
                elif test["valid"] and _asserts_format(schema, GRAMMAR_FORMATS):
                    failure["reason"] = REGEX_DECISION
                    row["known_failures"].append(failure)
                elif _custom_metaschema(schema):
                    failure["reason"] = METASCHEMA_DECISION
                    row["known_failures"].append(failure)
                else:
                    row["unexpected_failures"].append(failure)
        row["pass_rate"] = round(row["passed"] / row["tests"], 4) if row["tests"] else None
        table[path.stem] = row
    n_tests = sum(row["tests"] for row in table.values())
    n_passed = sum(row["passed"] for row in table.values())
    summary = {"tests": n_tests, "passed": n_passed, "pass_rate": round(n_passed / n_tests, 4),
               "known_failures": sum(len(r["known_failures"]) for r in table.values()),
               "unexpected_failures": sum(len(r["unexpected_failures"]) for r in table.values())}
    return {"summary": summary, "keywords": table}


def print_suite_table(result: dict) -> None:
    print("main files, format an annotation (the suite's draft 2020-12 default):")
    print_rows(result)
    asserted = result["format_asserted"]
    print(f"with format asserted (grammask's default): format {asserted['format']['passed']} / "
          f"{asserted['format']['tests']}, total {asserted['summary']['passed']} / "
          f"{asserted['summary']['tests']} ({asserted['summary']['pass_rate']:.1%})")
    print("optional/format, asserted:")
    print_rows(result["optional_format"])


def print_rows(result: dict) -> None:
    print(f"{'keyword':24s} {'pass':>5s} / {'tests':<5s} {'rate':>7s}  known  unexpected")
    for keyword, row in result["keywords"].items():
        print(f"{keyword:24s} {row['passed']:5d} / {row['tests']:<5d} {row['pass_rate']:7.1%}  "
              f"{len(row['known_failures']):5d}  {len(row['unexpected_failures']):10d}")
    summary = result["summary"]
    print(f"{'total':24s} {summary['passed']:5d} / {summary['tests']:<5d} "
          f"{summary['pass_rate']:7.1%}  {summary['known_failures']:5d}  "
          f"{summary['unexpected_failures']:10d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compile", action="store_true", help="compile times only")
    parser.add_argument("--suite", action="store_true", help="test-suite table only")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    both = not args.compile and not args.suite
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.compile or both:
        result = bench_compile(args.repeat)
        (RESULTS / "json_schema_compile.json").write_text(json.dumps(result, indent=2) + "\n")
    if args.suite or both:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_test_suite()
        print_suite_table(result)
        (RESULTS / "json_schema_suite.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
