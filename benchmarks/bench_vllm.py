"""Per-token cost of grammask inside vLLM (CPU build) on SmolLM2-135M, against
unconstrained generation and vLLM's own xgrammar backend.

What it measures
    Each mode runs in a fresh process (one ``LLM`` per process; the model is
    the converted SmolLM2-135M-Instruct that ``./run test`` caches):

    - ``unconstrained``: no custom logits processor, no structured output;
    - ``grammask``: ``GrammaskLogitsProcessor`` with the schema in
      ``extra_args["grammask"]``;
    - ``xgrammar``: vLLM's structured outputs (``StructuredOutputsParams(json=...)``,
      backend ``xgrammar``) on the same schema.

    Every mode generates greedily for the same prompts at batch size 1 (one
    request after another: every step decodes one token) and at batch size
    ``--batch`` (all prompts in one ``generate`` call).  Per call: wall
    seconds and generated tokens.  The per-token figure at batch 1 is wall
    seconds over generated tokens (prompts are a few dozen tokens, their
    prefill is included); at batch N it is wall seconds over decode steps
    (the longest output).  grammask's and xgrammar's overhead is the ratio
    to the unconstrained figure of the same run.  Unconstrained outputs run
    to ``--max-tokens`` (``ignore_eos``), constrained ones stop at the end
    of the JSON, so compare per-token figures, not totals.

Output: a JSON file (default ``benchmarks/results/bench_vllm.json``) with the
machine, versions, per-mode figures and one sample output per mode.

Run in the vLLM environment (``./run test`` builds it):
``~/.cache/grammask/vllm-venv/bin/python benchmarks/bench_vllm.py --model DIR``
(each mode loads the model in its own process).  One warm-up call per mode
is not recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine_info, write_results  # noqa: E402

SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 24},
                         "age": {"type": "integer", "minimum": 0, "maximum": 150},
                         "city": {"type": "string", "maxLength": 24},
                         "skills": {"type": "array", "items": {"type": "string", "maxLength": 16},
                                    "maxItems": 4}},
          "required": ["name", "age", "city", "skills"], "additionalProperties": False}
PROMPTS = [
    "Ada Lovelace, 36, from London, mathematician and writer. As JSON:",
    "Alan Turing was 41 and lived in Manchester; he knew logic and cryptography. As JSON:",
    "Grace Hopper, 85, Arlington, compilers and COBOL. As JSON:",
    "Linus, 28, Helsinki, kernels, C and git. As JSON:",
]
MODES = ("unconstrained", "grammask", "xgrammar")


def run_mode(mode: str, model: str, max_tokens: int, batch: int) -> dict:
    """Time one mode in this process; returns its figures."""
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    from grammask.integrations.vllm import GrammaskLogitsProcessor

    kwargs = {"logits_processors": [GrammaskLogitsProcessor]} if mode == "grammask" else {}
    llm = LLM(model=model, dtype="float32", enforce_eager=True, max_model_len=512, seed=0,
              gpu_memory_utilization=0.1, **kwargs)

    def params() -> SamplingParams:
        if mode == "grammask":
            return SamplingParams(max_tokens=max_tokens, temperature=0.0,
                                  extra_args={"grammask": {"json_schema": SCHEMA,
                                                           "options": {"whitespace": "compact"}}})
        if mode == "xgrammar":
            return SamplingParams(max_tokens=max_tokens, temperature=0.0,
                                  structured_outputs=StructuredOutputsParams(json=SCHEMA,
                                                                             whitespace_pattern=""))
        return SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)

    llm.generate(PROMPTS[-1:], params(), use_tqdm=False)
    single_seconds, single_tokens = 0.0, 0
    for prompt in PROMPTS:
        started = time.perf_counter()
        output = llm.generate([prompt], params(), use_tqdm=False)[0].outputs[0]
        single_seconds += time.perf_counter() - started
        single_tokens += len(output.token_ids)
    prompts = (PROMPTS * ((batch + len(PROMPTS) - 1) // len(PROMPTS)))[:batch]
    started = time.perf_counter()
    outputs = llm.generate(prompts, [params() for _ in prompts], use_tqdm=False)
    batch_seconds = time.perf_counter() - started
    steps = max(len(result.outputs[0].token_ids) for result in outputs)
    return {"mode": mode, "batch1_seconds": single_seconds, "batch1_tokens": single_tokens,
            "batch1_ms_per_token": 1000 * single_seconds / single_tokens,
            "batch": batch, "batchN_seconds": batch_seconds, "batchN_steps": steps,
            "batchN_tokens": sum(len(result.outputs[0].token_ids) for result in outputs),
            "batchN_ms_per_step": 1000 * batch_seconds / steps,
            "sample": outputs[0].outputs[0].text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the converted SmolLM2 folder")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_vllm.json"))
    parser.add_argument("--one-mode", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_mode:
        print(json.dumps(run_mode(args.one_mode, args.model, args.max_tokens, args.batch)))
        return
    import vllm

    results = {"machine": machine_info(), "vllm": vllm.__version__, "schema": SCHEMA,
               "max_tokens": args.max_tokens, "load_average_start": os.getloadavg(), "modes": {}}
    for mode in args.modes.split(","):
        run = subprocess.run([sys.executable, __file__, "--model", args.model, "--max-tokens",
                              str(args.max_tokens), "--batch", str(args.batch), "--one-mode", mode],
                             capture_output=True, text=True)
        if run.returncode != 0:
            results["modes"][mode] = {"error": run.stderr[-2000:]}
            print(f"{mode}: failed (see the results file)")
            continue
        results["modes"][mode] = json.loads(run.stdout.strip().splitlines()[-1])
    results["load_average_end"] = os.getloadavg()
    base = results["modes"].get("unconstrained", {})
    for mode, figures in results["modes"].items():
        if "error" in figures or "error" in base or not base:
            continue
        figures["batch1_overhead"] = figures["batch1_ms_per_token"] / base["batch1_ms_per_token"] - 1
        figures["batchN_overhead"] = figures["batchN_ms_per_step"] / base["batchN_ms_per_step"] - 1
        print(f"{mode:14s} batch 1: {figures['batch1_ms_per_token']:.2f} ms/token "
              f"({figures['batch1_overhead']:+.1%})   batch {args.batch}: "
              f"{figures['batchN_ms_per_step']:.2f} ms/step ({figures['batchN_overhead']:+.1%})")
    write_results(results, args.out)


if __name__ == "__main__":
    main()
