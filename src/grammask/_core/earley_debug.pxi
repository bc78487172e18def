# Included at module level by earley.pyx: a readable dump of the Earley sets
# (``EarleyRecognizer.debug_sets``), for debugging and golden tests.  Python
# code under the module's directives: no negative indexes (wraparound off).
#
# Layout of the dump, one line each:
#   set <s>[ accepting]                     the sets held, oldest first
#     <A> -> <x> . <B> <y>  (origin <i>)    an item, symbols of its production
#                                           around the dot; a started terminal
#                                           is followed by [<k>/<n> bytes] (k of
#                                           the literal's n bytes matched) or
#                                           [state <q>] (DFA state)
#       ... (Leo top <T>, origin <i>)       an item whose (nt, origin) compaction
#                                           folded to the top of its Leo chain
#     Leo: <A> at <s> => <T> at <i>         a memoized Leo chain: completing A
#                                           with origin s is completing T with
#                                           origin i
# Names: nonterminals from ``lnf.nonterminal_names``; literals as KBNF
# strings; DFA terminals as their KBNF spelling from the DFA's kind and
# source (``#"..."``, ``#e"..."`` early end, ``#ex"..."`` complement,
# ``#substrs"..."``).  Items appear in storage order (scan items first), so
# the dump is deterministic for a given push/pop/compact history.

_DFA_PREFIXES = {"regex": "#", "early_end": "#e", "complement": "#ex", "substrings": "#substrs"}


def _quoted(text):
    out = []
    for char in text:
        if char in '\\"':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif not char.isprintable():
            out.append("\\u{%X}" % ord(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _terminal_labels(lnf):
    """KBNF-like label of every terminal of ``lnf`` (LNF or a test LNF)."""
    offsets = lnf.terminal_literal_offsets
    labels = []
    for t in range(len(lnf.terminal_kinds)):
        if lnf.terminal_dfa_ids[t] < 0:
            raw = bytes(lnf.literal_bytes[offsets[t]:offsets[t + 1]])
            labels.append(_quoted(raw.decode("utf-8", "backslashreplace")))
        else:
            dfa = lnf.dfas[lnf.terminal_dfa_ids[t]]
            labels.append(_DFA_PREFIXES.get(dfa.kind, "#" + dfa.kind) + _quoted(dfa.source))
    return labels


cdef str _debug_sets(EarleyRecognizer self):
    cdef Py_ssize_t s, idx, p, i, t
    cdef Item item
    cdef LeoEntry* entry
    lnf = self.tables.lnf
    names = [str(name) for name in lnf.nonterminal_names]
    terminals = _terminal_labels(lnf)
    symbols = [names[ident] if kind else terminals[ident]
               for kind, ident in zip(lnf.symbol_kinds.tolist(), lnf.symbol_ids.tolist())]
    symbol_offsets = [int(x) for x in lnf.production_symbol_offsets]
    lhs = [int(x) for x in lnf.production_lhs]
    dfa_ids = [int(x) for x in lnf.terminal_dfa_ids]
    symbol_ids = [int(x) for x in lnf.symbol_ids]
    literal_offsets = [int(x) for x in lnf.terminal_literal_offsets]

    leo = {}
    for s in range(self.n_sets):
        if self.set_leo_nts[s] >= 0:
            leo[(s, self.set_leo_nts[s])] = self.set_leo_tops[s]
    for i in range(self.leo_capacity if self.n_leo_entries else 0):
        entry = &self.leo_entries[i]
        s = <Py_ssize_t>(entry.key >> 32)
        if entry.key != -1 and s < self.n_sets and entry.serial == self.set_serials[s]:
            leo[(s, <int32_t>(entry.key & LOW32))] = _pair_key(entry.top_origin, entry.top_nt)

    lines = []
    for s in range(self.n_sets):
        lines.append(f"set {s}" + (" accepting" if self.set_accepting[s] else ""))
        for idx in range(self.set_starts[s], self.set_starts[s + 1]):
            item = self.items[idx]
            p = bisect.bisect_right(symbol_offsets, item.dot) - 1
            after_dot = symbols[item.dot]
            if item.progress != 0:
                t = symbol_ids[item.dot]
                after_dot += (f" [state {item.progress}]" if dfa_ids[t] >= 0
                              else f" [{item.progress}/{literal_offsets[t + 1] - literal_offsets[t]} bytes]")
            parts = (symbols[symbol_offsets[p]:item.dot] + [".", after_dot]
                     + symbols[item.dot + 1:symbol_offsets[p + 1]])
            if item.nt == lhs[p]:
                where = f"(origin {item.origin})"
            else:
                where = f"(Leo top {names[item.nt]}, origin {item.origin})"
            lines.append(f"  {names[lhs[p]]} -> {' '.join(parts)}  {where}")
        for (set_id, nt), top in sorted(leo.items()):
            if set_id == s:
                lines.append(f"  Leo: {names[nt]} at {s} => {names[top & LOW32]} at {top >> 32}")
    return "\n".join(lines) + "\n"
