"""Masks with the canonical filter by two grammask trees in lockstep, and whether they are the same masks.

What it measures
    The schemas of ``bench_maskbench.py``'s stratified sample (``--sample``,
    ``--seed``; Llama-3 vocabulary, the default ``Config()``, so the canonical
    filter and its lookahead are on), each run by an *old* and a *new*
    interpreter (two virtual environments, each with its own grammask: a
    clean clone's and the working tree's), one after the other, which one
    first alternating per schema, so both see the same load.  Per schema
    and side: the compile, then each valid instance as ``bench_maskbench``
    runs it (compact JSON, the tokenizer's own encode, a fresh ``Engine``,
    its first mask, then accept + ``fill_bitmask`` per token) with the CPU
    time (``process_time_ns``) of every mask after the first, and a sha256
    over every mask row: a change that keeps the masks gives equal digests.
    Each side is one long-lived worker process with its own per-process
    caches (and the vocabulary's shared witnesses), as in
    ``bench_maskbench.py``, warmed up on a small schema.

    Machines here are noisy (the same build's mean mask moves by 30% between
    runs minutes apart); in lockstep both sides see the same minutes, so the
    median per-schema ratio new/old of the mask time is the figure to read
    (repeated runs of one pair of builds still spread by about 5%).  The
    first run after either side's compiled modules were rebuilt starts from
    an empty token-set disk tier (its key hashes those modules) and reads
    slow: run it twice.

Output: per side the masks' count, mean, p50, p90 and p99 (CPU µs), the sum
over the schemas, the median per-schema ratio new/old and the ratio of the
sums, the load average, and the schemas whose digests differ (an exit
status of 1 when any does) or whose outcome differs.

The old and new workers are run by ``_lockstep.py``.

Usage: python benchmarks/bench_canonical_ab.py --old /tmp/clean-venv/bin/python
       [--new PYTHON] [--sample 60] [--seed 0] [--every N]
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import statistics
import sys
import time
import warnings

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _lockstep  # noqa: E402


def worker() -> None:
    """Read schema names from stdin, one a line; answer one JSON line each."""
    import bench_maskbench
    import numpy as np
    import tokenizers

    import grammask

    warnings.simplefilter("ignore")
    tokenizer = tokenizers.Tokenizer.from_file(bench_maskbench.tokenizer_path())
    vocab = grammask.Vocabulary.from_tokenizer(tokenizer)
    config = grammask.Config()
    bits = np.zeros((1, (vocab.size + 31) // 32), dtype=np.int32)
    warm = grammask.compile(grammask.Grammar.from_json_schema(
        {"type": "object", "properties": {"warm": {"type": "boolean"}}}), vocab, config)
    grammask.Engine(warm).fill_bitmask(bits)
    print(json.dumps({"ready": grammask.__file__}), flush=True)
    clock = time.process_time_ns
    for line in sys.stdin:
        document = json.loads((bench_maskbench.DATA / line.strip()).read_text(encoding="utf-8"))
        digest = hashlib.sha256()
        times = []
        try:
            compiled = grammask.compile(grammask.Grammar.from_json_schema(document["schema"]), vocab, config)
            for test in document.get("tests", []):
                if not test["valid"]:
                    continue
                text = json.dumps(test["data"], separators=(",", ":"), ensure_ascii=False)
                engine = grammask.Engine(compiled)
                engine.fill_bitmask(bits)
                digest.update(bits.tobytes())
                for token_id in tokenizer.encode(text, add_special_tokens=False).ids:
                    started = clock()
                    try:
                        engine.try_accept_new_token(token_id)
                    except grammask.TokenRejected:
                        digest.update(b"rejected")
                        break
                    engine.fill_bitmask(bits)
                    times.append((clock() - started) / 1e3)
                    digest.update(bits.tobytes())
        except grammask.GrammaskError as error:
            print(json.dumps({"error": type(error).__name__}), flush=True)
            continue
        print(json.dumps({"times": times, "digest": digest.hexdigest()}), flush=True)


def main(argv=None) -> int:
    args = _lockstep.parse_args(__doc__.splitlines()[0], 60, argv)
    if args.worker:
        worker()
        return 0
    times = {"old": [], "new": []}
    ratios, differ, outcome_differs = [], [], []
    for name, answers in _lockstep.lockstep(__file__, args, _lockstep.schema_names(args)):
        old, new = answers["old"], answers["new"]
        if old.get("error") != new.get("error"):
            outcome_differs.append(name)
        elif "error" not in old:
            if old["digest"] != new["digest"]:
                differ.append(name)
            for side in times:
                times[side].extend(answers[side]["times"])
            if sum(old["times"]) > 0:
                ratios.append(sum(new["times"]) / sum(old["times"]))
    print(f"load average {os.getloadavg()}; {len(ratios)} schemas run by both")
    for side in ("old", "new"):
        ordered = sorted(times[side])
        quantiles = " / ".join(f"{_lockstep.percentile(ordered, q):.0f}" for q in (0.5, 0.9, 0.99))
        print(f"{side}: {len(ordered)} masks, mean {statistics.fmean(ordered) if ordered else 0:.0f} us, "
              f"p50 / p90 / p99 {quantiles} us, sum {sum(ordered) / 1e6:.2f} s (CPU)")
    total_ratio = sum(times["new"]) / sum(times["old"]) if sum(times["old"]) else 0.0
    print(f"median per-schema ratio new/old {statistics.median(ratios) if ratios else 0:.3f}; "
          f"ratio of the sums {total_ratio:.3f}")
    print(f"mask digests differ: {len(differ)} {differ[:5]}; outcomes differ: "
          f"{len(outcome_differs)} {outcome_differs[:5]}")
    return 1 if differ or outcome_differs else 0


if __name__ == "__main__":
    sys.exit(main())
