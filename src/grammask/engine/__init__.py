"""The engine: a grammar compiled for a vocabulary, and per-sequence masks over it.

Modules, from the bottom up:

- ``lru``: the thread-safe LRU behind the process-wide caches.
- ``vocab_tables``: what a vocabulary contributes to every grammar (token
  trie, one-byte tokens, canonical filter), built once per vocabulary.
- ``lookahead``: where grammar and tokenizer meet: drops tokens after which
  no canonical token fits the grammar.
- ``compiled``: ``compile()`` and ``CompiledGrammar``, the compile cache, and
  ``clear_caches()``.
- ``logits``: masks out to the model (int32 bitmask rows, ``-inf`` logits).
- ``engine``: ``Engine``, the per-sequence state, and ``Status``.
- ``batch``: ``BatchMasker``, the masks of many engines in one call, on
  helper threads.

Masks are token bitsets (``grammask.bitset``); the mask itself is computed
by the Cython core (``grammask._core.mask_computer``).
"""

from grammask.engine.batch import BatchMasker, fill_next_token_bitmask_batch
from grammask.engine.compiled import CompiledGrammar, clear_caches, compile
from grammask.engine.engine import Engine, Status

__all__ = ["BatchMasker", "CompiledGrammar", "Engine", "Status", "clear_caches", "compile",
           "fill_next_token_bitmask_batch"]
