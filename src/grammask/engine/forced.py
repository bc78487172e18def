"""Forced continuations: the bytes and the tokens every continuation must start with.

What it computes
    ``forced_bytes(engine, max_bytes)``: the longest byte string b such that
    every sentence of the grammar that extends the output so far continues
    with b, found by pushing the one allowed next byte while there is exactly
    one and the output is not complete (a complete output may also end).
    ``forced_tokens(engine, max_tokens)``: the longest token sequence that
    every allowed continuation starts with: while the engine's mask (the
    grammar, and with a canonical filter its verdict and lookahead) holds
    exactly one token and that token is not EOS, that token is forced.  With
    the canonical filter the tokens are what the model's tokenizer would
    produce: a canonical tokenization of any continuation starts with them,
    and the walk stops where the tokenization of the forced text still
    depends on what follows (two tokens, a short one and one reaching past
    the forced bytes, are both allowed).  Without a filter, any
    tokenization is allowed and the walk stops where several tokens spell a
    prefix of the forced bytes, which is nearly always at once.

Data layout
    Both walk a copy of the engine (``Engine.copy``), so the engine itself
    never changes; the result is a list of token ids or a bytes object.

Invariants
    Every forced token is in the mask at its step, so accepting the forced
    tokens in order succeeds and leaves the set of reachable outputs as it
    was (a token forced by a singleton mask is in every allowed
    continuation).  A step that fell back to the grammar mask (no canonical
    continuation, ``stats()["canonical_fallbacks"]``) forces nothing.

Source: MaskBench's "fast-forward" tokens (JSONSchemaBench, Geng et al.,
arXiv:2501.10868); llguidance's ``compute_ff_tokens``; issue "Beyond the peers".
"""

from __future__ import annotations

from grammask import bitset
from grammask._core.logits import allowed_ids
from grammask.errors import InvalidArgument, InvalidArgumentType


def _check_limit(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentType(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise InvalidArgument(f"{name} must be >= 0, got {value}")
    return value


def forced_bytes(engine, max_bytes: int = 256) -> bytes:
    """The bytes every continuation of ``engine``'s output starts with (at
    most ``max_bytes``)."""
    _check_limit(max_bytes, "max_bytes")
    if engine.is_finished():
        return b""
    probe = engine.copy()
    terminals = engine.compiled.token_terminals
    forced = bytearray()
    while len(forced) < max_bytes:
        if probe._recognizer.is_accepting():
            break
        allowed = bitset.byte_set_values(probe._recognizer.allowed_first_bytes())
        if len(allowed) != 1 or (terminals is not None and terminals.stands_for_token(allowed[0])):
            break  # several bytes, or one token terminal: not one forced byte
        probe.try_accept_new_bytes(bytes(allowed))
        forced.append(allowed[0])
    return bytes(forced)


def forced_tokens(engine, max_tokens: int = 64) -> list[int]:
    """The token ids every allowed continuation of ``engine``'s output starts
    with (at most ``max_tokens``; EOS never included)."""
    _check_limit(max_tokens, "max_tokens")
    eos = set(engine.compiled.vocab.eos_token_ids)
    probe = engine.copy()
    forced: list[int] = []
    while len(forced) < max_tokens and not probe.is_finished():
        fallbacks = probe._stats["canonical_fallbacks"]
        allowed = allowed_ids(probe._current_bits(), engine.compiled.vocab.size)
        if len(allowed) != 1 or int(allowed[0]) in eos:
            break
        if probe._stats["canonical_fallbacks"] != fallbacks:
            break
        token_id = int(allowed[0])
        probe.try_accept_new_token(token_id)
        forced.append(token_id)
    return forced
