"""Run a batch of requests through vLLM with grammask's logits processor and
report the outputs (run in the vLLM environment; the oracle checks are the
caller's).

What it computes
    ``python e2e_requests.py MODEL_DIR REQUESTS_JSON``: REQUESTS_JSON is a
    list of ``{"prompt", "max_tokens", "grammask"}`` (``grammask`` is the
    request's ``extra_args["grammask"]`` entry, or null for an unconstrained
    request).  All requests go to one ``LLM.generate`` call, so they share
    the batch; one more request with a malformed entry must be refused.
    Prints one JSON object: ``outputs`` (per request: text, finish reason,
    token count) and ``refused`` (the error type and message of the
    malformed request).
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")


def main(model_dir: str, requests_path: str) -> None:
    from vllm import LLM, SamplingParams

    from grammask.integrations.vllm import GrammaskLogitsProcessor

    with open(requests_path, encoding="utf-8") as handle:
        requests = json.load(handle)
    # An explicit KV cache (512 MiB: about 11,000 tokens of this model) instead of a
    # share of RAM: on the CPU backend that share is counted against the process's
    # own RSS, and torch plus the model took more than 10% of a 16 GB node.
    llm = LLM(model=model_dir, dtype="float32", enforce_eager=True, max_model_len=512,
              kv_cache_memory_bytes=512 << 20, logits_processors=[GrammaskLogitsProcessor], seed=0)
    params = [SamplingParams(max_tokens=request["max_tokens"], temperature=0.8, seed=index,
                             extra_args=None if request["grammask"] is None
                             else {"grammask": request["grammask"]})
              for index, request in enumerate(requests)]
    results = llm.generate([request["prompt"] for request in requests], params, use_tqdm=False)
    tokenizer = llm.get_tokenizer()
    outputs = [{"text": result.outputs[0].text, "finish_reason": result.outputs[0].finish_reason,
                "n_tokens": len(result.outputs[0].token_ids),
                "token_ids": list(result.outputs[0].token_ids),
                "encoded_ids": tokenizer.encode(result.outputs[0].text, add_special_tokens=False),
                "eos_token_id": tokenizer.eos_token_id} for result in results]
    try:
        llm.generate(["x"], SamplingParams(max_tokens=4, extra_args={"grammask": {"regex": "a", "gbnf": "b"}}),
                     use_tqdm=False)
        refused = None
    except Exception as error:  # the type is the report: the caller checks it
        refused = {"type": type(error).__name__, "message": str(error)}
    print(json.dumps({"outputs": outputs, "refused": refused}))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: e2e_requests.py MODEL_DIR REQUESTS_JSON")
    main(sys.argv[1], sys.argv[2])
