"""Vocabulary from a ``tiktoken.Encoding``, and Mistral's tekken files through tiktoken.

What it computes
    ``vocabulary_from_tiktoken``: tiktoken stores token bytes directly (its
    mergeable ranks are ``bytes -> id``), so each id's bytes are
    ``encoding.decode_single_token_bytes(id)``; ids in no table (cl100k has
    gaps at 100256 and 100261-100275) are unused (None).  Every special token
    (``encoding.special_tokens_set``) is special; its bytes are its spelling.

    ``tekken_encoding`` / ``vocabulary_from_tekken``: a ``tekken*.json`` file
    (mistral-common) lists byte-level BPE ranks (base64 bytes) and a config
    with ``default_vocab_size`` and ``default_num_special_tokens``.  Mistral's
    ids put the special tokens first: id = rank + n_special.  We build a
    tiktoken encoding whose ranks are already shifted by n_special (BPE only
    compares ranks, so a constant shift changes nothing) and whose special
    tokens are ids 0..n_special-1, so ``encoding.encode(text)`` returns
    Mistral's ids directly.  Special names follow mistral-common (``<unk>``,
    ``<s>``, ``</s>``, ``[INST]``, ... then ``<SPECIAL_i>`` fillers) unless the
    file lists its own.  EOS is ``</s>``.

EOS
    ``eos_token_ids=None`` takes every special token whose spelling is in
    ``encodings.END_TOKEN_NAMES``; if there is none, ``VocabularyError``.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any, Optional

from grammask.errors import VocabularyError
from grammask.vocab.encodings import END_TOKEN_NAMES

TEKKEN_DEFAULT_SPECIAL_NAMES = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
"""mistral-common's special tokens for tekken files that do not list their own (ids 0-19)."""


def vocabulary_from_tiktoken(cls: type, encoding: Any, eos_token_ids: Any = None):
    """``Vocabulary.from_tiktoken``: see the module docstring."""
    if not all(hasattr(encoding, name) for name in
               ("decode_single_token_bytes", "encode_single_token", "special_tokens_set", "n_vocab")):
        raise VocabularyError(f"from_tiktoken expects a tiktoken.Encoding, got {type(encoding).__name__}")
    special_tokens = {name: encoding.encode_single_token(name) for name in encoding.special_tokens_set}
    special_names_by_id = {token_id: name for name, token_id in special_tokens.items()}
    token_bytes: list[Optional[bytes]] = [None] * encoding.n_vocab
    for token_id in range(encoding.n_vocab):
        name = special_names_by_id.get(token_id)
        if name is not None:
            token_bytes[token_id] = name.encode("utf-8")
            continue
        try:
            token_bytes[token_id] = encoding.decode_single_token_bytes(token_id)
        except KeyError:
            token_bytes[token_id] = None
    if eos_token_ids is None:
        eos_token_ids = [special_tokens[name] for name in END_TOKEN_NAMES if name in special_tokens]
        if not eos_token_ids:
            raise VocabularyError(
                f"cannot tell the EOS token of tiktoken encoding {encoding.name!r} "
                f"(special tokens: {sorted(special_tokens)[:8]}); pass eos_token_ids=[...]")
    return cls(token_bytes, eos_token_ids, special_tokens.values(), tokenizer=encoding,
               tokenizer_kind="tiktoken")


def tekken_encoding(path: Any, vocab_size: Optional[int] = None) -> Any:
    """A ``tiktoken.Encoding`` over Mistral's ids for a ``tekken*.json`` file.

    ``vocab_size`` defaults to the file's ``config.default_vocab_size``
    (131,072 for ``tekken_240911.json``).
    """
    import tiktoken

    try:
        with open(os.fspath(path), "rb") as file:
            data = json.load(file)
        config = data["config"]
        n_special = int(config["default_num_special_tokens"])
        total = int(vocab_size if vocab_size is not None else config["default_vocab_size"])
        entries = data["vocab"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise VocabularyError(f"{path}: not a readable tekken tokenizer file ({error})") from None
    n_ranks = total - n_special
    if not 0 < n_ranks <= len(entries):
        raise VocabularyError(f"{path}: vocab_size {total} does not fit {len(entries)} ranks "
                              f"+ {n_special} special tokens")
    mergeable_ranks: dict[bytes, int] = {}
    for rank, entry in enumerate(entries[:n_ranks]):
        if entry.get("rank") != rank:
            raise VocabularyError(f"{path}: vocab entry {rank} has rank {entry.get('rank')}",
                                  token_id=rank + n_special)
        mergeable_ranks[base64.b64decode(entry["token_bytes"])] = rank + n_special
    listed = data.get("special_tokens")
    if listed:
        names = {int(item["rank"]): item["token_str"] for item in listed}
    else:
        names = dict(enumerate(TEKKEN_DEFAULT_SPECIAL_NAMES))
    special_tokens = {names.get(token_id, f"<SPECIAL_{token_id}>"): token_id
                      for token_id in range(n_special)}
    return tiktoken.Encoding(name=f"tekken:{os.path.basename(os.fspath(path))}",
                             pat_str=config["pattern"], mergeable_ranks=mergeable_ranks,
                             special_tokens=special_tokens)


def vocabulary_from_tekken(cls: type, path: Any, vocab_size: Optional[int] = None):
    """``Vocabulary.from_tekken``: the tiktoken vocabulary of ``tekken_encoding(path)``, EOS ``</s>``."""
    encoding = tekken_encoding(path, vocab_size)
    if "</s>" not in encoding.special_tokens_set:
        raise VocabularyError(f"{path}: no </s> special token to use as EOS")
    return vocabulary_from_tiktoken(cls, encoding, [encoding.encode_single_token("</s>")])
