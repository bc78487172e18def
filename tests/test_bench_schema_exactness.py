"""benchmarks/bench_schema_exactness.py over synthetic MaskBench-shaped files,
one per outcome, so the per-mode and per-keyword tables keep their meaning.
The real MaskBench data is not needed here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_schema_exactness  # noqa: E402

POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
         "required": ["x", "y"], "additionalProperties": False}


def _write(folder: Path, name: str, schema, tests) -> None:
    (folder / name).write_text(json.dumps({"description": "", "schema": schema, "tests": tests}))


def test_outcomes_per_mode_and_keyword(tmp_path):
    _write(tmp_path, "A_pass.json", POINT,
           [{"valid": True, "data": {"x": 1, "y": 2}}, {"valid": False, "data": {"x": 1}}])
    _write(tmp_path, "B_order.json", POINT, [{"valid": True, "data": {"y": 2, "x": 1}}])
    _write(tmp_path, "C_unique.json", {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
           [{"valid": False, "data": ["a", "a"]}])
    _write(tmp_path, "D_refused.json", {"type": "nonsense"}, [{"valid": True, "data": 1}])
    _write(tmp_path, "E_no_tests.json", {"type": "string", "minLength": 2}, [])
    results = bench_schema_exactness.main(["--data", str(tmp_path), "--out", str(tmp_path / "out.json")])
    assert json.loads((tmp_path / "out.json").read_text())["n_schemas"] == 5
    assert results["as_written"]["outcomes"] == {
        "passing": 1, "validation_error": 1, "invalidation_error": 1, "compile_error": 1,
        "no_tests": 1}
    assert results["schema_order"]["outcomes"]["passing"] == 2       # B's members reordered
    assert results["any_order"]["outcomes"]["passing"] == 2          # B accepted as written
    assert results["schema_order"]["invalidation_errors_without_warning"] == []
    assert results["schema_order"]["passing_share_of_tested"] == 0.5
    unique = results["schema_order"]["per_keyword"]["uniqueItems"]
    assert unique["schemas"] == 1 and unique["invalidation_error"] == 1 and unique["warned_for_it"] == 1
    assert results["schema_order"]["per_keyword"]["required"]["schemas"] == 2
    assert set(results["failures"]["as_written"]) == {"B_order", "C_unique", "D_refused"}


def test_keywords_are_found_in_subschemas_only():
    schema = {"properties": {"type": {"oneOf": [{"const": 1}, {"not": {"pattern": "a"}}]}},
              "definitions": {"d": {"uniqueItems": True}}, "title": "minimum"}
    assert bench_schema_exactness.keywords_of(schema) == {
        "properties", "oneOf", "const", "not", "pattern", "uniqueItems"}
