"""The ``grammask`` command: check, generate (SmolLM2 through llama-cpp-python), bench.

``check`` verdicts are compared with Python ``regex`` and with the
ReferenceRecognizer; ``generate`` output with ``json.loads`` + ``jsonschema``;
the console script itself is run once as a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import regex

from grammask import cli
from grammask.grammar.gbnf import parse_gbnf
from support.ast_reference import ReferenceRecognizer
from support.paths import workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERSON_SCHEMA = os.path.join(ROOT, "examples", "schemas", "person.json")


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_prints_the_normalized_grammar_which_reparses(capsys):
    code, out, err = run_cli(capsys, "check", "--gbnf", 'root ::= "a" [0-9]+ ("x" | "y")?')
    assert code == cli.EXIT_OK and "ok: Grammar(" in err
    import grammask

    again = grammask.Grammar.from_ebnf(out, start="root")
    original = grammask.Grammar.from_gbnf('root ::= "a" [0-9]+ ("x" | "y")?')
    assert again.fingerprint == original.fingerprint


def test_check_syntax_error_has_line_column_and_caret(capsys):
    code, out, err = run_cli(capsys, "check", "--gbnf", 'root ::= "a"\nitem ::= [0-9')
    assert code == cli.EXIT_BAD_INPUT
    assert "line 2" in err and "column" in err and "^" in err
    assert out == ""


@pytest.mark.parametrize("text", ["a1", "a", "ab", "a12x", "", "x1", "a1234567"])
def test_check_membership_matches_python_regex(capsys, text):
    pattern = "a[0-9]{1,5}x?"
    code, out, _ = run_cli(capsys, "check", "--regex", pattern, "--quiet", "--test", text)
    oracle = regex.compile(pattern)
    if oracle.fullmatch(text):
        assert out.startswith("accepted") and code == cli.EXIT_OK
    elif oracle.fullmatch(text, partial=True):
        assert out.startswith("incomplete") and code == cli.EXIT_TEST_FAILED
    else:
        assert out.startswith("rejected") and code == cli.EXIT_TEST_FAILED


def test_check_reads_grammar_files_and_agrees_with_the_reference(capsys):
    path = str(workload("gbnf", "chess.gbnf"))
    reference = ReferenceRecognizer(parse_gbnf(open(path, encoding="utf-8").read()))
    samples = ["1. e4 e5\n2. Nf3 Nc6\n", "1. e4 e5\n", "1. e9 e5\n2. a3 a6\n", "1. O-O Qxd8+\n2. a8=Q b1\n"]
    for sample in samples:
        _, out, _ = run_cli(capsys, "check", "--gbnf", path, "--quiet", "--test", sample)
        data = sample.encode()
        expected = ("accepted" if reference.accepts(data) else
                    "incomplete" if reference.viable_prefix(data) else "rejected")
        assert out.startswith(expected), (sample, out)


def test_schema_must_be_json(capsys):
    code, _, err = run_cli(capsys, "check", "--schema", "{not json")
    assert code == cli.EXIT_BAD_INPUT and "--schema" in err


def test_generate_person_json_with_smollm2(capsys):
    import jsonschema
    code, out, err = run_cli(
        capsys, "generate", "--schema", PERSON_SCHEMA, "--max-tokens", "120", "--timing",
        "--prompt", "Extract the person: Grace Hopper, born 1906 in New York City, was a computer scientist.")
    assert code == cli.EXIT_OK, err
    document = json.loads(out)
    jsonschema.validate(document, json.load(open(PERSON_SCHEMA)))
    for step in ("loading model", "building the vocabulary", "compiling the grammar", "timing",
                 "tokens/s", "grammask masks"):
        assert step in err


def test_generate_with_forced_tokens_reports_them(capsys):
    import jsonschema
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 30},
                                               "age": {"type": "integer"}},
              "required": ["name", "age"], "additionalProperties": False}
    code, out, err = run_cli(
        capsys, "generate", "--schema", json.dumps(schema), "--whitespace", "compact", "--canonical",
        "--force-tokens", "--max-tokens", "40", "--timing", "--prompt", "Alice is 31. As JSON please.")
    assert code == cli.EXIT_OK, err
    jsonschema.validate(json.loads(out), schema)
    forced = regex.search(r"forced tokens +([0-9]+) ", err)
    assert forced and int(forced.group(1)) > 0, err


def test_generate_truncated_output_exits_3(capsys):
    code, out, err = run_cli(capsys, "generate", "--regex", "[a-z]{30}", "--max-tokens", "2", "--quiet",
                             "--prompt", "Write letters.")
    assert code == cli.EXIT_INCOMPLETE
    assert "incomplete" in err and "valid prefix" in err
    text = out.rstrip("\n")
    assert regex.fullmatch("[a-z]{30}", text, partial=True) and not regex.fullmatch("[a-z]{30}", text)


def test_generate_missing_model_is_a_clean_error(capsys, tmp_path):
    code, _, err = run_cli(capsys, "generate", "--regex", "a", "--prompt", "x",
                           "--model", str(tmp_path / "missing.gguf"))
    assert code == cli.EXIT_BAD_INPUT and "model file not found" in err


def test_bench_quick_reports_figures(capsys):
    code, out, _ = run_cli(capsys, "bench", "--repeat", "1", "--json")
    assert code == cli.EXIT_OK
    result = json.loads(out)
    assert result["vocab_size"] == 49152 and result["n_tokens"] > 20
    assert 0 < result["step_median_us"] <= result["step_p99_us"]


def test_console_script_runs():
    executable = shutil.which("grammask")
    command = [executable] if executable else [sys.executable, "-m", "grammask.cli"]
    completed = subprocess.run(command + ["check", "--regex", "[0-9]+", "--quiet", "--test", "123"],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("accepted")
