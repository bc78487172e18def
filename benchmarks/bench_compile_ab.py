"""Compile time of two grammask trees in lockstep, and whether they compile the same grammars.

What it measures
    The schemas of ``bench_maskbench.py``'s stratified sample (``--sample``,
    ``--seed``; Llama-3 vocabulary, ``Config(canonical=False)``), each compiled
    by an *old* and a *new* interpreter (two virtual environments, each with
    its own grammask: e.g. the main checkout's and a branch's), one after the
    other, which one first alternating per schema, so both see the same load.
    Per schema and side: CPU time (``process_time_ns``) of
    ``Grammar.from_json_schema`` (and of the JSON Schema translation inside
    it, ``json_schema.schema_to_ast``, timed by a wrapper) and of
    ``grammask.compile``, and an identity
    digest: sha256 over the grammar's fingerprint (LNF arrays, names,
    terminal spellings), every terminal DFA's tables and the per-DFA arrays
    ``CompiledTables`` is built from (``earley_tables._prepared_dfa``).
    Each side is one long-lived worker process with its own per-process
    caches, as in ``bench_maskbench.py``, warmed up on a small schema.

Output: p50 of each phase and of their sum (p90 and p95 too for
``from_json_schema`` and the translation), the sums over the schemas, the
median per-schema ratio new/old, the load average, and the schemas whose
identity digests differ (an exit status of 1 when any does) or whose outcome
(compiled or which error) differs.

The old and new workers are run by ``_lockstep.py``.

Usage: python benchmarks/bench_compile_ab.py --old /work/main/.venv/bin/python
       [--new PYTHON] [--sample 150] [--seed 0] [--every N]

``--every N`` takes every Nth MaskBench schema (sorted by name) instead of
the stratified sample.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import statistics
import sys
import time
import warnings

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _lockstep  # noqa: E402


def identity(grammar) -> str:
    from grammask._core import earley_tables

    digest = hashlib.sha256(grammar.fingerprint.encode("ascii"))
    for dfa in grammar.lnf.dfas:
        digest.update(repr((dfa.start, dfa.n_classes)).encode("ascii"))
        for array in (dfa.class_map, dfa.transitions, dfa.accepting):
            digest.update(array.tobytes())
        for part in earley_tables._prepared_dfa(dfa)[:-1]:
            digest.update(part.tobytes())
    return digest.hexdigest()


def worker() -> None:
    """Read schema names from stdin, one a line; answer one JSON line each."""
    import bench_maskbench
    import tokenizers

    import grammask
    import grammask.json_schema

    translating = [0]
    schema_to_ast = grammask.json_schema.schema_to_ast

    def timed_schema_to_ast(schema, **options):
        started = time.process_time_ns()
        try:
            return schema_to_ast(schema, **options)
        finally:
            translating[0] = time.process_time_ns() - started

    grammask.json_schema.schema_to_ast = timed_schema_to_ast
    warnings.simplefilter("ignore")
    vocab = grammask.Vocabulary.from_tokenizer(tokenizers.Tokenizer.from_file(bench_maskbench.tokenizer_path()))
    config = grammask.Config(canonical=False)
    grammask.compile(grammask.Grammar.from_json_schema({"type": "object", "properties": {"warm": {"type": "string"}}}),
                     vocab, config)
    print(json.dumps({"ready": grammask.__file__}), flush=True)
    for line in sys.stdin:
        path = bench_maskbench.DATA / line.strip()
        schema = json.loads(path.read_text(encoding="utf-8"))["schema"]
        started = time.process_time_ns()
        try:
            grammar = grammask.Grammar.from_json_schema(schema)
            translated = time.process_time_ns()
            grammask.compile(grammar, vocab, config)
            compiled = time.process_time_ns()
        except grammask.GrammaskError as error:
            print(json.dumps({"error": type(error).__name__}), flush=True)
            continue
        print(json.dumps({"from_json_schema": (translated - started) / 1e6,
                          "compile": (compiled - translated) / 1e6,
                          "translation": translating[0] / 1e6, "identity": identity(grammar)}),
              flush=True)


def main(argv=None) -> int:
    args = _lockstep.parse_args(__doc__.splitlines()[0], 150, argv)
    if args.worker:
        worker()
        return 0
    rows = {"old": [], "new": []}
    differ, outcome_differs = [], []
    for name, answers in _lockstep.lockstep(__file__, args, _lockstep.schema_names(args)):
        old, new = answers["old"], answers["new"]
        if old.get("error") != new.get("error"):
            outcome_differs.append(name)
        elif "error" not in old:
            if old["identity"] != new["identity"]:
                differ.append(name)
            for side in rows:
                rows[side].append((answers[side]["from_json_schema"], answers[side]["compile"],
                                   answers[side]["translation"]))
    print(f"load average {os.getloadavg()}; {len(rows['old'])} schemas compiled by both")
    for side in ("old", "new"):
        translate = [row[0] for row in rows[side]]
        compiled = [row[1] for row in rows[side]]
        both = [row[0] + row[1] for row in rows[side]]
        print(f"{side}: from_json_schema p50 {statistics.median(translate):.2f} ms, compile() p50 "
              f"{statistics.median(compiled):.2f} ms, both p50 {statistics.median(both):.2f} ms, "
              f"sum {sum(both) / 1e3:.2f} s (CPU)")
        for label, values in (("from_json_schema", translate), ("translation", [row[2] for row in rows[side]])):
            ordered = sorted(values)
            print(f"{side}: {label} p50 / p90 / p95 {statistics.median(ordered):.2f} / "
                  + " / ".join(f"{_lockstep.percentile(ordered, q):.2f}" for q in (0.9, 0.95))
                  + f" ms, sum {sum(values) / 1e3:.2f} s")
    ratios = [sum(new) / sum(old) for old, new in zip(rows["old"], rows["new"])]
    compile_ratios = [new[1] / old[1] for old, new in zip(rows["old"], rows["new"])]
    print(f"median per-schema ratio new/old: both {statistics.median(ratios):.3f}, "
          f"compile() {statistics.median(compile_ratios):.3f}")
    print(f"identity digests differ: {len(differ)} {differ[:5]}; outcomes differ: "
          f"{len(outcome_differs)} {outcome_differs[:5]}")
    return 1 if differ or outcome_differs else 0


if __name__ == "__main__":
    sys.exit(main())
