"""Per-step cost of grammask's mask on the fixed workloads of docs/design.md section 7.

Vocabulary: Mistral's tekken (131,072 tokens, `mistral_common/data/tekken_240911.json`),
loaded through tiktoken as the peers' table was.  Each workload's input is
encoded with that tokenizer; one step = accept the token + fill the int32
bitmask (the work a server does per token).  Reported per workload:

- compile_ms: Grammar construction + grammask.compile (caches cleared first);
- cold: the first pass over the input on a fresh CompiledGrammar (includes the
  lazy per-terminal token sets being built);
- warm: a second pass with a new Engine on the same CompiledGrammar (the
  whole-mask cache, keyed by the exact Earley state and the canonical state,
  now holds every state of the input: this is the replayed-prefix case);
- warm_no_mask_cache: the same with ``Config(mask_cache_entries=0)`` after a
  throwaway pass: per-terminal token sets warm, every mask computed (what a
  new sequence through already-seen grammar states costs without repeats);
- median / p99 / max in microseconds, RSS growth;
plus `mask_logits` on a 131,072-entry float32 array (contiguous and strided).

Usage: python benchmarks/bench_mask.py [--out benchmarks/results/bench_mask.json] [--repeat 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402

import grammask  # noqa: E402
from grammask.engine.vocab_tables import vocabulary_tables  # noqa: E402

WORKLOADS = pathlib.Path(__file__).resolve().parents[1] / "tests" / "workloads" / "bench"


def tekken():
    import importlib.util
    spec = importlib.util.find_spec("mistral_common")
    path = pathlib.Path(spec.origin).parent / "data" / "tekken_240911.json"
    vocab = grammask.Vocabulary.from_tekken(path)
    return vocab, vocab.tokenizer


def workloads(workload_dir: pathlib.Path):
    read = lambda name: (workload_dir / name).read_text(encoding="utf-8")  # noqa: E731
    return {
        "generic_json": (lambda: grammask.Grammar.from_ebnf(_builtin_json()), read("generic_document.json")),
        "json_schema_ticket": (lambda: grammask.Grammar.from_json_schema(read("ticket_schema.json")),
                               read("ticket_instance.json")),
        "regex_email": (lambda: grammask.Grammar.from_regex(read("regex_email.regex").strip("\n")),
                        read("regex_email.input.txt")),
        "regex_freetext": (lambda: grammask.Grammar.from_regex(read("regex_freetext.regex").strip("\n")),
                           read("regex_freetext.input.txt")),
        "regex_datetime": (lambda: grammask.Grammar.from_regex(read("regex_datetime.regex").strip("\n")),
                           read("regex_datetime.input.txt")),
        "arith_cfg": (lambda: grammask.Grammar.from_ebnf(read("arith.kbnf")), read("arith.input.txt")),
    }


def _builtin_json() -> str:
    from grammask.grammar import builtin_text
    return builtin_text("json")


def run_pass(compiled, token_ids):
    engine = grammask.Engine(compiled)
    bitmask = np.zeros((1, compiled.n_words), dtype=np.int32)
    times = []
    start = time.perf_counter_ns()
    engine.fill_bitmask(bitmask)
    times.append(time.perf_counter_ns() - start)
    for token_id in token_ids:
        if not (bitmask[0, token_id >> 5] >> (token_id & 31)) & 1:
            raise AssertionError(f"input token {token_id} not in the mask")
        start = time.perf_counter_ns()
        engine.try_accept_new_token(token_id)
        engine.fill_bitmask(bitmask)
        times.append(time.perf_counter_ns() - start)
    if not engine.can_end():
        raise AssertionError("input is not a complete sentence")
    return np.array(times) / 1000.0, engine


def summary(us: np.ndarray) -> dict:
    return {"median_us": round(float(np.median(us)), 2), "p99_us": round(float(np.percentile(us, 99)), 2),
            "max_us": round(float(us.max()), 2), "mean_us": round(float(us.mean()), 2)}


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def bench_mask_logits(compiled, repeat: int = 200) -> dict:
    engine = grammask.Engine(compiled)
    engine.compute_allowed_token_ids()
    size = compiled.vocab.size
    results = {}
    for name, make in (("contiguous", lambda: np.zeros(size, np.float32)),
                       ("strided", lambda: np.zeros((size, 2), np.float32)[:, 0])):
        logits = make()
        times = []
        for _ in range(repeat):
            logits[...] = 0
            start = time.perf_counter_ns()
            engine.mask_logits(logits)
            times.append(time.perf_counter_ns() - start)
        results[name] = summary(np.array(times) / 1000.0)
    return results


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "bench_mask.json"))
    parser.add_argument("--workloads", default=str(WORKLOADS))
    parser.add_argument("--only", nargs="*", help="workload names to run")
    parser.add_argument("--canonical", choices=["on", "off"], default="off",
                        help="canonical filter (off: the grammar mask alone, as the peers measured)")
    args = parser.parse_args(argv)
    args.canonical = args.canonical == "on"

    start = time.perf_counter()
    vocab, encoding = tekken()
    vocab_seconds = time.perf_counter() - start
    # Per-vocabulary tables (token trie, canonical filter) are built once per
    # vocabulary and shared by every grammar: time them apart from compile.
    start = time.perf_counter()
    vocab_tables = vocabulary_tables(vocab)
    trie_seconds = time.perf_counter() - start
    start = time.perf_counter()
    canonical = vocab_tables.canonical_filter()
    canonical_seconds = time.perf_counter() - start
    results = {"machine": machine_info(),
               "vocabulary": {"name": "tekken_240911", "size": vocab.size, "load_s": round(vocab_seconds, 2),
                              "trie_build_s": round(trie_seconds, 2),
                              "canonical_filter": getattr(canonical, "name", None),
                              "canonical_build_s": round(canonical_seconds, 2)},
               "config": {"canonical": args.canonical},
               "workloads": {}}
    config = grammask.Config(canonical=args.canonical)
    # Imports (the front ends and the JSON Schema translator) are not compile time.
    grammask.compile(grammask.Grammar.from_ebnf("start ::= 'warm' #'[a-z]+';"), vocab, config)
    grammask.Grammar.from_json_schema({"type": "object", "properties": {"warm": {"type": "string"}}})
    for name, (make_grammar, text) in workloads(pathlib.Path(args.workloads)).items():
        if args.only and name not in args.only:
            continue
        # Forget compiled grammars and terminal DFAs, so compile_ms is what a
        # new grammar costs (imports and per-vocabulary tables stay warm).
        grammask.clear_caches(vocabularies=False)
        rss_before = rss_kb()
        start = time.perf_counter()
        grammar = make_grammar()
        compiled = grammask.compile(grammar, vocab, config)
        compile_ms = (time.perf_counter() - start) * 1000
        token_ids = encoding.encode(text, disallowed_special=())
        cold, _ = run_pass(compiled, token_ids)
        warm, engine = run_pass(compiled, token_ids)
        uncached_config = dataclasses.replace(config, mask_cache_entries=0)
        uncached = grammask.compile(grammar, vocab, uncached_config)
        run_pass(uncached, token_ids)
        warm_uncached, _ = run_pass(uncached, token_ids)
        results["workloads"][name] = {
            "n_tokens": len(token_ids), "compile_ms": round(compile_ms, 2),
            "cold": summary(cold), "warm": summary(warm),
            "warm_no_mask_cache": summary(warm_uncached),
            "rss_growth_mb": round((rss_kb() - rss_before) / 1024, 1),
            "terminal_states_cached": engine.stats()["n_cached_terminal_states"],
        }
        print(f"{name:20s} tokens={len(token_ids):4d} compile={compile_ms:8.1f} ms  "
              f"cold med/p99={summary(cold)['median_us']:8.1f}/{summary(cold)['p99_us']:9.1f} us  "
              f"warm med/p99={summary(warm)['median_us']:8.1f}/{summary(warm)['p99_us']:9.1f} us  "
              f"uncached med/p99={summary(warm_uncached)['median_us']:8.1f}/"
              f"{summary(warm_uncached)['p99_us']:9.1f} us",
              flush=True)
        if name == "generic_json":
            results["mask_logits_131k"] = bench_mask_logits(compiled)
            print("mask_logits 131k float32:", results["mask_logits_131k"], flush=True)
    write_results(results, args.out)
    return results


if __name__ == "__main__":
    main()
