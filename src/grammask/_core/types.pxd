# cython: language_level=3
"""Named id types of the Cython core, so a signature says which space an
integer indexes.

Every id is a 32-bit signed integer (numpy ``int32`` on the Python side);
-1 means "none" where a field allows it.  Counts and array indices stay
``Py_ssize_t``.

* ``token_id_t``: a vocabulary token, in ``[0, vocab_size)``; bit
  ``token_id % 32`` of word ``token_id // 32`` of a token bitset (see
  ``bitset.pxd``).
* ``node_id_t``: a trie node, its index in DFS preorder, in ``[0, n_nodes)``
  (node 0 is the root); subtree ends are node ids in ``(node, n_nodes]``.
* ``terminal_id_t``: an LNF terminal, in ``[0, n_terminals)``.
* ``state_id_t``: a terminal automaton's state.  For a DFA terminal, a DFA
  state (0 is the dead sink); for a literal, bytes matched + 1 (0 is dead).
  A scan item's ``progress`` is the same space minus one step: 0 = not
  started, else the DFA state or the literal bytes matched.
* ``word_t``: one 32-token word of a token bitset.
"""

from libc.stdint cimport int32_t, uint32_t

ctypedef int32_t token_id_t
ctypedef int32_t node_id_t
ctypedef int32_t terminal_id_t
ctypedef int32_t state_id_t
ctypedef uint32_t word_t
