"""Earley core benchmarks: bytes per second, memory, Leo's effect.

Fixed workloads (docs/design.md section 7, tests/workloads/bench):
  * a ~100 KB JSON document (``generic_document.json`` repeated inside an
    array) with the shipped JSON grammar (grammask/grammars/json.ebnf when
    present, else llama.cpp's json.gbnf from the shared workloads), pushed
    whole, and in 4-byte chunks with automatic compaction (the engine's way);
  * the arithmetic grammars (arith.kbnf, arith_ambig.kbnf) on arith.input.txt;
  * a try-push-then-pop probe at every position of the JSON document (what
    the token-trie walk does per trie edge);
  * memory after 1 MB of a JSON array of objects, with compaction;
  * right recursion (``A ::= 'a' A | 'a'`` and right-recursive JSON arrays):
    largest Earley set, completion steps per byte and CPU time per byte at
    1,000 / 10,000 / 100,000 bytes, with Leo and (for the count) without;
  * ``state_key`` on the JSON document after each 1-, 2- and 4-byte push
    (only the new sets are hashed): time per call from Python, the same
    minus a trivial method call's overhead (about the C cost that mask.pyx
    and the engine pay through ``state_key_into``), with and without
    compaction, and a repeated call with nothing pushed.

Times are CPU times (``time.process_time``), best of several runs: the
machine is shared and noisy, so compare ratios within one run.
Usage: ``python benchmarks/bench_earley.py [--quick] [--only SECTION ...]``;
writes benchmarks/results/bench_earley.json (``--only`` replaces those
sections and keeps the others).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

from grammask.grammar import Grammar
from grammask._core.earley import EarleyRecognizer, compiled_tables

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from _machine import machine_info  # noqa: E402
from support.grammar_cases import RIGHT_RECURSIVE_JSON  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKLOADS = pathlib.Path(__file__).resolve().parents[1] / "tests" / "workloads"
RESULTS = ROOT / "benchmarks" / "results" / "bench_earley.json"


def json_grammar():
    shipped = ROOT / "src" / "grammask" / "grammars" / "json.ebnf"
    if shipped.exists():
        return Grammar.from_ebnf(shipped.read_text()), str(shipped.relative_to(ROOT))
    path = WORKLOADS / "gbnf" / "json.gbnf"
    return Grammar.from_gbnf(path.read_text(), start="root"), str(path)


def json_document(n_bytes: int) -> bytes:
    item = json.dumps(json.loads((WORKLOADS / "bench" / "generic_document.json").read_text()))
    items = [item] * max(1, n_bytes // (len(item) + 2))
    data = ('{"items": [' + ", ".join(items) + "]}").encode()
    json.loads(data)
    return data


def best_cpu(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def feed_whole(tables, data):
    recognizer = EarleyRecognizer(tables)
    assert recognizer.push_bytes(data) and recognizer.is_accepting()


def feed_chunks(tables, data, chunk, horizon):
    recognizer = EarleyRecognizer(tables, rollback_horizon=horizon)
    for offset in range(0, len(data), chunk):
        assert recognizer.push_bytes(data[offset:offset + chunk])
    assert recognizer.is_accepting()


def bench_json(repeats):
    grammar, source = json_grammar()
    tables = compiled_tables(grammar.lnf)
    data = json_document(100_000)
    whole = best_cpu(lambda: feed_whole(tables, data), repeats)
    chunked = best_cpu(lambda: feed_chunks(tables, data, 4, 64), repeats)
    probe_data = data[:20_000]
    recognizer_probe = EarleyRecognizer(tables)

    def probe():
        # at every position try the next 4 bytes (push + pop), then advance
        for offset in range(len(probe_data)):
            for byte in probe_data[offset:offset + 4]:
                if recognizer_probe.push_byte(byte):
                    recognizer_probe.pop(1)
            recognizer_probe.push_byte(probe_data[offset])
        recognizer_probe.pop(len(probe_data))
    n_probes = sum(len(probe_data[k:k + 4]) for k in range(len(probe_data)))
    probe_time = best_cpu(probe, max(1, repeats // 2))
    sizes = EarleyRecognizer(tables)
    sizes.push_bytes(data)
    items_per_set = sizes.stats()["items_per_set"]
    return {
        "grammar": source,
        "document_bytes": len(data),
        "bytes_per_second_whole": len(data) / whole,
        "bytes_per_second_4byte_chunks_compacting": len(data) / chunked,
        "ns_per_push_pop_probe": probe_time / (n_probes + len(probe_data)) * 1e9,
        "mean_items_per_set": sum(items_per_set) / len(items_per_set),
        "max_items_per_set": max(items_per_set),
    }


def bench_arith(repeats):
    data = (WORKLOADS / "bench" / "arith.input.txt").read_bytes().rstrip(b"\n")
    results = {}
    for name in ["arith", "arith_ambig"]:
        grammar = Grammar.from_ebnf((WORKLOADS / "bench" / f"{name}.kbnf").read_text())
        tables = compiled_tables(grammar.lnf)
        runs = 50
        elapsed = best_cpu(lambda: [feed_whole(tables, data) for _ in range(runs)], repeats)
        results[name] = {"input_bytes": len(data), "bytes_per_second": runs * len(data) / elapsed}
    return results


def bench_memory():
    grammar, source = json_grammar()
    tables = compiled_tables(grammar.lnf)
    item = json.dumps({"id": 12345, "name": "item name", "tags": ["a", "b"], "price": 3.25,
                       "ok": True, "meta": None}).encode()
    data = b'{"items": [' + b", ".join([item] * (1_000_000 // (len(item) + 2))) + b"]}"
    results = {"grammar": source, "input_bytes": len(data)}
    for horizon in [64, 4096]:
        recognizer = EarleyRecognizer(tables, rollback_horizon=horizon)
        for offset in range(0, len(data), 1000):
            assert recognizer.push_bytes(data[offset:offset + 1000])
        assert recognizer.is_accepting()
        results[f"memory_bytes_horizon_{horizon}"] = recognizer.stats()["memory_bytes"]
    uncompacted = EarleyRecognizer(tables)
    assert uncompacted.push_bytes(data[:100_000])
    results["memory_bytes_per_input_byte_without_compaction"] = (
        uncompacted.stats()["memory_bytes"] / 100_000)
    return results


def right_recursion(tables, make_input, sizes, repeats):
    rows = []
    for n in sizes:
        data = make_input(n)
        recognizer = EarleyRecognizer(tables)
        assert recognizer.push_bytes(data) and recognizer.is_accepting()
        stats = recognizer.stats()

        def rerun():
            recognizer.pop(len(data))
            recognizer.push_bytes(data)
        warm = best_cpu(rerun, repeats if n < 50_000 else max(5, repeats // 2))
        compacting = best_cpu(lambda: [feed_chunks(tables, data, 100, 256)],
                              repeats if n < 50_000 else max(5, repeats // 2))
        without_leo = None
        if n <= 10_000:
            plain = EarleyRecognizer(tables, use_leo=False)
            assert plain.push_bytes(data)
            without_leo = plain.stats()["n_completion_steps"] / len(data)
        rows.append({
            "bytes": len(data),
            "max_items_per_set": max(stats["items_per_set"]),
            "completion_steps_per_byte": stats["n_completion_steps"] / len(data),
            "completion_steps_per_byte_without_leo": without_leo,
            "ns_per_byte_warm": warm / len(data) * 1e9,
            "ns_per_byte_compacting": compacting / len(data) * 1e9,
        })
    first, last = rows[0], rows[-1]
    return {
        "rows": rows,
        "time_ratio_warm_last_over_first": last["ns_per_byte_warm"] / first["ns_per_byte_warm"],
        "time_ratio_compacting_last_over_first":
            last["ns_per_byte_compacting"] / first["ns_per_byte_compacting"],
    }


def bench_right_recursion(repeats):
    a_tables = compiled_tables(Grammar.from_ebnf("start ::= 'a' start | 'a';").lnf)
    json_tables = compiled_tables(Grammar.from_ebnf(RIGHT_RECURSIVE_JSON).lnf)
    item = b'{"id": 12, "tags": ["a", "b"], "ok": true}'

    def json_array(n):
        return b"[" + b", ".join([item] * max(1, n // (len(item) + 2))) + b"]"
    sizes = [1000, 10_000, 100_000]
    return {
        "a_right_recursion": right_recursion(a_tables, lambda n: b"a" * n, sizes, repeats),
        "right_recursive_json_arrays": right_recursion(json_tables, json_array, sizes, repeats),
    }


def bench_state_key(repeats):
    grammar, source = json_grammar()
    tables = compiled_tables(grammar.lnf)
    data = json_document(20_000)

    def feed(chunk, horizon, with_key):
        recognizer = EarleyRecognizer(tables, rollback_horizon=horizon)
        recognizer.state_key()
        if with_key:
            for offset in range(0, len(data), chunk):
                recognizer.push_bytes(data[offset:offset + chunk])
                recognizer.state_key()
        else:
            for offset in range(0, len(data), chunk):
                recognizer.push_bytes(data[offset:offset + chunk])
                recognizer.is_accepting()

    idle = EarleyRecognizer(tables)
    idle.push_bytes(data[:1000])
    idle.state_key()
    n_calls = 100_000
    repeated = best_cpu(lambda: [idle.state_key() for _ in range(n_calls)], repeats) / n_calls
    overhead = best_cpu(lambda: [idle.is_accepting() for _ in range(n_calls)], repeats) / n_calls
    rows = []
    for chunk in (1, 2, 4):
        n_pushes = len(range(0, len(data), chunk))
        row = {"bytes_per_push": chunk}
        for horizon, label in ((None, ""), (64, "_compacting_64")):
            keyed = best_cpu(lambda: feed(chunk, horizon, True), repeats)
            plain = best_cpu(lambda: feed(chunk, horizon, False), repeats)
            # the plain run calls is_accepting() where the keyed one calls
            # state_key(), so the difference is the key's own cost
            row["ns_per_call" + label] = (keyed - plain) / n_pushes * 1e9 + overhead * 1e9
            row["ns_per_call_minus_call_overhead" + label] = (keyed - plain) / n_pushes * 1e9
        rows.append(row)
    memory = EarleyRecognizer(tables)
    memory.push_bytes(data)
    before = memory.stats()["memory_bytes"]
    memory.state_key()
    return {
        "grammar": source,
        "document_bytes": len(data),
        "after_push": rows,
        "ns_repeated_call_nothing_pushed": repeated * 1e9,
        "ns_trivial_method_call_overhead": overhead * 1e9,
        "memory_bytes_per_input_byte": (memory.stats()["memory_bytes"] - before) / len(data),
    }


SECTIONS = {
    "json_100kb": bench_json,
    "arithmetic": bench_arith,
    "memory_after_1mb_json": lambda repeats: bench_memory(),
    "right_recursion": bench_right_recursion,
    "state_key": bench_state_key,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), help="run these sections only")
    args = parser.parse_args()
    repeats = 3 if args.quick else 10
    results = {"benchmark": "bench_earley", "machine": machine_info()}
    if args.only and RESULTS.exists():
        results = json.loads(RESULTS.read_text())
    for name, run in SECTIONS.items():
        if not args.only or name in args.only:
            results[name] = run(repeats)
            if args.only:
                # the top-level machine entry describes the other sections' run
                results[name]["machine"] = machine_info()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
