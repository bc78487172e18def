"""The canonical lookahead's compiled sort of candidates by what the grammar allows after them.

``_core.candidate_states.probe_next_bytes`` probes each candidate once in
byte order and sorts it: refused by the grammar, not narrow after it, or
narrow, with the bytes the grammar allows after it and whether it accepts
there (for those the lookahead then asks the filter's batched end check,
``CanonicalFilter.complete_after``, tested against tiktoken's encode in
``test_canonical_complete_after.py``).  Checked here against the same
questions asked one probe at a time through the recognizer's Python API
(``push_probe``, ``next_bytes``, ``is_accepting``) on every token of masks
along a JSON text, its trailing whitespace included, and on tokens the
grammar refuses.
"""

from __future__ import annotations

import numpy as np

import grammask
from grammask.bitset import set_bit_ids
from grammask.grammar import builtin


def test_probe_next_bytes_sorts_as_the_probes_say(cl100k_vocab):
    from grammask._core.candidate_states import probe_next_bytes
    from grammask._core.mask_computer import next_bytes, pop_probe, push_probe

    compiled = grammask.compile(builtin("json"), cl100k_vocab, grammask.Config(canonical=False))
    token_bytes = cl100k_vocab.token_bytes
    rng = np.random.default_rng(11)
    engine = grammask.Engine(compiled)
    counts = {"dead": 0, "wide": 0, "accepting": 0, "other": 0}
    for piece in ['{"', 'key', '": ', '[1', ', 2', ']', ' \n', '}', '  ', '\n\t', '   ']:
        recognizer = engine._recognizer
        allowed = [t for t in set_bit_ids(engine.allowed_bitset()) if token_bytes[t]]
        refused = [t for t in rng.choice(len(token_bytes), size=300, replace=False).tolist() if token_bytes[t]]
        ids = sorted(set(allowed[:4000]) | set(refused), key=token_bytes.__getitem__)
        found = probe_next_bytes(recognizer, np.asarray(ids, dtype=np.int32), token_bytes)
        dead, wide, narrow = [], [], []
        for token_id in ids:
            data = token_bytes[token_id]
            if not push_probe(recognizer, data):
                dead.append(token_id)
                continue
            try:
                byte_set, is_narrow = next_bytes(recognizer, data[-1])
                if is_narrow:
                    narrow.append((token_id, byte_set, recognizer.is_accepting()))
                else:
                    wide.append(token_id)
            finally:
                pop_probe(recognizer, len(data))
        assert found == (dead, wide, narrow, []), piece
        counts["dead"] += len(dead)
        counts["wide"] += len(wide)
        counts["accepting"] += sum(1 for row in narrow if row[2])
        counts["other"] += sum(1 for row in narrow if not row[2])
        engine.try_accept_new_bytes(piece.encode())
    assert all(count > 50 for count in counts.values()), counts
