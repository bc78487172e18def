"""After a run of spaces, the canonical filter allows every token that some
continuation makes canonical, by the tokenizer's own encode (Llama-3).

Llama-3's pre-tokenizer ends a run of spaces before a non-space with
``\\s+(?!\\S)`` and splits digits from a space, so after the token of 36
spaces a lone space is canonical before a digit (37 spaces + "1" encodes as
36 spaces, a space, "1").  The filter emulates the pattern with the
``regex`` package; a character-class table stored on disk under another
``regex`` release (other Unicode tables), read by a scanner of this one,
once made it forbid that space, so the stored tables are keyed by the
release."""

from __future__ import annotations

import pytest

import grammask

TAILS = ['"', "a", "A", "1", "12", "!", ".", "\n", "\t", "é", "日", "'s", " a", " 1", "  a"]
"""Text after the candidate token; a candidate is canonical when some tail
makes the encode start with the prefix's ids, the run and the candidate."""


@pytest.mark.parametrize("prefix", ['{"_id":"', "x", ""])
@pytest.mark.parametrize("run", [1, 4, 15, 36])
def test_tokens_after_a_space_run_are_allowed_when_some_text_makes_them_canonical(
        llama3_tokenizer, llama3_vocab, prefix, run):
    filter_ = grammask.compile(grammask.Grammar.from_regex(r"[\s\S]*"), llama3_vocab).canonical
    encode = lambda text: llama3_tokenizer.encode(text, add_special_tokens=False).ids  # noqa: E731
    prefix_ids = encode(prefix) if prefix else []
    run_id = llama3_vocab.text_token_id(b" " * run)
    state = filter_.initial_state()
    for token_id in prefix_ids + [run_id]:
        state = filter_.advance(state, token_id)
    checked = 0
    for text in [" ", "  ", ' "', " a", " 1", "1", "a", '"', "\n", " \n"]:
        candidate = llama3_vocab.text_token_id(text.encode())
        canonical = any(encode(prefix + " " * run + text + tail)[:len(prefix_ids) + 2]
                        == prefix_ids + [run_id, candidate] for tail in TAILS)
        if canonical:
            assert filter_.is_allowed(state, candidate), (prefix, run, text)
            checked += 1
    assert checked >= 2


def test_stored_tables_are_keyed_by_the_regex_release(tmp_path, monkeypatch):
    """The character-class table and the pickled backends are found again under
    the same ``regex`` release and never under another one: a table stored by
    another release (other Unicode tables) once made the filter above forbid
    the canonical space."""
    import regex

    from grammask.canonical import factory, pretokenizer

    monkeypatch.setenv("GRAMMASK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GRAMMASK_NO_DISK_CACHE", raising=False)
    pattern = r"\s+(?!\S)|\s+|\p{N}{1,3}"
    pretokenizer.CharClasses(pattern)
    factory._format_version = None
    key = ("digest", 100, frozenset({1}))
    stored = {path.name for path in tmp_path.iterdir()}, factory._cache_path(key)
    pretokenizer.CharClasses(pattern)
    assert ({path.name for path in tmp_path.iterdir()}, factory._cache_path(key)) == stored

    monkeypatch.setattr(regex, "__version__", "0.0.0-another-release")
    pretokenizer._table_version.cache_clear()
    factory._format_version = None
    try:
        pretokenizer.CharClasses(pattern)
        assert len(list(tmp_path.iterdir())) == 2, "a class table of another regex release was read"
        assert factory._cache_path(key) != stored[1]
    finally:
        pretokenizer._table_version.cache_clear()
        factory._format_version = None
