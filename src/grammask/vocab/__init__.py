"""Vocabularies (token id -> exact bytes) from every tokenizer kind, and the token trie.

``Vocabulary`` (vocabulary.py) with its loaders (loaders_hf.py, loaders_tiktoken.py,
loaders_sentencepiece.py, gguf.py, loaders_llama.py) and ``TokenTrie`` (trie.py).
"""

from grammask.vocab.trie import TokenTrie
from grammask.vocab.vocabulary import Vocabulary

__all__ = ["TokenTrie", "Vocabulary"]
