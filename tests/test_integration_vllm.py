"""grammask inside vLLM: several concurrent requests with different JSON
Schemas (plus a regex and an unconstrained request) in one batch of vLLM's
CPU engine on SmolLM2-135M, every constrained output checked by json.loads
and jsonschema (or the regex), members in the schema's order, a request
with the canonical filter on giving exactly the tokenizer's own encoding of
its text, a malformed request refused with grammask's typed error.

vLLM lives in its own environment (its torch pin conflicts with the one the
transformers tests use): ``./run test`` builds it and exports
``GRAMMASK_VLLM_PYTHON`` and ``GRAMMASK_VLLM_MODEL``; this test runs
tests/vllm_env/e2e_requests.py in that interpreter."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

VLLM_PYTHON = os.environ.get("GRAMMASK_VLLM_PYTHON")
VLLM_MODEL = os.environ.get("GRAMMASK_VLLM_MODEL")

pytestmark = pytest.mark.skipif(
    not (VLLM_PYTHON and VLLM_MODEL),
    reason="GRAMMASK_VLLM_PYTHON / GRAMMASK_VLLM_MODEL unset: the vLLM environment is set up by ./run test")

SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 16},
                                      "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "object", "properties": {"city": {"enum": ["Paris", "London", "Rome"]},
                                      "sunny": {"type": "boolean"}},
     "required": ["city", "sunny"], "additionalProperties": False},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 99}, "minItems": 2, "maxItems": 4},
    {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[A-Z]{3}[0-9]{2}$"},
                                      "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]},
                                               "maxItems": 3}},
     "required": ["id", "tags"], "additionalProperties": False},
]
REGEX = r"(yes|no), [0-9]{1,3}"
COMPACT = {"whitespace": "compact"}


def test_concurrent_schemas_in_one_vllm_batch(tmp_path):
    requests = [{"prompt": f"Write JSON for: {json.dumps(schema)}\n", "max_tokens": 80,
                 "grammask": {"json_schema": schema, "options": COMPACT}} for schema in SCHEMAS]
    requests.append({"prompt": "Answer yes or no, then a number:", "max_tokens": 12, "grammask": {"regex": REGEX}})
    requests.append({"prompt": "Tell me about Paris.", "max_tokens": 16, "grammask": None})
    # the same schema twice: one compiled grammar, two engines
    requests.append(dict(requests[0], prompt="A person as JSON:\n"))
    # the canonical filter on request: the output's tokens are the tokenizer's own encoding
    requests.append({"prompt": "A city and the weather as JSON:\n", "max_tokens": 40,
                     "grammask": {"json_schema": SCHEMAS[1], "options": COMPACT, "canonical": True}})
    path = tmp_path / "requests.json"
    path.write_text(json.dumps(requests), encoding="utf-8")
    script = Path(__file__).parent / "vllm_env" / "e2e_requests.py"
    run = subprocess.run([VLLM_PYTHON, str(script), VLLM_MODEL, str(path)], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    outputs = report["outputs"]
    assert len(outputs) == len(requests)
    for request, output in zip(requests, outputs):
        spec = request["grammask"]
        if spec is None:
            assert output["n_tokens"] > 0
            continue
        assert output["finish_reason"] == "stop", output
        if "regex" in spec:
            assert re.fullmatch(spec["regex"], output["text"]), output
        else:
            value = json.loads(output["text"])
            jsonschema.validate(value, spec["json_schema"])
            if isinstance(value, dict):
                # members come in the order of the schema's properties (all required here)
                assert list(value) == list(spec["json_schema"]["properties"]), output
        if spec.get("canonical"):
            ids = output["token_ids"]
            if ids and ids[-1] == output["eos_token_id"]:
                ids = ids[:-1]
            assert ids == output["encoded_ids"], output
    assert report["refused"] is not None, "a malformed grammask entry was accepted"
    assert "exactly one of" in report["refused"]["message"], report["refused"]
