"""How exactly grammask's JSON Schema translations match MaskBench's labels,
per keyword, with members in schema order and with ``any_order=True``.

What it measures
    Every schema of ``--data`` (default ``../shared/workloads/maskbench``
    beside the repository: one JSON file per schema, ``{"schema", "tests":
    [{"data", "valid"}]}``) is translated twice, with default options
    (members in schema order) and with ``any_order=True``, while warnings
    are recorded.  Each instance, written as MaskBench writes it (compact
    JSON, ``ensure_ascii=False``), is fed to the byte-level Earley
    recognizer and its verdict compared with the instance's label, in three
    modes: ``as_written`` (default translation, the instance's own member
    order, as MaskBench runs it), ``schema_order`` (default translation,
    object members put in the schema's order by ``schema_ordered``: the order
    the default grammar writes) and ``any_order`` (``any_order=True``, the
    instance's own order).  No vocabulary and no
    token masks: this is the grammar's language (``bench_maskbench``
    measures the masks on a real vocabulary).
    Per schema and mode, the first that applies: compile error (the
    translator refuses the schema), no tests, invalidation error (an
    invalid instance accepted), validation error (a valid instance
    refused), passing.  Per keyword (every JSON Schema keyword the schema
    holds anywhere, walked through subschemas), the same counts over the
    schemas holding it, and how many of those warn about it.

Output: ``--out`` (default ``benchmarks/results/bench_schema_exactness.json``)
with machine and commit: per mode the outcome counts, passing over schemas
with tests, invalidation errors on schemas translated without a warning
(the issue's "0"), the per-keyword table, and every failing schema with its
first failing instance; a summary table on stdout.

Usage: python benchmarks/bench_schema_exactness.py [--data DIR] [--out FILE] [--limit N]
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(pathlib.Path(__file__).parent))
sys.path.insert(0, str(ROOT / "tests"))
from _machine import machine_info, write_results  # noqa: E402
from bench_schema_warnings import warning_keyword  # noqa: E402
from support.schema_matcher import SchemaMatcher, schema_ordered  # noqa: E402

from grammask.errors import GrammaskError  # noqa: E402
from grammask.json_schema.keywords import VALIDATION_KEYWORDS  # noqa: E402
from grammask.json_schema.refs import map_subschemas  # noqa: E402

DATA = ROOT.parent / "shared" / "workloads" / "maskbench"
OUT = ROOT / "benchmarks" / "results" / "bench_schema_exactness.json"
MODES = {"as_written": ({}, False), "schema_order": ({}, True),
         "any_order": ({"any_order": True}, False)}
"""Mode -> (translation options, members put in schema order)."""
OUTCOMES = ("passing", "validation_error", "invalidation_error", "compile_error", "no_tests")

KEYWORDS = frozenset(keyword for keyword in VALIDATION_KEYWORDS
                     if not keyword.startswith("$grammask:"))
"""The keywords the per-keyword table counts: those the translator reads
(``json_schema.keywords``), its internal ones aside."""


def keywords_of(schema) -> set:
    """The keywords of ``KEYWORDS`` that ``schema`` holds, in any subschema
    (``refs.map_subschemas`` positions)."""
    found: set = set()
    pending = [schema]
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            found.update(key for key in current if key in KEYWORDS)
            map_subschemas(current, pending.append)
    return found


def translate(document: dict, options: dict):
    """The schema's ``SchemaMatcher``, or the refusal's message."""
    try:
        return SchemaMatcher(document["schema"], **options)
    except GrammaskError as error:
        return str(error)[:300]


def judge(document: dict, matcher, ordered: bool) -> dict:
    """One schema in one mode: outcome, warned keywords, first failure."""
    row = {"warned": []}
    if isinstance(matcher, str):
        row.update(outcome="compile_error", error=matcher)
        return row
    row["warned"] = sorted({warning_keyword(warning) for warning in matcher.warnings})
    tests = document.get("tests", [])
    if not tests:
        row["outcome"] = "no_tests"
        return row
    failures = {"invalidation_error": None, "validation_error": None}
    for index, test in enumerate(tests):
        data = schema_ordered(test["data"], document["schema"]) if ordered else test["data"]
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        if matcher.accepts(text) != bool(test["valid"]):
            kind = "validation_error" if test["valid"] else "invalidation_error"
            if failures[kind] is None:
                failures[kind] = {"instance": index, "text": text[:200]}
    for kind in ("invalidation_error", "validation_error"):
        if failures[kind] is not None:
            row.update(outcome=kind, first_failure=failures[kind])
            return row
    row["outcome"] = "passing"
    return row


def tally(rows: dict, keyword_sets: dict) -> dict:
    """Outcome counts overall and per keyword for one mode's rows."""
    counts = collections.Counter(row["outcome"] for row in rows.values())
    with_tests = sum(counts[o] for o in OUTCOMES if o != "no_tests")
    silent_invalidations = sorted(name for name, row in rows.items()
                                  if row["outcome"] == "invalidation_error" and not row["warned"])
    per_keyword = {}
    for keyword in sorted(KEYWORDS):
        names = [name for name in rows if keyword in keyword_sets[name]]
        if not names:
            continue
        entry = collections.Counter(rows[name]["outcome"] for name in names)
        per_keyword[keyword] = {"schemas": len(names), **{o: entry[o] for o in OUTCOMES},
                                "warned_for_it": sum(keyword in rows[name]["warned"]
                                                     for name in names)}
    return {"outcomes": {o: counts[o] for o in OUTCOMES},
            "schemas_with_tests": with_tests,
            "passing_share_of_tested": round(counts["passing"] / with_tests, 4) if with_tests else None,
            "schemas_with_warnings": sum(bool(row["warned"]) for row in rows.values()),
            "invalidation_errors_without_warning": silent_invalidations,
            "per_keyword": per_keyword}


