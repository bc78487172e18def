"""Per-token cost of grammask inside vLLM (CPU build) on SmolLM2-135M, against
unconstrained generation and vLLM's own xgrammar backend.

What it measures
    One ``LLM`` (the converted SmolLM2-135M-Instruct that ``./run test``
    caches) with ``GrammaskLogitsProcessor`` installed; requests without an
    ``extra_args["grammask"]`` entry pass through it untouched, so the modes
    run interleaved in the same process, on the same warm model:

    - ``grammask``: the schema in ``extra_args["grammask"]`` (compact JSON);
    - ``xgrammar``: vLLM's structured outputs (``StructuredOutputsParams(json=...)``)
      on the same schema, compact as well (the engine's
      ``disable_any_whitespace``: xgrammar ignores ``whitespace_pattern``);
    - ``unconstrained``: no grammar, ``ignore_eos``, and ``max_tokens`` set
      to the token count of the constrained request it is paired with, so
      both decode the same number of tokens;
    - ``prefill``: the same prompt with ``max_tokens=1`` (prefill and one
      token), subtracted from both so that the prompt's prefill does not
      dilute the per-token figures.

    Each round draws a new sampling seed per prompt (temperature 0.7): the
    constrained outputs differ from round to round, so the masks are not
    all served from the per-grammar mask cache of earlier rounds.  A round
    runs, for each prompt, grammask, its unconstrained twin, xgrammar, its
    twin and the prefill request, one request at a time (every step decodes
    one token); then the batch of all prompts with grammask and its twin
    batch.  Both wall and CPU seconds (``process_time``: the model's threads
    and grammask's) are taken per request.

    Two measures of the overhead.  Per step (the robust one): every
    ``EngineCore.step`` is timed (wall and process CPU) and tagged with the
    mode of the requests it ran; a call's first step (its prefill) and
    steps that run no model (a request waiting for xgrammar's grammar) are
    left out.  Overhead of a mode = median step seconds of the mode /
    median step seconds of its twins - 1, over all recorded rounds (a few
    hundred steps each); the constrained and twin steps alternate request
    by request, so the machine's load moves both alike.  End to end (per
    round): (constrained seconds - twin seconds) / (twin seconds - prefill
    seconds), medians over rounds; on a shared machine a difference of two
    end-to-end timings swings by tens of percent from round to round, so
    it is reported but not the figure to read.  grammask's own share is
    also measured directly: the seconds inside the processor's ``apply``
    and ``update_state`` (every grammask call vLLM makes: feeding tokens,
    masks, the batch's bookkeeping) per step ("inside"), and the same calls
    on a twin's steps (the processor installed but no request constrained:
    its cost for unconstrained traffic).  A first round (compiles, vLLM's
    warm-up) is not recorded.

    Torch threads: ``--threads`` (default 1).  With 2 threads on 2 cores a
    forward pass waits at every operation for both threads, so when another
    process holds a core the step stalls (at load 7: forward passes of 0.1
    to 1.4 s from the 10th to the 90th percentile; with one thread at load
    5, 0.09 to 0.2 s), and CPU time counts the waiting thread's spinning:
    the measure then follows the machine's load, not the work.  ``0``
    keeps torch's default.

Output: a JSON file (default ``benchmarks/results/bench_vllm.json``) with the
machine, versions, the grammask module measured (the vLLM environment holds
a wheel of the checkout: ``./run test -k vllm`` reinstalls it after a
change), per-round figures, the per-step and per-round medians and one
sample output per mode.

Run in the vLLM environment (``./run test`` builds it):
``~/.cache/grammask/vllm-venv/bin/python benchmarks/bench_vllm.py --model DIR``.
"""

from __future__ import annotations

import argparse
import os
import statistics
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
TEMPERATURE = 0.7
MAX_TOKENS = 48


INSIDE = {"wall": 0.0, "cpu": 0.0}
"""Seconds spent inside the processor's ``apply`` and ``update_state``
(``_count_inside``): grammask's own share of each step, measured directly."""


def _count_inside(method):
    def counted(self, *args):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return method(self, *args)
        finally:
            INSIDE["wall"] += time.perf_counter() - wall
            INSIDE["cpu"] += time.process_time() - cpu
    return counted


STEPS: list = []
"""One entry per recorded engine step: [mode, wall, cpu, inside wall,
inside cpu] (``_record_steps``)."""

MODE = {"mode": None, "first": True}
"""The mode of the ``LLM.generate`` call running (None: not recorded) and
whether its first step (the prefill) is still to come."""


