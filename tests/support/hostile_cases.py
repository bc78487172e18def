"""Hostile inputs: small grammars, schemas, regexes and API calls that once
took minutes or gigabytes, each run in its own process with a time and
memory budget (``run_case``).

Each case is Python source run in a fresh interpreter once grammask is
loaded (its public names and JSON Schema front end; the load is timed
apart, ``run_case``); it ends by assigning ``result`` (anything) or by
raising.  ``expect`` is "result" (must finish without error), the name of
the ``GrammaskError`` subclass it must raise, or "typed" (any
``GrammaskError``).  ``bounded`` is False for a case that still exceeds the
budget: ``benchmarks/bench_hostile.py`` reports it, the tests skip it.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass

TIME_BUDGET_S = 1.0
"""The target: every case ends within this (the tests allow CI noise on top)."""

MEMORY_BUDGET_MB = 500


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    expect: str = "typed"
    bounded: bool = True


def _schema(expression: str) -> str:
    return f"result = grammask.Grammar.from_json_schema({expression})"


CASES = (
    Case("gbnf nullable repeated body", "result = grammask.Grammar.from_gbnf('root ::= (\"a\"?){0,10000}')",
         expect="result"),
    Case("gbnf nested counted repetitions",
         "result = grammask.Grammar.from_gbnf('root ::= ((\"a\"{0,1000}){0,1000}){0,1000}')",
         expect="LimitExceeded"),
    Case("gbnf 900 nested stars, first mask",
         "g = grammask.Grammar.from_gbnf('root ::= ' + '(' * 900 + '\"a\"' + ')*' * 900)\n"
         "v = grammask.Vocabulary([None, b'a', b'aa'], eos_token_ids=[0])\n"
         "result = grammask.Engine(grammask.compile(g, v)).compute_allowed_token_ids()", expect="result"),
    Case("gbnf chain of 20,000 unit rules",
         "text = '\\n'.join(f'r{i} ::= r{i + 1}' for i in range(20000)) + '\\nr20000 ::= \"a\"'\n"
         "result = grammask.Grammar.from_gbnf(text, start='r0')", expect="result"),
    Case("gbnf group nesting 100,000 deep", "result = grammask.Grammar.from_gbnf('root ::= ' + '(' * 100000 + '\"a\"')",
         expect="LimitExceeded"),
    Case("gbnf lone surrogate in a literal", "result = grammask.Grammar.from_gbnf('root ::= \"\\ud800\"')",
         expect="GrammarSyntaxError"),
    Case("regex a{0,105000}", "result = grammask.Grammar.from_regex('a{0,105000}')", expect="LimitExceeded"),
    Case("regex nested counted repetitions", "result = grammask.Grammar.from_regex('((a{0,1000}){0,1000})')",
         expect="LimitExceeded"),
    Case("schema arrays nested 14 deep",
         "s = {'type': 'string'}\nfor _ in range(14): s = {'type': 'array', 'items': s}\n" + _schema("s"),
         expect="result"),
    Case("schema 2,000 optional properties",
         _schema("{'type': 'object', 'properties': {f'p{i}': {'type': 'integer'} for i in range(2000)}}"),
         expect="result"),
    Case("schema 20,000 non-ASCII $defs",
         _schema("{'$defs': {f'd\\u00e9{i}': {'type': 'integer'} for i in range(20000)}, 'type': 'integer'}"),
         expect="result"),
    Case("schema 1,000 non-ASCII $defs in an anyOf",
         "n = 1000\n"
         "defs = {chr(0x4e00 + i): {'type': 'object', 'properties': {f'k{i}': {'type': 'integer'}},\n"
         "                          'additionalProperties': False} for i in range(n)}\n"
         + _schema("{'$defs': defs, 'type': 'array', "
                   "'items': {'anyOf': [{'$ref': '#/$defs/' + name} for name in defs]}}"),
         expect="result"),
    Case("schema enum of 100,000 integers", _schema("{'enum': list(range(100000))}"), expect="result"),
    Case("schema 20,000 required properties",
         _schema("{'type': 'object', 'required': [f'p{i}' for i in range(20000)], "
                 "'properties': {f'p{i}': {'type': 'integer'} for i in range(20000)}}"),
         expect="result"),
    Case("schema 20,000 required random 8-letter names",
         "import random\nrng = random.Random(16)\n"
         "names = [''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(8)) for _ in range(20000)]\n"
         + _schema("{'type': 'object', 'required': names, 'properties': {n: {'type': 'integer'} for n in names}}"),
         expect="result"),
    Case("schema a 30,000-character property name",
         _schema("{'type': 'object', 'properties': {'x' * 30000: {'type': 'integer'}, 'y': {}}}"),
         expect="LimitExceeded"),
    Case("schema nested 5,000 deep",
         "s = {'type': 'string'}\nfor _ in range(5000): s = {'type': 'array', 'items': s}\n" + _schema("s"),
         expect="LimitExceeded"),
    Case("schema text of 100,000 brackets", _schema("'[' * 100000"), expect="LimitExceeded"),
    Case("schema non-finite const", _schema("{'const': float('nan')}"), expect="GrammarError"),
    Case("schema non-finite minimum", _schema("{'type': 'number', 'minimum': float('inf')}"),
         expect="GrammarError"),
    Case("schema integer property key", _schema("{'type': 'object', 'properties': {1: {'type': 'string'}}}"),
         expect="GrammarError"),
    Case("accept 3e9 as bytes",
         "v = grammask.Vocabulary([None, b'a'], eos_token_ids=[0])\n"
         "e = grammask.Engine(grammask.compile(grammask.Grammar.from_regex('a+'), v))\n"
         "result = e.try_accept_new_bytes(3 * 10**9)", expect="InvalidArgumentType"),
    Case("config with a negative limit", "result = grammask.Config(max_rules=-5)", expect="InvalidArgument"),
    Case("gbnf ambiguous 4 rules, mask after 200 bytes",
         "import itertools\n"
         "g = grammask.Grammar.from_gbnf('root ::= s\\ns ::= s s s | s t | t s | \"a\" | w | \"\"\\n'\n"
         "                               't ::= s s | w \"a\" | \"\"\\nw ::= [abc]*')\n"
         "pieces = [bytes(t) for n in range(1, 6) for t in itertools.product(b'abc', repeat=n)][:292]\n"
         "e = grammask.Engine(grammask.compile(g, grammask.Vocabulary([None, *pieces], eos_token_ids=[0])))\n"
         "e.try_accept_new_bytes(b'a' * 200)\n"
         "result = e.compute_allowed_token_ids()", expect="result"),
)

_CHILD = """
import json, sys, time, traceback
import_started_cpu = time.process_time()
import grammask
import grammask.json_schema
for name in grammask.__all__:
    getattr(grammask, name)
