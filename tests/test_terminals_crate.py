"""The Rust crate's own unit tests (``cargo test --no-default-features`` in
csrc/dfa/), run from pytest so the README's test command covers them too.

They test the table transformations below the Python layer: regex-automata
export (match delay, anchors), trimming, Hopcroft minimization, intersection,
difference, the UTF-8 automaton against ``std::str::from_utf8``, early end,
complement, literal tries and suffix automata against plain Rust references.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

CRATE = pathlib.Path(__file__).resolve().parents[1] / "csrc" / "dfa"


def find_cargo() -> str | None:
    home_cargo = pathlib.Path.home() / ".cargo" / "bin" / "cargo"
    return shutil.which("cargo") or (str(home_cargo) if home_cargo.exists() else None)


def test_cargo_unit_tests_pass():
    cargo = find_cargo()
    if cargo is None:
        pytest.skip("cargo is not installed (it is needed to build grammask anyway)")
    environment = dict(os.environ, CARGO_TARGET_DIR=str(CRATE / "target"))
    completed = subprocess.run(
        [cargo, "test", "--no-default-features", "--locked", "--quiet"],
        cwd=CRATE, env=environment, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    assert "test result: ok" in completed.stdout
