"""Tokens/s of SmolLM2-135M through llama-cpp-python: unconstrained, grammask, llama.cpp's grammar.

What it measures
    For each workload (a JSON Schema and a fixed list of extraction prompts)
    and each mode, greedy chat completions with ``n_threads=1``:

    - ``unconstrained``: no logits processor, no grammar;
    - ``noop_processor``: a logits processor that returns the scores as they
      are: the cost of llama-cpp-python's Python hook itself (it copies the
      candidates through a numpy record array every token), which any
      Python-side constraint pays;
    - ``grammask``: ``grammask.integrations.llama_cpp.generate`` (the
      GrammaskLogitsProcessor, JSON ended at the root value's close);
    - ``llama_grammar``: llama.cpp's own GBNF sampler,
      ``LlamaGrammar.from_json_schema`` on the same schema.

    Per call: wall-clock seconds, generated tokens, and llama.cpp's prompt
    evaluation time (``llama_perf_context``, differenced).  The per-token
    cost of a mode is ``(wall - prompt evaluation) / generated tokens``: it
    includes decoding the token, sampling and any constraint.  The
    constraint's cost is the difference to the unconstrained mode, as a
    fraction of an unconstrained token; grammask's own share is also timed
    directly inside its callback.  ``llm.reset()`` before every call makes
    each prompt evaluate from scratch (no KV-cache reuse between modes).

Output: a JSON file (default ``benchmarks/results/bench_llama.json``) with
the machine (CPU, cores, load average), versions, the git commit, every
call's figures, per-mode summaries and sample outputs.

Run: ``python benchmarks/bench_llama.py [--prompts 5] [--max-tokens 128]``
(about 2-4 minutes on 2 cores).  ``--warmup`` calls (default 1 per mode,
with the last prompt) run first and are not recorded: steady state is what
is compared; the first call's lazy cache building is in grammask's tests.  The machine may be shared: compare modes
within one run; the load average at start and end is recorded.
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

import llama_cpp

import grammask
from grammask.integrations.llama_cpp import default_model_path, generate, load_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FLAT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 30},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "city": {"type": "string", "minLength": 1, "maxLength": 30},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}
FLAT_PROMPTS = [
    "Alice is 31 years old and lives in Paris. Extract name, age and city as a JSON object.",
    "Bob, a 45 year old baker from Berlin. Extract name, age and city as a JSON object.",
    "Carmen (27) moved to Madrid last year. Extract name, age and city as a JSON object.",
    "Dmitri lives in Moscow; he turned 52 today. Extract name, age and city as a JSON object.",
    "Emeka, 38, Lagos. Extract name, age and city as a JSON object.",
    "Fatima is a 23 year old student in Cairo. Extract name, age and city as a JSON object.",
]
PERSON_PROMPTS = [
    "Extract the person: Ada Lovelace, born 1815 in London, was a mathematician who wrote the first "
    "published algorithm.",
    "Extract the person: Alan Turing, born 1912 in London, was a computer scientist known for the "
    "Turing machine and breaking Enigma.",
    "Extract the person: Marie Curie, born 1867 in Warsaw, was a physicist and chemist who discovered "
    "polonium and radium.",
    "Extract the person: Grace Hopper, born 1906 in New York City, was a computer scientist who built "
    "the first compiler.",
    "Extract the person: Srinivasa Ramanujan, born 1887 in Erode, was a mathematician known for his "
    "work on partitions.",
    "Extract the person: Hedy Lamarr, born 1914 in Vienna, was an actress and inventor of frequency "
    "hopping.",
]


def workloads() -> list[dict]:
    with open(os.path.join(ROOT, "examples", "schemas", "person.json"), encoding="utf-8") as handle:
        person = json.load(handle)
    return [
        {"name": "flat_object", "schema": FLAT_SCHEMA, "prompts": FLAT_PROMPTS},
        {"name": "person_with_array", "schema": person, "prompts": PERSON_PROMPTS},
    ]


def machine() -> dict:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "load_average_start": os.getloadavg()}


def git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def prompt_eval_ms(llm) -> float:
    return llama_cpp.llama_perf_context(llm._ctx.ctx).t_p_eval_ms


def run_call(llm, mode: str, schema: dict, prompt: str, max_tokens: int, grammars: dict) -> dict:
    llm.reset()
    before = prompt_eval_ms(llm)
    started = time.perf_counter()
    grammask_ms = 0.0
    if mode == "grammask":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = generate(llm, schema, prompt, max_tokens=max_tokens)
        text, n_tokens, complete = result.text, result.n_tokens, result.complete
        grammask_ms = 1000.0 * result.timings["grammask_s"]
        compile_ms = 1000.0 * result.timings["compile_s"]
    else:
        kwargs = {}
        if mode == "llama_grammar":
            kwargs["grammar"] = grammars[json.dumps(schema)]
        elif mode == "noop_processor":
            kwargs["logits_processor"] = llama_cpp.LogitsProcessorList([_identity])
        response = llm.create_chat_completion(messages=[{"role": "user", "content": prompt}],
                                              max_tokens=max_tokens, temperature=0.0, **kwargs)
        text = response["choices"][0]["message"]["content"]
        n_tokens = response["usage"]["completion_tokens"]
        complete = response["choices"][0]["finish_reason"] == "stop"
        compile_ms = 0.0
    wall_ms = 1000.0 * (time.perf_counter() - started)
    prompt_ms = prompt_eval_ms(llm) - before
    generation_ms = wall_ms - prompt_ms - compile_ms
    return {"mode": mode, "prompt": prompt, "text": text, "n_tokens": n_tokens, "complete": complete,
            "wall_ms": wall_ms, "prompt_eval_ms": prompt_ms, "compile_ms": compile_ms,
            "ms_per_token": generation_ms / max(n_tokens, 1), "grammask_ms": grammask_ms,
            "valid_json": _valid_json(text, schema)}


def _identity(input_ids, scores):
    return scores


def _valid_json(text: str, schema: dict) -> bool:
    import jsonschema

    try:
        return jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))
    except (json.JSONDecodeError, ValueError):
        return False


def summarize(calls: list[dict]) -> dict:
    n_tokens = sum(call["n_tokens"] for call in calls)
    generation_ms = sum(call["wall_ms"] - call["prompt_eval_ms"] - call["compile_ms"] for call in calls)
    return {
        "n_calls": len(calls), "n_tokens": n_tokens,
        "tokens_per_s": 1000.0 * n_tokens / generation_ms if generation_ms else 0.0,
        "ms_per_token": generation_ms / max(n_tokens, 1),
        "median_call_ms_per_token": statistics.median(call["ms_per_token"] for call in calls),
        "grammask_ms_per_token": sum(call["grammask_ms"] for call in calls) / max(n_tokens, 1),
        "n_valid_json": sum(call["valid_json"] for call in calls),
        "n_complete": sum(call["complete"] for call in calls),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=5, help="prompts per workload (max 6)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=1,
                        help="unrecorded calls per mode and workload first (lazy caches, page cache)")
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "bench_llama.json"))
    args = parser.parse_args(argv)

    llm = load_model(default_model_path(), n_ctx=1024, n_threads=1)
    modes = ["unconstrained", "noop_processor", "grammask", "llama_grammar"]
    report = {"benchmark": "bench_llama", "model": os.path.basename(default_model_path()),
              "n_threads": 1, "max_tokens": args.max_tokens, "warmup_calls": args.warmup,
              "machine": machine(),
              "versions": {"grammask": grammask.__version__, "llama_cpp_python": llama_cpp.__version__},
              "git_commit": git_commit(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "workloads": {}}
    for workload in workloads():
        schema = workload["schema"]
        grammars = {json.dumps(schema): llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema),
                                                                                verbose=False)}
        calls = {mode: [] for mode in modes}
        for prompt in workload["prompts"][-args.warmup:] if args.warmup else []:
            for mode in modes:
                run_call(llm, mode, schema, prompt, args.max_tokens, grammars)
        for prompt in workload["prompts"][:args.prompts]:
            for mode in modes:     # interleaved, so load changes hit every mode alike
                call = run_call(llm, mode, schema, prompt, args.max_tokens, grammars)
                calls[mode].append(call)
                print(f"{workload['name']:18s} {mode:14s} {call['n_tokens']:4d} tokens "
                      f"{call['ms_per_token']:7.1f} ms/token  valid={call['valid_json']}", file=sys.stderr)
        summary = {mode: summarize(calls[mode]) for mode in modes}
        base = summary["unconstrained"]["ms_per_token"]
        for mode in ("noop_processor", "grammask", "llama_grammar"):
            summary[mode]["overhead_vs_unconstrained"] = summary[mode]["ms_per_token"] / base - 1.0
        summary["grammask"]["callback_share_of_unconstrained_token"] = \
            summary["grammask"]["grammask_ms_per_token"] / base
        report["workloads"][workload["name"]] = {"schema": schema, "summary": summary, "calls": calls}
    report["machine"]["load_average_end"] = os.getloadavg()
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)
    for name, data in report["workloads"].items():
        for mode, figures in data["summary"].items():
            extra = ""
            if "overhead_vs_unconstrained" in figures:
                extra = f"  overhead {100.0 * figures['overhead_vs_unconstrained']:+.1f}%"
            print(f"{name:18s} {mode:14s} {figures['tokens_per_s']:6.1f} tokens/s "
                  f"{figures['ms_per_token']:7.1f} ms/token  valid JSON {figures['n_valid_json']}/"
                  f"{figures['n_calls']}{extra}")
    print(f"results: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
