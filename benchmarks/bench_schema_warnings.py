"""Which JSON Schema keywords grammask still approximates on real schemas: the
share of MaskBench schemas whose translation warns, per keyword.

What it measures
    Every schema of ``--data`` (default ``../shared/workloads/maskbench``
    beside the repository, one JSON file per schema) is translated with
    ``Grammar.from_json_schema`` (defaults: members in schema order) while
    Python warnings are recorded.  A ``GrammarWarning`` names its keyword
    first (``'oneOf' at #/...: ...``); a schema counts once per keyword it
    warns about.  A schema the translator refuses (a ``GrammaskError``)
    counts as a translation error.  Translation only: no vocabulary, no
    masks (``bench_maskbench`` measures the outcomes on instances).

Output: ``--out`` (default ``benchmarks/results/bench_schema_warnings.json``)
with machine and commit, the counts, and per keyword the number and share of
schemas that warn about it, most frequent first.

Usage: python benchmarks/bench_schema_warnings.py [--data DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import re
import sys
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402

import grammask  # noqa: E402
from grammask.errors import GrammaskError  # noqa: E402

_KEYWORD = re.compile(r"'([^']+)' at ")


def warned_keywords(schema) -> "set[str] | None":
    """The keywords whose translation warned, or None if the schema is refused."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            grammask.Grammar.from_json_schema(schema)
        except GrammaskError:
            return None
    return {warning_keyword(warning.message) for warning in caught}


def warning_keyword(message: Warning) -> str:
    """The keyword a ``GrammarWarning`` names first, else the warning's class name."""
    match = _KEYWORD.match(str(message))
    return match.group(1) if match else type(message).__name__


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = pathlib.Path(__file__).resolve().parents[1]
    parser.add_argument("--data", default=str(root.parent / "shared" / "workloads" / "maskbench"))
    parser.add_argument("--out", default=str(root / "benchmarks" / "results" / "bench_schema_warnings.json"))
    args = parser.parse_args(argv)
    paths = sorted(pathlib.Path(args.data).glob("*.json"))
    if not paths:
        raise SystemExit(f"no schema files in {args.data}")
    by_keyword: collections.Counter = collections.Counter()
    n_refused = n_warned = 0
    for path in paths:
        keywords = warned_keywords(json.loads(path.read_text())["schema"])
        if keywords is None:
            n_refused += 1
            continue
        n_warned += bool(keywords)
        by_keyword.update(keywords)
    n = len(paths)
    results = {"machine": machine_info(), "data": args.data, "schemas": n, "translation_errors": n_refused,
               "schemas_with_warnings": n_warned, "share_with_warnings": round(n_warned / n, 4),
               "by_keyword": {keyword: {"schemas": count, "share": round(count / n, 4)}
                              for keyword, count in by_keyword.most_common()}}
    print(f"{n} schemas: {n_warned} warn ({100 * n_warned / n:.1f}%), {n_refused} refused")
    for keyword, count in by_keyword.most_common():
        print(f"  {keyword:28s} {count:5d}  {100 * count / n:5.2f}%")
    write_results(results, args.out)
    return results


if __name__ == "__main__":
    main()