import_cpu = time.process_time() - import_started_cpu
code = compile(sys.stdin.read(), "<case>", "exec")
started = time.perf_counter()
started_cpu = time.process_time()
outcome = "result"
try:
    exec(code, {"grammask": grammask})
except grammask.GrammaskError as error:
    outcome = type(error).__name__
except BaseException as error:
    outcome = "untyped:" + type(error).__name__ + ": " + str(error)[:200]
def peak_kb():
    # VmHWM is this program's own peak; ru_maxrss would also count the
    # parent's memory at fork time, which survives exec on Linux.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - started_cpu
print(json.dumps({"outcome": outcome, "seconds": seconds, "cpu_seconds": cpu_seconds,
                  "import_cpu_seconds": import_cpu, "peak_mb": peak_kb() / 1024}))
"""

SAFETY_CAP_BYTES = 4 << 30
"""Address-space cap of a case's process, so a case that still blows up
fails with MemoryError instead of taking the machine down."""


WALL_KILL_FACTOR = 3
"""A case is killed after this many times its CPU allowance in wall seconds:
on a loaded machine a case gets a fraction of a core, so its wall time
exceeds its CPU time."""


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SAFETY_CAP_BYTES, SAFETY_CAP_BYTES))


def run_case(case: Case, timeout_s: float) -> dict:
    """Run ``case`` in a fresh interpreter; returns outcome ("result", an
    error class name, "untyped:...", "timeout" or "crash"), wall and CPU
    seconds of the case's own code (CPU None when the case was killed), the
    CPU seconds of loading grammask before it (``import grammask``, its JSON
    Schema front end and every public name, which loads numpy and the
    extensions: what a service pays once, not per input) and the process's
    peak RSS in MB (the load included).  "timeout": more than ``timeout_s`` CPU seconds, or
    killed after ``WALL_KILL_FACTOR`` times that in wall seconds (plus 10)."""
    started = time.perf_counter()
    try:
        completed = subprocess.run([sys.executable, "-c", _CHILD], input=case.code, capture_output=True,
                                   text=True, timeout=WALL_KILL_FACTOR * timeout_s + 10,
                                   preexec_fn=_cap_memory)
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout", "seconds": round(time.perf_counter() - started, 1), "cpu_seconds": None,
                "peak_mb": None}
    try:
        reported = json.loads(completed.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"outcome": "crash", "seconds": round(time.perf_counter() - started, 1), "cpu_seconds": None,
                "peak_mb": None, "stderr": completed.stderr[-500:]}
    if reported["cpu_seconds"] > timeout_s:
        reported["outcome"] = "timeout"
    return {"outcome": reported["outcome"], "seconds": round(reported["seconds"], 3),
            "cpu_seconds": round(reported["cpu_seconds"], 3),
            "import_cpu_seconds": round(reported["import_cpu_seconds"], 3),
            "peak_mb": round(reported["peak_mb"], 1)}


def as_expected(case: Case, outcome: str) -> bool:
    if case.expect == "typed":
        return not outcome.startswith(("untyped", "timeout", "crash"))
    return outcome == case.expect or (case.expect == "GrammarError" and outcome in (
        "GrammarError", "GrammarSyntaxError", "LimitExceeded", "SchemaUnsupported", "RegexError"))