def markdown(results: dict) -> str:
    modes = list(MODES)
    lines = ["| | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for outcome in OUTCOMES:
        lines.append(f"| {outcome} | " + " | ".join(
            str(results[mode]["outcomes"][outcome]) for mode in modes) + " |")
    lines.append("| passing / schemas with tests | " + " | ".join(
        f"{results[m]['passing_share_of_tested']:.1%}" for m in modes) + " |")
    lines.append("| invalidation errors without a warning | " + " | ".join(
        str(len(results[m]["invalidation_errors_without_warning"])) for m in modes) + " |")
    lines += ["", "| keyword (schema order) | schemas | passing | validation / invalidation errors "
              "| compile errors | warned for it | any_order: passing | validation / invalidation |",
              "|---|---|---|---|---|---|---|---|"]
    default, any_order = results["schema_order"]["per_keyword"], results["any_order"]["per_keyword"]
    for keyword, row in sorted(default.items(), key=lambda item: -item[1]["schemas"]):
        other = any_order.get(keyword, {})
        lines.append(f"| {keyword} | {row['schemas']} | {row['passing']} | "
                     f"{row['validation_error']} / {row['invalidation_error']} | "
                     f"{row['compile_error']} | {row['warned_for_it']} | {other.get('passing')} | "
                     f"{other.get('validation_error')} / {other.get('invalidation_error')} |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--limit", type=int, default=0, help="first N schemas only (0: all)")
    args = parser.parse_args(argv)
    paths = sorted(args.data.glob("*.json"))
    if args.limit:
        paths = paths[:args.limit]
    rows = {mode: {} for mode in MODES}
    keyword_sets = {}
    started = time.process_time()
    for path in paths:
        document = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(document.get("schema"), str):
            document["schema"] = json.loads(document["schema"])
        keyword_sets[path.stem] = keywords_of(document["schema"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            matchers = {}
            for mode, (options, ordered) in MODES.items():
                key = tuple(sorted(options.items()))
                if key not in matchers:
                    matchers[key] = translate(document, options)
                rows[mode][path.stem] = judge(document, matchers[key], ordered)
    results = {mode: tally(rows[mode], keyword_sets) for mode in MODES}
    results.update(machine=machine_info(), data=str(args.data), n_schemas=len(paths),
                   cpu_s=round(time.process_time() - started, 1),
                   failures={mode: {name: row for name, row in rows[mode].items()
                                    if row["outcome"] in ("validation_error", "invalidation_error",
                                                          "compile_error")}
                             for mode in MODES})
    print(markdown(results))
    write_results(results, args.out)
    return results


if __name__ == "__main__":
    main()
