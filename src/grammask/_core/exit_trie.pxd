# cython: language_level=3
"""Exit tries: the merge of vocabulary subtrees (see exit_trie.pyx)."""

from grammask._core.trie_walk cimport TrieView


cpdef TrieView merge_subtrees(TrieView trie, object exit_nodes, Py_ssize_t vocab_size)
