"""benchmarks/bench_maskbench.py: the stratified sample, the percentiles, and
one end-to-end run of the grammask column over five synthetic MaskBench-shaped
files (one per outcome), so the benchmark keeps working as grammask changes.
The real MaskBench data is not needed here."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_maskbench  # noqa: E402


def test_collection_is_the_prefix_before_the_first_separator():
    assert bench_maskbench.collection("Github_hard---o1.json") == "Github"
    assert bench_maskbench.collection("Kubernetes---kb_1_Normalized.json") == "Kubernetes"
    assert bench_maskbench.collection("JME_51.json") == "JME"


def test_stratified_sample_keeps_every_collection_and_is_fixed_by_the_seed():
    names = [f"Big_{i}.json" for i in range(90)] + [f"Mid---{i}.json" for i in range(9)] + ["Tiny_0.json"]
    sample = bench_maskbench.stratified_sample(names, 10, seed=0)
    assert len(sample) == 10 and len(set(sample)) == 10
    counts = {prefix: sum(name.startswith(prefix) for name in sample) for prefix in ("Big", "Mid", "Tiny")}
    assert counts == {"Big": 8, "Mid": 1, "Tiny": 1}
    assert sample == bench_maskbench.stratified_sample(list(reversed(names)), 10, seed=0)
    assert bench_maskbench.stratified_sample(names, 0) == sorted(names)
    assert bench_maskbench.stratified_sample(names, 500) == sorted(names)


def test_percentiles_show_infinite_values_as_none():
    figures = bench_maskbench.percentiles([1.0, 2.0, 3.0, 4.0, float("inf")], ("p50", "p99"))
    assert figures == {"n": 5, "p50": 3.0, "p99": None, "max": None}
    assert bench_maskbench.percentiles([]) == {"n": 0}


def _write(folder: Path, name: str, schema, tests) -> None:
    (folder / name).write_text(json.dumps({"description": "", "meta": {}, "schema": schema, "tests": tests}))


def test_grammask_column_end_to_end(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    integer_object = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    _write(data, "Alpha_pass.json", integer_object,
           [{"valid": True, "data": {"n": 12}}, {"valid": False, "data": {"n": "x"}}])
    _write(data, "Alpha_invalidation.json", {"type": "string"}, [{"valid": False, "data": "abc"}])
    _write(data, "Beta---validation.json", {"type": "integer"}, [{"valid": True, "data": "x"}])
    _write(data, "Beta---compile.json", {"type": "nonsense"}, [{"valid": True, "data": 1}])
    _write(data, "Gamma_no_tests.json", integer_object, [])
    out = tmp_path / "results.json"
    results = bench_maskbench.main(["--data", str(data), "--engines", "grammask", "--out", str(out)])

    assert json.loads(out.read_text())["config"]["n_schemas"] == 5
    rows = {name: row["grammask"] for name, row in results["schemas"].items()}
    assert rows["Alpha_pass.json"]["outcome"] == "passing"
    assert rows["Alpha_invalidation.json"]["outcome"] == "invalidation_error"
    assert rows["Beta---validation.json"]["outcome"] == "validation_error"
    assert rows["Beta---validation.json"]["first_failure"]["token"] == 0
    assert rows["Beta---compile.json"]["outcome"] == "compile_error"
    assert rows["Gamma_no_tests.json"]["outcome"] == "passing"
    assert rows["Gamma_no_tests.json"]["ttfm_us"] >= rows["Gamma_no_tests.json"]["compile_us"]
    summary = results["summary"]["grammask"]
    assert summary["outcomes"]["passing"] == 2 and summary["outcomes"]["compile_error"] == 1
    # TBM pools every row's masks after the first; TTFM counts the four schemas that compiled
    assert summary["tbm_us"]["wall"]["n"] == sum(row.get("tbm", {}).get("n", 0) for row in rows.values()) > 0
    # the fill alone of the same masks: one per TBM, never longer than accept plus fill
    assert summary["mask_us"]["cpu"]["n"] == summary["tbm_us"]["cpu"]["n"]
    assert summary["mask_us"]["wall"]["max"] <= summary["tbm_us"]["wall"]["max"]
    assert summary["ttfm_us"]["wall"]["n"] == 4 and not math.isnan(summary["ttfm_us"]["wall"]["p50"])