def _record_steps(step):
    def recorded(self, *args, **kwargs):
        inside_wall, inside_cpu = INSIDE["wall"], INSIDE["cpu"]
        wall, cpu = time.perf_counter(), time.process_time()
        result = step(self, *args, **kwargs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if not result[1]:  # nothing scheduled (xgrammar compiling a grammar, say)
            return result
        if MODE["mode"] is not None and not MODE["first"]:
            STEPS.append([MODE["mode"], wall, cpu, INSIDE["wall"] - inside_wall, INSIDE["cpu"] - inside_cpu])
        MODE["first"] = False
        return result
    return recorded


class Timed:
    """Wall and CPU seconds, and seconds inside grammask's processor, of
    ``LLM.generate`` calls; their steps are recorded under ``mode``."""

    def __init__(self, llm):
        self.llm = llm
        self.inside = {"wall": 0.0, "cpu": 0.0}

    def __call__(self, prompts, params, mode=None):
        before = dict(INSIDE)
        MODE.update(mode=mode, first=True)
        wall, cpu = time.perf_counter(), time.process_time()
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        MODE["mode"] = None
        self.inside = {clock: INSIDE[clock] - before[clock] for clock in INSIDE}
        return [result.outputs[0] for result in outputs], wall, cpu


def _params(mode: str, seed: int, max_tokens: int = MAX_TOKENS):
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    if mode == "grammask":
        return SamplingParams(max_tokens=max_tokens, temperature=TEMPERATURE, seed=seed,
                              extra_args={"grammask": {"json_schema": SCHEMA,
                                                       "options": {"whitespace": "compact"}}})
    if mode == "xgrammar":
        return SamplingParams(max_tokens=max_tokens, temperature=TEMPERATURE, seed=seed,
                              structured_outputs=StructuredOutputsParams(json=SCHEMA))
    return SamplingParams(max_tokens=max_tokens, temperature=TEMPERATURE, seed=seed, ignore_eos=True)


def _round(generate: Timed, index: int, batch: int) -> dict:
    """One round's seconds per mode (sums over the prompts), token counts
    and samples."""
    totals = {key: [0.0, 0.0] for key in ("grammask", "grammask_twin", "xgrammar", "xgrammar_twin",
                                          "prefill", "batch", "batch_twin", "grammask_inside",
                                          "batch_inside")}
    tokens = {"grammask": 0, "xgrammar": 0, "batch": 0}
    samples = {}

    def add(key, wall, cpu):
        totals[key][0] += wall
        totals[key][1] += cpu

    for number, prompt in enumerate(PROMPTS):
        print(f"round {index}, prompt {number}", file=sys.stderr, flush=True)
        seed = 1000 * index + number
        for mode in ("grammask", "xgrammar"):
            (output,), wall, cpu = generate([prompt], _params(mode, seed), mode)
            add(mode, wall, cpu)
            if mode == "grammask":
                add("grammask_inside", generate.inside["wall"], generate.inside["cpu"])
            n_tokens = len(output.token_ids)
            tokens[mode] += n_tokens
            samples.setdefault(mode, output.text)
            (twin,), wall, cpu = generate([prompt], _params("unconstrained", seed, n_tokens), f"{mode}_twin")
            assert len(twin.token_ids) == n_tokens, (len(twin.token_ids), n_tokens)
            add(f"{mode}_twin", wall, cpu)
        (_,), wall, cpu = generate([prompt], _params("unconstrained", seed, 1))
        add("prefill", wall, cpu)
    prompts = (PROMPTS * ((batch + len(PROMPTS) - 1) // len(PROMPTS)))[:batch]
    seeds = [1000 * index + 100 + number for number in range(len(prompts))]
    outputs, wall, cpu = generate(prompts, [_params("grammask", seed) for seed in seeds], "batch")
    add("batch", wall, cpu)
    add("batch_inside", generate.inside["wall"], generate.inside["cpu"])
    counts = [len(output.token_ids) for output in outputs]
    tokens["batch"] = sum(counts)
    _, wall, cpu = generate(prompts, [_params("unconstrained", seed, n)
                                      for seed, n in zip(seeds, counts)], "batch_twin")
    add("batch_twin", wall, cpu)
    return {"seconds": totals, "tokens": tokens, "samples": samples, "batch_steps": max(counts)}


def _overheads(figures: dict) -> dict:
    """Extra time per decoded token over unconstrained decoding, wall and CPU."""
    seconds = figures["seconds"]
    result = {}
    for clock, slot in (("wall", 0), ("cpu", 1)):
        prefill = seconds["prefill"][slot]
        for mode in ("grammask", "xgrammar"):
            twin = seconds[f"{mode}_twin"][slot]
            result[f"{mode}_{clock}"] = (seconds[mode][slot] - twin) / (twin - prefill)
        # Batch: the twin batch's own time is the base (its prefill is shared by both).
        twin = seconds["batch_twin"][slot]
        result[f"batch_{clock}"] = (seconds["batch"][slot] - twin) / twin
        # Measured inside the processor: grammask's own seconds over the
        # unconstrained decode seconds of the same tokens.
        result[f"inside_{clock}"] = seconds["grammask_inside"][slot] / (
            seconds["grammask_twin"][slot] - prefill)
        result[f"batch_inside_{clock}"] = seconds["batch_inside"][slot] / twin
    return result


def _per_step() -> dict:
    """Median step seconds (wall, CPU, inside grammask) per mode over the
    recorded steps, and each constrained mode's overhead over its twins."""
    medians, counts = {}, {}
    for mode in sorted({step[0] for step in STEPS}):
        steps = [step for step in STEPS if step[0] == mode]
        counts[mode] = len(steps)
        for slot, clock in ((1, "wall"), (2, "cpu"), (3, "inside_wall"), (4, "inside_cpu")):
            medians[f"{mode}_ms_{clock}"] = 1000 * statistics.median(step[slot] for step in steps)
    overhead = {}
    for mode in ("grammask", "xgrammar", "batch"):
        for clock in ("wall", "cpu"):
            twin = medians[f"{mode}_twin_ms_{clock}"]
            overhead[f"{mode}_{clock}"] = medians[f"{mode}_ms_{clock}"] / twin - 1
        if mode != "xgrammar":
            overhead[f"{mode}_inside_cpu"] = medians[f"{mode}_ms_inside_cpu"] / medians[f"{mode}_twin_ms_cpu"]
    return {"steps": counts, "median_ms": medians, "overhead": overhead}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the converted SmolLM2 folder")
    parser.add_argument("--rounds", type=int, default=4, help="recorded rounds (one more warms up)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_vllm.json"))
    args = parser.parse_args()
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    import torch
    import vllm
    from vllm import LLM
    from vllm.v1.engine.core import EngineCore

    import grammask
    from grammask.integrations.vllm import GrammaskLogitsProcessor

    if args.threads:
        torch.set_num_threads(args.threads)
    GrammaskLogitsProcessor.apply = _count_inside(GrammaskLogitsProcessor.apply)
    GrammaskLogitsProcessor.update_state = _count_inside(GrammaskLogitsProcessor.update_state)
    EngineCore.step = _record_steps(EngineCore.step)
    llm = LLM(model=args.model, dtype="float32", enforce_eager=True, max_model_len=512, seed=0,
              kv_cache_memory_bytes=512 << 20, logits_processors=[GrammaskLogitsProcessor],
              structured_outputs_config={"backend": "xgrammar", "disable_any_whitespace": True})
    generate = Timed(llm)
    load_start = os.getloadavg()
    rounds = []
    for index in range(args.rounds + 1):
        figures = _round(generate, index, args.batch)
        if index == 0:
            STEPS.clear()
            continue  # compiles and vLLM's own warm-up
        figures["overhead"] = _overheads(figures)
        rounds.append(figures)
        overhead = figures["overhead"]
        print(f"round {index}: grammask {overhead['grammask_cpu']:+.1%} CPU ({overhead['grammask_wall']:+.1%} wall), "
              f"xgrammar {overhead['xgrammar_cpu']:+.1%} CPU ({overhead['xgrammar_wall']:+.1%} wall), "
              f"grammask batch {args.batch} {overhead['batch_cpu']:+.1%} CPU; inside grammask "
              f"{overhead['inside_cpu']:.1%} CPU ({overhead['inside_wall']:.1%} wall), batch "
              f"{overhead['batch_inside_cpu']:.1%}", flush=True)
    medians = {key: statistics.median(r["overhead"][key] for r in rounds) for key in rounds[0]["overhead"]}
    per_token = {}
    for mode in ("grammask", "xgrammar"):
        n_tokens = sum(r["tokens"][mode] for r in rounds)
        for clock, slot in (("wall", 0), ("cpu", 1)):
            decode = sum(r["seconds"][f"{mode}_twin"][slot] - r["seconds"]["prefill"][slot] for r in rounds)
            extra = sum(r["seconds"][mode][slot] - r["seconds"][f"{mode}_twin"][slot] for r in rounds)
            per_token[f"{mode}_unconstrained_ms_{clock}"] = 1000 * decode / n_tokens
            per_token[f"{mode}_extra_ms_{clock}"] = 1000 * extra / n_tokens
            if mode == "grammask":
                inside = sum(r["seconds"]["grammask_inside"][slot] for r in rounds)
                per_token[f"grammask_inside_ms_{clock}"] = 1000 * inside / n_tokens
    per_step = _per_step()
    results = {"machine": machine_info(), "grammask_module": grammask.__file__, "vllm": vllm.__version__,
               "torch_threads": torch.get_num_threads(),
               "schema": SCHEMA, "prompts": PROMPTS, "temperature": TEMPERATURE, "batch": args.batch,
               "load_average_start": load_start, "load_average_end": os.getloadavg(),
               "per_step": per_step, "median_overhead": medians, "per_token_ms": per_token, "rounds": rounds,
               "samples": rounds[-1]["samples"]}
    print("median overhead per decoded token:",
          ", ".join(f"{key} {value:+.1%}" for key, value in medians.items()))
    print("per step:", ", ".join(f"{key} {value:+.2%}" for key, value in per_step["overhead"].items()))
    write_results(results, args.out)


if __name__ == "__main__":
    main()
