"""Canonicality state for byte-level BPE behind a pre-tokenizer regex (cl100k, Llama-3, Qwen2, tekken, GPT-2).

What it computes
    A token sequence is canonical iff (1) every pre-token boundary of its text
    (``regex.findall(pattern, text)``) is a token boundary and (2) inside each
    pre-token every adjacent pair passes the BPE pair test (``bpe.MergeTable``).
    During generation the text is a prefix, and boundaries near its end depend
    on characters not produced yet (``\\s+(?!\\S)``, greedy ``\\p{L}+``,
    ``\\p{N}{1,3}``...).  The state keeps the *region* since the last boundary
    that no continuation can move, with the token cuts inside it and the pair
    verdict at each cut.  A candidate token is checked by scanning region +
    token + a *probe* continuation (end of text, or one character of each
    character class, see ``pretokenizer``) with the real pattern: it is
    allowed if for some probe every pre-token boundary in the text is a cut,
    and every cut that is not a boundary joins a pair that BPE keeps apart.

    Masks are evaluated by token *shape* (class sequence of the complete
    characters plus trailing incomplete bytes), so one scan decides every
    token of a shape (and every shape whose trailing bytes complete to the
    same character classes); the scan finds boundaries lazily and stops
    past the region; when every continuation starting with a character class
    fixes a boundary at the region's end, all shapes starting with that class
    take their verdict at the start of a text (computed once).  The only
    per-token part is the pair test with the last token
    (``MergeTable.forbidden_after``).  Packed bitsets of the per-region
    verdicts and of the per-last-token pair sets are cached, so a mask is
    ``allowed | (conditional & ~pair_forbidden)`` over ceil(V/32) words.
    For a pattern ``PretokenMachine`` models (every pattern above), the
    region verdicts, single-token verdicts and fresh-start sets are cached
    per region *signature* (the pattern's running threads and best match
    after the region, and the cuts that can still become boundaries): every
    region of one signature gives each token the same verdict, so a new
    region whose signature was seen costs one signature (tens of
    microseconds) instead of a scan per shape and probe; a new signature's
    verdicts come from the automaton's table walked over every shape group
    and probe in compiled code (``_region_scan``, a few hundred
    microseconds at 128k tokens), and kept per signature, so a single
    token's verdict (``token_verdict``, the canonical lookahead's question)
    is a lookup.  The region trim after a token (``_common_boundary``),
    the end-of-text check (``is_complete_text``) and the first characters
    that start a fresh pre-token after a region (``fresh_words``,
    ``fresh_first_bytes``) walk the same table in compiled code too
    (``_region_scan.ScanTable``; the trim and the shortening below in one
    call, ``_region_chain.ChainTable.trimmed``), and the region part of
    ``advance``'s result is memoized per (region, cuts, partial character,
    token shape, pair verdict), so the lookahead's candidates after a region
    seen before cost a lookup whatever the last token.  The regex scans remain for patterns
    without a machine and as the reference the tests compare with.

    Inside a run that fixes no boundary (whitespace holding a newline,
    letters, CJK, punctuation) the region would grow with every token, and
    every step that reads it with the output's length.  After the trim, a
    region of more than ``_SHORTEN_FROM`` characters is replaced by a
    shorter one with the same match chain (``region_chain``: per level of
    the pattern's matches, the automaton state and the pair verdicts of the
    cuts), which gives every token the same verdict; on the patterns above
    every such run keeps 4 characters or fewer, so the states inside a run
    of any length repeat (a few dozen over 2,000 whitespace tokens) and a
    step costs what it costs early in the run.

Data layout
    ``PretokenState`` (frozen, hashable): ``last_id``, ``region`` (class
    representatives since the last fixed boundary, shortened as above: not
    the text itself), ``cuts`` (tuple of
    (offset, pair_ok) strictly inside the region), ``partial`` (bytes of an
    incomplete character at the end), ``partial_cut`` (None if that character
    began inside a token, else the pair verdict at its start).  Shapes:
    ``shape_of_token`` int32[V] (-1 = never allowed: special, unused,
    unreachable, invalid UTF-8, or starting with continuation bytes) into
    ``shapes`` (body, tail); tokens starting with continuation bytes are in
    ``continuation_parts`` {id: (leading continuation bytes, body, tail)}
    (backends pickled with the earlier per-token ``token_split`` list are
    converted on load).

Per-step cost (tekken, 131k tokens)
    A mask for a state whose region and last token were seen before in the
    process is one compiled pass ``allowed | (conditional & ~pair)`` over
    4,096 words; a new last token adds the compiled spine walk
    (``MergeTable.forbidden_words``, about 3-10 us); ``advance`` reads the
    pair verdict as a bit of that cached bitset and the region trim from a
    memo.  A region of a new signature costs the compiled walk (a few
    hundred microseconds); of a pattern without a machine, one scan per
    undecided shape and probe (tens of milliseconds in Python; 256 kept).
    Per-process memos are bounded (``_MEMO_LIMIT`` entries, then cleared).

Invariants and limits
    Exact with respect to the pattern for every continuation among the probes;
    a boundary that only a continuation of two or more further characters
    could produce is not explored (it could only make the filter stricter).
    When the last pre-token continues past the end (no boundary at the end for
    the chosen probe), the existence of a next token that BPE keeps apart
    from the last one is assumed, not checked; ``is_complete_canonical``
    (end-of-text probe) is exact.  Tests compare against the tokenizer's own
    encode on every prefix, on perturbed sequences and on random walks.

Seeds: docs/design.md section 5; Tran-Thien 2024 (docs/references.md)
(Algorithm 3/4); Cognetta and Okazaki (docs/references.md) section 6.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from typing import NamedTuple, Optional, Sequence

import numpy as np

from grammask import bitset
from grammask.canonical._bpe_pairs import code_words, combine_words
from grammask.canonical._region_chain import ChainTable
from grammask.canonical._region_scan import ScanTable, shape_group_verdicts
from grammask.canonical.bpe import MergeTable
from grammask.canonical.pretoken_machine import PretokenMachine
from grammask.canonical.pretokenizer import Scanner, utf8_completion_range
from grammask.canonical.region_chain import shorten

_MEMO_LIMIT = 1 << 14
"""Entries of a per-process memo (region trims, feasibility verdicts) before it is cleared."""

_CLASS_CHARS = 3
"""Characters at the end of a region that ``state_class`` keeps."""

_REGION_WORDS_CACHE = 256
"""Regions (or signatures) whose (allowed, allowed-iff-pair) bitsets, and signatures whose shape
verdicts, are kept (32 KB and one byte per shape each at 131k tokens)."""

_NO_MATCH = object()
"""Marker of 'no probe scanned yet' in ``_common_boundary`` (None means: the pattern found no match)."""

_WALK_AFTER = 3
"""Single-token verdicts asked of one region signature before all its shapes' verdicts are walked."""

_NO_BYTES = bytes(32)
"""The empty byte set (``fresh_first_bytes``)."""

_ABSENT = object()
"""Marker of a key missing from a cache whose values may be None."""

_SHORTEN_FROM = 4
"""Characters of a region (after the trim) past which ``_trimmed`` shortens it to a region with
the same match chain (``region_chain``): regions of ordinary text stay under it."""

_PAIR_WORDS_CACHE = 256
"""Per-last-token pair bitsets kept (16 KB each at 131k tokens)."""

class _Variable:
    def __repr__(self) -> str:
        return "VARIABLE"


_VARIABLE = _Variable()
"""Marker of the cut at the candidate token's start, whose pair verdict is per token."""


class PretokenState(NamedTuple):
    """Immutable, hashable canonicality state (a named tuple: cheap to build, hash and compare)."""
    last_id: int = -1
    region: str = ""
    cuts: tuple = ()
    partial: bytes = b""
    partial_cut: Optional[bool] = None


def _lru_lookup(cache: OrderedDict, key, compute):
    """``cache[key]``, computed by ``compute()`` on a miss (None is a value too), in an
    LRU of ``_REGION_WORDS_CACHE`` entries."""
    found = cache.get(key, _ABSENT)
    if found is _ABSENT:
        found = cache[key] = compute()
        if len(cache) > _REGION_WORDS_CACHE:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return found


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def split_utf8_fragment(data: bytes):
    """(n leading continuation bytes, complete text, trailing incomplete bytes) or None if invalid."""
    lead = 0
    while lead < len(data) and 0x80 <= data[lead] <= 0xBF:
        lead += 1
    if lead > 3:
        return None
    end = len(data)
    tail_start = end
    index = lead
    while index < end:
        length = _utf8_length(data[index])
        if length == 0:
            return None
        if index + length > end:
            tail_start = index
            if any(not 0x80 <= byte <= 0xBF for byte in data[index + 1:]):
                return None
            break
        index += length
    try:
        text = data[lead:tail_start].decode("utf-8")
    except UnicodeDecodeError:
        return None
    tail = data[tail_start:]
    if tail and not _valid_lead(tail):
        return None
    return lead, text, tail


def _valid_lead(tail: bytes) -> bool:
    return utf8_completion_range(tail) is not None


class PretokenizedBPE:
    """The canonicality rules of one byte-level BPE tokenizer with a pre-tokenizer pattern."""

    def __init__(self, merges: MergeTable, pattern: str, vocab_size: int,
                 excluded_ids: Sequence[int] = ()):
        self.merges = merges
        self.scanner = Scanner(pattern)
        self.classes = self.scanner.classes
        self.vocab_size = vocab_size
        self.probes = ("",) + tuple(
            char for index, char in enumerate(self.classes.representatives)
            if index != self.classes.surrogate_class)
        shape_ids: dict = {}
        self.shapes: list = []
        self.shape_of_token = np.full(vocab_size, -1, dtype=np.int32)
        self.continuation_parts: dict = {}
        excluded = set(int(i) for i in excluded_ids)
        token_ids, splits = [], []
        for token_id in range(min(vocab_size, merges.n_tokens)):
            data = merges.token_bytes[token_id]
            if data is None or token_id in excluded or not merges.reachable[token_id]:
                continue
            try:
                split = (0, data.decode("utf-8"), b"")
            except UnicodeDecodeError:
                split = split_utf8_fragment(data)
                if split is None:
                    continue
            token_ids.append(token_id)
            splits.append(split)
        texts = self.classes.represent_many([text for _lead, text, _tail in splits])
        continuation_ids = []
        for token_id, (lead, _text, tail), text in zip(token_ids, splits, texts):
            if lead:
                continuation_ids.append(token_id)
                self.continuation_parts[token_id] = (merges.token_bytes[token_id][:lead], text, tail)
                continue
            key = (text, tail)
            shape_id = shape_ids.get(key)
            if shape_id is None:
                shape_id = shape_ids[key] = len(self.shapes)
                self.shapes.append(key)
            self.shape_of_token[token_id] = shape_id
        self.continuation_ids = np.asarray(continuation_ids, dtype=np.int32)
        self.never_filtered_ids = frozenset(excluded) | frozenset(
            token_id for token_id in range(vocab_size)
            if token_id >= merges.n_tokens or merges.token_bytes[token_id] is None)
        self.n_shapes = len(self.shapes)
        by_first: dict = {}
        for shape_id, (text, _tail) in enumerate(self.shapes):
            by_first.setdefault(text[:1], []).append(shape_id)
        self.shapes_by_first_char = {char: np.asarray(ids, dtype=np.int64) for char, ids in by_first.items()}
        self._reset_caches()
        self._alone_codes = np.zeros(self.n_shapes, dtype=np.int8)
        for groups in self._verdict_groups.values():
            for representative, members in groups:
                text, tail = self.shapes[representative]
                self._alone_codes[members] = self._verdict(PretokenState(), "", text, tail, False)

    def _reset_caches(self) -> None:
        self._shape_index = array("i", self.shape_of_token.astype(np.int32).tobytes())
        self._first_chars = tuple(self.shapes_by_first_char)
        self._first_of_shape = np.zeros(self.n_shapes, dtype=np.int32)
        for index, shape_ids in enumerate(self.shapes_by_first_char.values()):
            self._first_of_shape[shape_ids] = index
        generic = self.classes.generic_representatives
        self._generic_probes = ("",) + tuple(dict.fromkeys(
            generic[index] for index in range(len(generic)) if index != self.classes.surrogate_class))
        self._verdict_groups = self._group_by_verdict()
        self._machine = PretokenMachine.build(self.classes) if self.scanner.restartable else None
        self._probes_by_end: dict = {}
        self._feasible_memo: dict = {}
        self._token_verdict_memo: dict = {}
        self._region_key_memo: dict = {}
        self._pair_ok_memo: dict = {}
        self._trim_memo: dict = {}
        self._shorten_memo: dict = {}
        self._region_step_memo: dict = {}
        self._fresh_memo: dict = {}
        self._fresh_bytes_memo: dict = {}
        self._pair_cache: OrderedDict = OrderedDict()
        self._words_cache: OrderedDict = OrderedDict()
        self._codes_cache: OrderedDict = OrderedDict()
        self._codes_asked: dict = {}
        self._pair_words_cache: OrderedDict = OrderedDict()
        self._no_words = np.zeros(self.n_words, dtype=np.uint32)   # ``allowed_words`` without extra bits

    def __getstate__(self) -> dict:
        """Pickled without the per-process memo tables (the tables of
        ``prepare_for_disk`` stay, when built)."""
        state = dict(self.__dict__)
        for name in ("_shape_index", "_first_chars", "_first_of_shape", "_first_class_ids", "_first_index",
                     "_fresh_memo", "_fresh_bytes_memo", "_generic_probes", "_machine", "_probes_by_end",
                     "_verdict_groups",
                     "_feasible_memo", "_token_verdict_memo", "_region_key_memo", "_pair_ok_memo", "_trim_memo",
                     "_shorten_memo", "_region_step_memo",
                     "_pair_cache",
                     "_compiled_scan_parts", "_chain_table_parts", "_plain_shape_texts",
                     "_words_cache", "_codes_cache", "_codes_asked", "_pair_words_cache",
                     "_continuation_groups", "_no_words"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict) -> None:
        token_split = state.pop("token_split", None)
        if token_split is not None:
            # pickles of the earlier layout kept (lead, body shape, tail) for every token
            state["continuation_parts"] = {
                token_id: (state["merges"].token_bytes[token_id][:split[0]], split[1], split[2])
                for token_id, split in enumerate(token_split) if split is not None and split[0]}
        self.__dict__.update(state)
        self._reset_caches()

    def _probes_after(self, text: str) -> tuple:
        """The probe continuations to scan after ``text`` (class representatives).

        All probes, or only one per generic class when no trigger character
        (``'``) lies within ``literal_window`` characters of the end: there a
        letter-literal class cannot start a literal and scans as its generic
        class (the invariant of ``CharClasses.represent``), so cl100k /
        Llama-3 / Qwen2 scan 7-9 probes instead of 13-16.  Memoized by those
        last characters."""
        window = self.classes.literal_window
        if not window or len(text) < window:
            return self.probes
        end = text[-window:]
        found = self._probes_by_end.get(end)
        if found is None:
            class_of, trigger_class = self.classes.class_of, self.classes.trigger_class
            found = self._probes_by_end[end] = (
                self.probes if any(trigger_class[class_of[ord(char)]] for char in end) else self._generic_probes)
        return found

    def _token_parts(self, token_id: int):
        """(leading continuation bytes, body shape, trailing partial bytes) of a placeable token, else None."""
        shape_id = self._shape_index[token_id]
        if shape_id >= 0:
            text, tail = self.shapes[shape_id]
            return b"", text, tail
        return self.continuation_parts.get(token_id)

    # -- the core check -----------------------------------------------------
    def _feasible(self, region: str, cuts: tuple, tail_classes: Optional[tuple],
                  end_is_cut: bool) -> tuple:
        """(ok whatever the variable cut's pair verdict, ok if that pair holds), over all probes.

        ``cuts``: (offset, verdict) with verdict True/False/_VARIABLE.  With a
        trailing incomplete character (``tail_classes``: its possible classes)
        a boundary at the region's end is a boundary inside a token unless
        ``end_is_cut``.
        """
        key = (region, cuts, tail_classes, end_is_cut)
        found = self._feasible_memo.get(key)
        if found is not None:
            return found
        probes = tail_classes if tail_classes is not None else self._probes_after(region)
        n_region = len(region)
        cut_offsets = {offset for offset, _ in cuts}
        unsure = [(offset, verdict) for offset, verdict in cuts if verdict is not True]
        boundaries_until = self.scanner.boundaries_until
        ok_without = ok_with = False
        for probe in probes:
            feasible = True
            ends = boundaries_until(region + probe, n_region, cut_offsets)
            for boundary in ends:
                if boundary >= n_region:
                    if boundary == n_region and tail_classes is not None:
                        feasible = end_is_cut
                    break
                if boundary not in cut_offsets:
                    feasible = False
                    break
            if not feasible:
                continue
            needs_variable = False
            for offset, verdict in unsure:
                if offset in ends:
                    continue
                if verdict is _VARIABLE:
                    needs_variable = True
                else:
                    feasible = False
                    break
            if not feasible:
                continue
            ok_with = True
            if not needs_variable:
                ok_without = True
                break
        result = (ok_without, ok_with)
        if len(self._feasible_memo) >= _MEMO_LIMIT:
            self._feasible_memo.clear()
        self._feasible_memo[key] = result
        return result

    def _extend(self, state: PretokenState, completed: str, text: str, tail: bytes, starts_mid_char: bool):
        """Region, cuts, trailing partial bytes, partial-char cut flag after appending a token.

        The token's own start cut gets the verdict ``_VARIABLE`` (it is at a
        character boundary only when ``starts_mid_char`` is false).
        """
        region = state.region
        cuts = state.cuts
        if starts_mid_char:
            if state.partial_cut is not None:
                cuts = cuts + ((len(region), state.partial_cut),)
            region = region + completed
            partial = state.partial if not completed else b""
        else:
            if region:
                cuts = cuts + ((len(region), _VARIABLE),)
            partial = b""
        region = region + text
        if starts_mid_char and not completed:
            return region, cuts, state.partial + tail, state.partial_cut
        new_partial = partial + tail
        partial_cut: Optional[bool] = None
        if tail and not text and not starts_mid_char:
            partial_cut = _VARIABLE if region else True
        return region, cuts, new_partial, partial_cut

    def _verdict(self, state: PretokenState, completed: str, text: str, tail: bytes,
                 starts_mid_char: bool) -> int:
        """0 forbidden, 1 allowed iff the pair with the last token holds, 2 allowed."""
        region, cuts, partial, partial_cut = self._extend(state, completed, text, tail, starts_mid_char)
        tail_classes = self.classes.completion_classes(partial) if partial else None
        if partial and tail_classes == ():
            return 0
        end_is_cut = partial_cut is not None
        ok_without, ok_with = self._feasible(region, cuts, tail_classes, end_is_cut)
        if starts_mid_char:
            return 1 if ok_with or ok_without else 0
        if ok_without:
            return 2
        return 1 if ok_with else 0

    def _continuation_parts(self, state: PretokenState, token_id: int):
        """(completed char rep, text rep, tail) for a token continuing ``state.partial``, or None."""
        lead_bytes, text, tail = self._token_parts(token_id)
        return self._continuation_parts_of(state, lead_bytes, text, tail)

    def _continuation_parts_of(self, state: PretokenState, lead_bytes: bytes, text: str, tail: bytes):
        """``_continuation_parts`` for a token of leading continuation bytes ``lead_bytes``, body
        shape ``text`` and trailing partial bytes ``tail``."""
        need = _utf8_length(state.partial[0]) - len(state.partial)
        lead = len(lead_bytes)
        if not text and not tail and lead < need:
            return "", "", lead_bytes
        if lead != need:
            return None
        try:
            completed = (state.partial + lead_bytes).decode("utf-8")
        except UnicodeDecodeError:
            return None
        return self.classes.represent(completed), text, tail

    def _allowed_mask(self, state: PretokenState, pair_forbidden: Optional[np.ndarray]) -> np.ndarray:
        """bool[V]: tokens allowed next; ``pair_forbidden`` = sorted ids failing the pair test with the last token."""
        allowed = np.zeros(self.vocab_size, dtype=bool)
        if state.partial:
            for token_id in self.continuation_ids.tolist():
                parts = self._continuation_parts(state, token_id)
                if parts is not None and self._verdict(state, parts[0], parts[1], parts[2], True):
                    allowed[token_id] = True
            if pair_forbidden is not None:
                allowed[pair_forbidden] = False
            return allowed
        codes = self._shape_codes(state)
        codes = np.concatenate((codes, np.zeros(1, dtype=np.int8)))
        token_codes = codes[self.shape_of_token]
        allowed = token_codes == 2
        conditional = token_codes == 1
        if pair_forbidden is not None:
            conditional[pair_forbidden] = False
        return allowed | conditional

    def _shape_codes(self, state: PretokenState) -> np.ndarray:
        """Verdict (0/1/2) of every shape after ``state`` (no partial character pending).

        Shortcut: when every continuation starting with a character of class c
        puts a fixed set of boundaries on the region, the region's last one at
        its end, a token starting with c begins a fresh pre-token and its
        verdict is its verdict at the start of a text (computed once).
        """
        if not state.region:
            return self._alone_codes
        codes = self._signature_codes(state, self._region_key(state))
        return codes if codes is not None else self._shape_codes_by_scans(state)

    def _known_codes(self, state: PretokenState, key: tuple) -> Optional[np.ndarray]:
        """Every shape's verdict after ``state`` (region key ``key``) when it is cheap to have:
        an empty region's, a signature's already walked, or one asked about for the
        ``_WALK_AFTER``-th time (a walk costs as much as a few single-token scans); else None."""
        if not state.region:
            return self._alone_codes
        if key[0] != "signature":
            return None
        if key not in self._codes_cache:
            asked = self._codes_asked.get(key, 0) + 1
            if asked < _WALK_AFTER:
                if len(self._codes_asked) >= _MEMO_LIMIT:
                    self._codes_asked.clear()
                self._codes_asked[key] = asked
                return None
        return self._signature_codes(state, key)

    def _signature_codes(self, state: PretokenState, key: tuple) -> Optional[np.ndarray]:
        """``_shape_codes_by_table`` of a state whose region key is ``key``, kept per
        signature in an LRU of ``_REGION_WORDS_CACHE`` (a failed walk too, as None):
        a single token's verdict is then one lookup, and a region of a known
        signature never scans."""
        if key[0] != "signature":
            return None
        return _lru_lookup(self._codes_cache, key, lambda: self._shape_codes_by_table(state))

    def _shape_codes_by_table(self, state: PretokenState) -> Optional[np.ndarray]:
        """``_shape_codes`` from the region's ``PretokenMachine`` signature, the automaton's
        table walked in compiled code (``_region_scan``), or None where that does not apply."""
        table = self._machine.table() if self._machine is not None else None
        key = self._region_key(state)
        if table is None or key[0] != "signature":
            return None
        (threads, best_from_end, tail_text), late_cuts, early_cuts_hold = key[1]
        if not early_cuts_hold:
            return np.zeros(self.n_shapes, dtype=np.int8)  # a merged pair that no boundary can split
        index, trans, matched, end_match = table
        groups = self._scan_groups()
        class_of = self.classes.class_of
        out = np.empty(len(groups["end_boundary_ok"]), dtype=np.int8)
        shape_group_verdicts(
            trans, matched, end_match, index[threads],
            np.asarray([class_of[ord(char)] for char in tail_text], dtype=np.int32),
            np.asarray([offset - best_from_end for offset, _ in late_cuts], dtype=np.int32),
            np.asarray([verdict is True for _, verdict in late_cuts], dtype=np.uint8),
            groups["classes"], groups["offsets"], groups["probe_classes"], groups["probe_offsets"],
            groups["end_boundary_ok"], out)
        if (out < 0).any():
            return None
        return out[groups["group_of_shape"]]

    def prepare_for_disk(self) -> None:
        """Build the derived tables the pickle keeps, so a process that loads it does
        not pay for them on first use: ``_scan_groups``' arrays and ``start_byte_rows``
        (5 µs a token: 0.25 s on a 49k vocabulary, once per machine)."""
        self._scan_groups()
        initial, never = self.initial_state(), self.never_filtered_ids
        found = [None if token_id in never else self.fresh_first_bytes(self.advance(initial, token_id))
                 for token_id in range(self.vocab_size)]
        self._start_byte_rows = np.frombuffer(b"".join([row or _NO_BYTES for row in found]),
                                              dtype=np.uint64).reshape(-1, 4).copy()

    def start_byte_rows(self) -> Optional[np.ndarray]:
        """uint64[vocab_size, 4]: row t is ``fresh_first_bytes`` of the state after t
        from ``initial_state()`` (no byte where it cannot tell, nor for the
        never-filtered ids), when ``prepare_for_disk`` built it; else None (the
        filter fills rows on demand, ``CanonicalFilter.start_byte_table``)."""
        return self.__dict__.get("_start_byte_rows")

    def _scan_groups(self) -> dict:
        """The shape groups of ``_verdict_groups`` as flat arrays for ``shape_group_verdicts``:
        each group's class ids, its probes (class ids, -1 for the end of the text: every probe,
        or the classes its trailing incomplete character can complete to), whether a boundary
        at its end is allowed, and each shape's group."""
        groups = self.__dict__.get("_scan_group_arrays")
        if groups is not None:
            return groups
        class_of = self.classes.class_of
        every_probe = [int(class_of[ord(probe)]) if probe else -1 for probe in self.probes]
        classes, offsets, probes, probe_offsets, end_ok = [], [0], [], [0], []
        group_of_shape = np.zeros(self.n_shapes, dtype=np.int32)
        for members in self._verdict_groups.values():
            for representative, member_ids in members:
                text, tail = self.shapes[representative]
                group_of_shape[member_ids] = len(end_ok)
                classes.extend(int(class_of[ord(char)]) for char in text)
                offsets.append(len(classes))
                if tail:
                    probes.extend(int(class_of[ord(char)]) for char in self.classes.completion_classes(tail))
                else:
                    probes.extend(every_probe)
                probe_offsets.append(len(probes))
                end_ok.append(not tail or not text)
        groups = self._scan_group_arrays = {
            "classes": np.asarray(classes, dtype=np.int32), "offsets": np.asarray(offsets, dtype=np.int64),
            "probe_classes": np.asarray(probes, dtype=np.int32),
            "probe_offsets": np.asarray(probe_offsets, dtype=np.int64),
            "end_boundary_ok": np.asarray(end_ok, dtype=np.uint8), "group_of_shape": group_of_shape}
        return groups

    def _shape_codes_by_scans(self, state: PretokenState) -> np.ndarray:
        """``_shape_codes`` by regex scans of region + shape + probe (any restartable pattern)."""
        codes = np.zeros(self.n_shapes, dtype=np.int8)
        region = state.region
        n_region = len(region)
        for first, shape_ids in self.shapes_by_first_char.items():
            fixed = self._fixed_boundaries(region, first)
            if fixed and fixed[-1] == n_region:
                cut_offsets = {offset for offset, _ in state.cuts}
                feasible = all(b in cut_offsets for b in fixed[:-1]) and all(
                    offset in fixed or verdict for offset, verdict in state.cuts)
                if feasible:
                    codes[shape_ids] = self._alone_codes[shape_ids]
                continue
            for representative, members in self._verdict_groups[first]:
                text, tail = self.shapes[representative]
                codes[members] = self._verdict(state, "", text, tail, False)
        return codes

    def _group_by_verdict(self) -> dict:
        """{first character: [(representative shape, int64 shape ids)]}: the shapes of one
        first character grouped by (body, completion classes of the tail).

        ``_verdict`` reads a shape's trailing incomplete bytes only through the
        classes their character can complete to, so a group shares one verdict
        after every state (Qwen2: 989 tail-only shapes fall into 9 groups)."""
        groups: dict = {}
        for first, shape_ids in self.shapes_by_first_char.items():
            by_key: dict = {}
            for shape_id in shape_ids.tolist():
                text, tail = self.shapes[shape_id]
                key = (text, self.classes.completion_classes(tail) if tail else None)
                by_key.setdefault(key, []).append(shape_id)
            groups[first] = [(ids[0], np.asarray(ids, dtype=np.int64)) for ids in by_key.values()]
        return groups

    def _fixed_boundaries(self, region: str, first: str) -> Optional[tuple]:
        """The pre-token boundaries within ``region`` that every continuation
        starting with ``first`` puts there, or None if continuations disagree
        (or ``first`` is empty)."""
        if not first:
            return None
        n_region = len(region)
        boundaries_until = self.scanner.boundaries_until

        def within(text: str) -> list:
            ends = boundaries_until(text, n_region)
            if ends and ends[-1] > n_region:
                ends.pop()
            return ends
        fixed = within(region + first)
        for probe in self._probes_after(region + first):
            if within(region + first + probe) != fixed:
                return None
        return tuple(fixed)

    def token_verdict(self, state: PretokenState, token_id: int) -> int:
        """0 forbidden, 1 allowed iff the pair test holds, 2 allowed."""
        if not 0 <= token_id < self.vocab_size:
            return 0
        token_parts = self._token_parts(token_id)
        if token_parts is None:
            return 0
        if state.partial:
            parts = self._continuation_parts(state, token_id)
            return 0 if parts is None else self._verdict(state, parts[0], parts[1], parts[2], True)
        lead_bytes, text, tail = token_parts
        if lead_bytes:
            return 0
        region_key = self._region_key(state)
        key = (region_key, self._shape_index[token_id])
        found = self._token_verdict_memo.get(key)
        if found is None:
            codes = self._known_codes(state, region_key)
            found = (int(codes[key[1]]) if codes is not None
                     else self._verdict(state, "", text, tail, False))
            if len(self._token_verdict_memo) >= _MEMO_LIMIT:
                self._token_verdict_memo.clear()
            self._token_verdict_memo[key] = found
        return found

    def _advance(self, state: PretokenState, token_id: int, pair_ok: bool,
                 region_part: Optional[tuple] = None) -> PretokenState:
        """The state after ``token_id``; ``pair_ok`` is the pair verdict with
        ``state.last_id``; ``region_part``: ``state``'s fields but ``last_id``
        when the caller has them as a tuple (``advance_all``).

        A token that cannot be placed (special, invalid UTF-8 here) starts afresh.
        The region part of the result (everything but ``last_id``) depends on the
        state's region part, the token's shape (its id for a token starting with
        continuation bytes), ``pair_ok`` and the shortening threshold
        (``_SHORTEN_FROM``, read at each call) only, and is memoized on those
        (``_region_step_memo``, ``_MEMO_LIMIT`` entries, then cleared): the
        canonical lookahead asks for the same whitespace and digit tokens after
        the same few regions at step after step, each time behind another last
        token, which the filter's own (state, token) cache cannot tell apart.
        """
        if not 0 <= token_id < self.vocab_size:
            return PretokenState()
        shape_id = self._shape_index[token_id]
        if region_part is None:
            region_part = (state.region, state.cuts, state.partial, state.partial_cut)
        key = region_part + (shape_id if shape_id >= 0 else -2 - token_id, pair_ok, _SHORTEN_FROM)
        found = self._region_step_memo.get(key)
        if found is None:
            after = self._region_step(state, token_id, pair_ok)
            found = () if after.last_id < 0 else after[1:]
            if len(self._region_step_memo) >= _MEMO_LIMIT:
                self._region_step_memo.clear()
            self._region_step_memo[key] = found
            return after
        return PretokenState(token_id, *found) if found else PretokenState()

    def _region_step(self, state: PretokenState, token_id: int, pair_ok: bool) -> PretokenState:
        """``_advance`` computed: the region appended with the token's text, trimmed and shortened."""
        token_parts = self._token_parts(token_id)
        if token_parts is None:
            return PretokenState()
        if not state.partial:
            # ``_extend`` at a character boundary, with the start cut's verdict resolved
            lead_bytes, text, tail = token_parts
            if lead_bytes:
                return PretokenState()
            region = state.region
            cuts = state.cuts + ((len(region), pair_ok),) if region else state.cuts
            partial_cut = (pair_ok if region else True) if tail and not text else None
            return self._trimmed(token_id, region + text, cuts, tail, partial_cut)
        parts = self._continuation_parts_of(state, *token_parts)
        if parts is None:
            return PretokenState()
        region, cuts, partial, partial_cut = self._extend(state, parts[0], parts[1], parts[2], True)
        if cuts and cuts[-1][1] is _VARIABLE:
            cuts = cuts[:-1] + ((cuts[-1][0], pair_ok),)
        if partial_cut is _VARIABLE:
            partial_cut = pair_ok
        return self._trimmed(token_id, region, cuts, partial, partial_cut)

    def _trimmed(self, last_id: int, region: str, cuts: tuple, partial: bytes,
                 partial_cut: Optional[bool]) -> PretokenState:
        """The state with the region's prefix dropped up to the last boundary every probe agrees on.

        Only the token's own start cut can be ``_VARIABLE`` in ``_extend``'s
        result; states hold resolved verdicts.  Without a partial character, and
        where the pattern has a machine table, the trim and the shortening are
        one compiled call (``_region_chain.ChainTable.trimmed``); the memos and
        scans below are the path it declines and the reference."""
        n_region = len(region)
        if not n_region:
            return PretokenState(last_id, region, cuts, partial, partial_cut)
        if not partial and self._compiled_scans() is not None and self.scanner.restartable:
            found = self._chain_table().trimmed(region, cuts, _SHORTEN_FROM)
            if found is not None:
                return PretokenState(last_id, found[0], found[1], partial, partial_cut)
        key = (region, partial, partial_cut is None)
        cut = self._trim_memo.get(key)
        if cut is None:
            cut = self._common_boundary(region, partial, partial_cut is None)
            if len(self._trim_memo) >= _MEMO_LIMIT:
                self._trim_memo.clear()
            self._trim_memo[key] = cut
        if cut:
            cuts = tuple((offset - cut, verdict) for offset, verdict in cuts if offset > cut)
            if cut == n_region and partial:
                partial_cut = True
            region = region[cut:]
        if len(region) > _SHORTEN_FROM and not partial:
            region, cuts = self._shortened(region, cuts)
        return PretokenState(last_id, region, cuts, partial, partial_cut)

    def _shortened(self, region: str, cuts: tuple) -> tuple:
        """(region, cuts) with the same match chain and as few characters as
        ``region_chain.shorten`` reaches (the input for a pattern without a
        machine table), memoized: inside a run that fixes no boundary the
        region stays a few characters long and its states repeat.  Walked in
        C (``_region_chain.ChainTable.shorten``, the same deletions)."""
        key = (region, cuts)
        found = self._shorten_memo.get(key)
        if found is None:
            compiled = self._compiled_scans()
            if compiled is None or not self.scanner.restartable:
                found = key
            else:
                found = self._chain_table().shorten(region, cuts)
                if found is None:
                    found = shorten(compiled, self._machine.covering, region, cuts)
            if len(self._shorten_memo) >= _MEMO_LIMIT:
                self._shorten_memo.clear()
            self._shorten_memo[key] = found
        return found

    def _common_boundary(self, region: str, partial: bytes, partial_inside: bool) -> int:
        """The last boundary within ``region`` that every probe puts there (0: none).

        Without a pending partial character and for a restartable pattern
        (``Scanner.restartable``: scanning resumes at a match end as on the
        rest of the text alone), the common boundaries are found one match at
        a time: the first match ends where every probe's first match ends, or
        nothing is common; the rest of the region is then a smaller instance
        (memoized like whole regions).  A level whose probes disagree stops
        at the first disagreement, so most trims need a few first-match scans
        instead of a full scan per probe (``_common_boundary_by_scans``, the
        reference, which tests compare it with)."""
        if partial or not self.scanner.restartable:
            return self._common_boundary_by_scans(region, partial, partial_inside)
        compiled = self._compiled_scans()
        if compiled is not None:
            cut = compiled.common_boundary(region)
            if cut >= 0:
                return cut
        cut = 0
        rest = region
        first_end = self.scanner.first_end
        while rest:
            if cut:
                known = self._trim_memo.get((rest, b"", True))
                if known is not None:
                    return cut + known
            agreed = _NO_MATCH
            for probe in self._probes_after(rest):
                end = first_end(rest + probe)
                if agreed is _NO_MATCH:
                    agreed = end
                elif end != agreed:
                    return cut
            if agreed is None or not 0 < agreed <= len(rest):
                return cut
            cut += agreed
            rest = rest[agreed:]
        return cut

    def _compiled_scans(self) -> Optional[ScanTable]:
        """The pattern's ``PretokenMachine`` table with the class of each code point and
        every probe's class id (-1 for the end of the text), as a ``_region_scan.ScanTable``
        for the compiled trim, end check and fresh test, or None when the pattern has no
        machine table."""
        found = self.__dict__.get("_compiled_scan_parts", _ABSENT)
        if found is _ABSENT:
            table = self._machine.table() if self._machine is not None else None
            found = None
            if table is not None:
                class_of = self._machine.class_of
                probes = np.asarray([int(class_of[ord(probe)]) if probe else -1 for probe in self.probes],
                                    dtype=np.int32)
                found = ScanTable(table[1], table[2], table[3], class_of, probes)
            self._compiled_scan_parts = found
        return found

    def _chain_table(self) -> ChainTable:
        """The pattern's ``PretokenMachine`` table and the class of each code point as a
        ``_region_chain.ChainTable`` (callers check ``_compiled_scans()`` first: a machine
        table exists)."""
        found = self.__dict__.get("_chain_table_parts")
        if found is None:
            table = self._machine.table()
            found = self._chain_table_parts = ChainTable(table[1], table[2], self._machine.class_of,
                                                         self._machine.covering, self._compiled_scans())
        return found

    def _common_boundary_by_scans(self, region: str, partial: bytes, partial_inside: bool) -> int:
        """``_common_boundary`` from a full scan of the region followed by each probe.

        With a pending ``partial`` character the probes are its possible
        classes; when it began inside a token (``partial_inside``) a boundary
        at the region's end does not count."""
        n_region = len(region)
        probes = self.classes.completion_classes(partial) if partial else self._probes_after(region)
        common = None
        for probe in probes:
            ends = tuple(b for b in self.scanner.boundaries(region + probe) if b <= n_region)
            if partial and ends and ends[-1] == n_region and partial_inside:
                ends = ends[:-1]
            if common is None:
                common = ends
            else:
                length = 0
                while length < min(len(common), len(ends)) and common[length] == ends[length]:
                    length += 1
                common = common[:length]
            if not common:
                return 0
        return common[-1] if common else 0

    def is_complete_text(self, state: PretokenState) -> bool:
        """The text so far, ended here, is canonically tokenized by these tokens (end-of-text probe)."""
        if state.partial:
            return False
        compiled = self._compiled_scans()
        if compiled is not None:
            verdict = compiled.complete_verdict(state.region, state.cuts)
            if verdict >= 0:
                return bool(verdict)
        boundaries = self.scanner.boundaries(state.region)
        cut_offsets = {offset for offset, _ in state.cuts}
        if any(boundary not in cut_offsets for boundary in boundaries[:-1]):
            return False
        return all(offset in boundaries or verdict for offset, verdict in state.cuts)

    # -- backend protocol (see filter.py) -----------------------------------
    def initial_state(self) -> PretokenState:
        return PretokenState()

    def pair_forbidden(self, last_id: int) -> np.ndarray:
        """Sorted ids failing the pair test after ``last_id`` (LRU-cached)."""
        found = self._pair_cache.get(last_id)
        if found is None:
            found = self.merges.forbidden_after(last_id)
            self._pair_cache[last_id] = found
            if len(self._pair_cache) > 64:
                self._pair_cache.popitem(last=False)
        else:
            self._pair_cache.move_to_end(last_id)
        return found

    def _pair_ok(self, state: PretokenState, token_id: int) -> bool:
        """The pair test of ``state.last_id`` and ``token_id``: a bit of the last token's pair
        bitset when it is cached (every sampled state's is: its mask needs it), else one
        spine-by-spine test (``MergeTable.pair_allowed``, memoized), as the canonical
        lookahead asks a few tokens after each of many hypothetical last tokens."""
        last_id = state.last_id
        if last_id < 0:
            return True
        if not 0 <= token_id < self.vocab_size:
            return False
        words = self._pair_words_cache.get(last_id)
        if words is None and max(last_id, token_id) < self.merges.n_tokens:
            key = (last_id, token_id)
            found = self._pair_ok_memo.get(key)
            if found is None:
                found = self.merges.pair_allowed(last_id, token_id)
                if len(self._pair_ok_memo) >= _MEMO_LIMIT:
                    self._pair_ok_memo.clear()
                self._pair_ok_memo[key] = found
            return found
        if words is None:
            words = self._pair_words(last_id)
        return not bitset.has(words, token_id)

    def advance(self, state: PretokenState, token_id: int) -> PretokenState:
        return self._advance(state, token_id, self._pair_ok(state, token_id))

    def advance_all(self, state: PretokenState, token_ids: list) -> list:
        """``[advance(state, t) for t in token_ids]``, with what the calls
        share read once: the last token's pair bitset when it is cached
        (every sampled state's is) and the region part of the
        ``_region_step_memo`` key.  The canonical lookahead asks it for the
        hundreds of whitespace tokens a mask inside a whitespace run leaves
        to its witness replay."""
        words = None if state.last_id < 0 else self._pair_words_cache.get(state.last_id)
        region_part = (state.region, state.cuts, state.partial, state.partial_cut)
        states = []
        for token_id in token_ids:
            if words is not None and 0 <= token_id < self.vocab_size:
                pair_ok = not bitset.has(words, token_id)
            else:
                pair_ok = self._pair_ok(state, token_id)
            states.append(self._advance(state, token_id, pair_ok, region_part))
        return states

    def _cached_words(self, key: tuple, compute) -> tuple:
        """(allowed words, allowed-iff-pair words) for ``key``, from an LRU of ``_REGION_WORDS_CACHE``."""
        return _lru_lookup(self._words_cache, key, compute)

    def _region_words(self, state: PretokenState) -> tuple:
        """(allowed words, allowed-iff-pair words) of a region without a pending partial character."""
        def compute() -> tuple:
            codes = self._shape_codes(state)
            allowed = np.zeros(self.n_words, dtype=np.uint32)
            conditional = np.zeros(self.n_words, dtype=np.uint32)
            code_words(codes, self.shape_of_token, allowed, conditional)
            return allowed, conditional
        return self._cached_words(self._region_key(state), compute)

    def _region_key(self, state: PretokenState) -> tuple:
        """The verdict caches' key of a state's region and cuts: its ``PretokenMachine`` signature
        (shared by every region that gives each token the same verdict) when there is one."""
        plain = ("region", state.region, state.cuts)
        if self._machine is None:
            return plain
        found = self._region_key_memo.get(plain)
        if found is None:
            signature = self._machine.signature(state.region, state.cuts)
            found = plain if signature is None else ("signature", signature)
            if len(self._region_key_memo) >= _MEMO_LIMIT:
                self._region_key_memo.clear()
            self._region_key_memo[plain] = found
        return found

    def state_class(self, state: PretokenState) -> tuple:
        """The filter's ``state_class``: the region's last ``_CLASS_CHARS``
        characters (as character-class representatives), whether it holds
        token cuts, and the pending partial character.  The pre-tokenizer
        mostly decides the next boundary from the last few characters (a
        whitespace run before structure, a word, digits), so states after
        runs of different lengths meet; the last token, which the pair test
        reads, is left out."""
        return state.region[-_CLASS_CHARS:], bool(state.cuts), state.partial, state.partial_cut

    def _partial_words(self, state: PretokenState) -> tuple:
        """(no words, allowed-iff-pair words) after a pending partial character.

        Continuation tokens are grouped by (leading continuation bytes, body
        shape, tail): one verdict per group (``_continuation_group_ids``)."""
        def compute() -> tuple:
            allowed = np.zeros(self.vocab_size, dtype=bool)
            for (lead_bytes, text, tail), ids in self._continuation_group_ids().items():
                parts = self._continuation_parts_of(state, lead_bytes, text, tail)
                if parts is not None and self._verdict(state, parts[0], parts[1], parts[2], True):
                    allowed[ids] = True
            return np.zeros(self.n_words, dtype=np.uint32), bitset.from_flags(allowed)
        return self._cached_words(self._region_key(state) + (state.partial, state.partial_cut), compute)

    def _continuation_group_ids(self) -> dict:
        """{(leading continuation bytes, body shape, tail): int64 ids} over ``continuation_ids``."""
        groups = self.__dict__.get("_continuation_groups")
        if groups is None:
            by_key: dict = {}
            for token_id in self.continuation_ids.tolist():
                by_key.setdefault(self.continuation_parts[token_id], []).append(token_id)
            groups = self._continuation_groups = {key: np.asarray(ids, dtype=np.int64)
                                                  for key, ids in by_key.items()}
        return groups

    @property
    def n_words(self) -> int:
        return bitset.n_words(self.vocab_size)

    def _pair_words(self, last_id: int) -> np.ndarray:
        """Packed bitset of the ids failing the pair test after ``last_id`` (LRU-cached)."""
        found = self._pair_words_cache.get(last_id)
        if found is None:
            found = self.merges.forbidden_words(last_id, self.n_words)
            self._pair_words_cache[last_id] = found
            if len(self._pair_words_cache) > _PAIR_WORDS_CACHE:
                self._pair_words_cache.popitem(last=False)
        else:
            self._pair_words_cache.move_to_end(last_id)
        return found

    def allowed_words(self, state: PretokenState, extra: Optional[np.ndarray] = None) -> np.ndarray:
        """``allowed_mask`` as a packed uint32 bitset (bit t%32 of word t//32), from cached
        parts, in one compiled pass; ``extra``: bits set in the result as well (the
        filter's never-filtered tokens)."""
        if state.partial:
            allowed, conditional = self._partial_words(state)
        else:
            allowed, conditional = self._region_words(state)
        out = np.empty_like(allowed)
        combine_words(allowed, conditional, None if state.last_id < 0 else self._pair_words(state.last_id),
                      self._no_words if extra is None else extra, out)
        return out

    def fresh_words(self, state: PretokenState) -> Optional[np.ndarray]:
        """Packed bitset of the tokens t with ``advance(state, t) ==
        advance(initial_state(), t)``: every token when the region is empty,
        else the tokens whose first character class fixes a pre-token boundary
        at the region's end for every continuation (the scan restarts there,
        so the cuts before it no longer matter).  None while a character is
        incomplete.  Cached by which first characters are fresh (regions of
        one kind share that, so a new region costs the compiled fresh test
        and no pass over the vocabulary; the canonical lookahead's shortcut)."""
        if state.partial:
            return None
        fresh = np.minimum(self._fresh_by_first(state.region), 1)

        def compute() -> tuple:
            words = np.zeros(self.n_words, dtype=np.uint32)
            # codes are 0 or 1 here, so the words of code 2 stay empty: one array serves both
            code_words(fresh[self._first_of_shape], self.shape_of_token, words, words)
            return words, None
        return self._cached_words(("fresh", fresh.tobytes()), compute)[0]

    def _fresh_by_first(self, region: str) -> np.ndarray:
        """int8 codes in ``shapes_by_first_char`` order: 1 when every continuation of
        ``region`` starting with that character fixes a pre-token boundary at its end
        (``_fixed_boundaries``), 2 when that is the only boundary they fix in it, else 0;
        from the automaton's table in compiled code (``_region_scan.ScanTable``) where
        it decides, else by scans.  Memoized per region."""
        found = self._fresh_memo.get(region)
        if found is not None:
            return found
        firsts = self._first_chars
        fresh = np.zeros(len(firsts), dtype=np.int8)
        compiled = self._compiled_scans()
        if not region:
            fresh[:] = 2
        elif compiled is None or compiled.fresh_first_classes(region, self._first_classes(), fresh) != 0:
            for index, first in enumerate(firsts):
                fixed = self._fixed_boundaries(region, first)
                fresh[index] = 0 if not fixed or fixed[-1] != len(region) else 2 if len(fixed) == 1 else 1
        if len(self._fresh_memo) >= _MEMO_LIMIT:
            self._fresh_memo.clear()
        self._fresh_memo[region] = fresh
        return fresh

    def fresh_first_bytes(self, state: PretokenState) -> Optional[bytes]:
        """The ASCII bytes b (a 32-byte set, ``bitset`` layout) such that every token
        starting with b is fresh after ``state`` and is allowed there exactly when it is
        allowed at the start of a text: b's character fixes a boundary at the region's
        end, the only one it fixes inside the region, and BPE keeps every token pair at
        the region's cuts apart (so the region is tokenized canonically whatever b
        starts; no byte when one of them merges).  The canonical lookahead then decides
        a state from which the grammar allows only such bytes as if the text started
        there.  None while a character is incomplete."""
        if state.partial:
            return None
        if not all(verdict is True for _offset, verdict in state.cuts):
            return _NO_BYTES
        found = self._fresh_bytes_memo.get(state.region)
        if found is None:
            codes = np.append(self._fresh_by_first(state.region), np.int8(0))
            flags = np.zeros(256, dtype=bool)
            flags[:128] = codes[self._first_index_of_ascii()] == 2
            found = np.packbits(flags, bitorder="little").tobytes()
            if len(self._fresh_bytes_memo) >= _MEMO_LIMIT:
                self._fresh_bytes_memo.clear()
            self._fresh_bytes_memo[state.region] = found
        return found

    def complete_after(self, state: PretokenState, token_ids: Sequence[int]) -> Optional[np.ndarray]:
        """int8 per id of ``token_ids``: ``is_complete(advance(state, t))`` as 1 or 0, -1
        where it is not decided here (a token that is not a whole-character shape of
        its own, or the table does not decide); None when nothing is (a pending
        partial character, no compiled table, a pattern that is not restartable).
        One compiled pass (``ScanTable.complete_after``: the appended text, the start
        cut with its pair verdict read off the last token's pair bitset, the trim, the
        end check) instead of a state per token."""
        compiled = self._compiled_scans()
        if state.partial or compiled is None or not self.scanner.restartable:
            return None
        # per shape (not per token: a few thousand entries), the last one for "no shape"
        plain = self.__dict__.get("_plain_shape_texts")
        if plain is None:
            plain = self._plain_shape_texts = [text if text and not tail else None
                                               for text, tail in self.shapes] + [None]
        ids = np.asarray(token_ids, dtype=np.int64)
        in_range = (ids >= 0) & (ids < self.vocab_size)
        shape_ids = np.where(in_range, self.shape_of_token[np.where(in_range, ids, 0)], -1)
        out = np.full(len(ids), -1, dtype=np.int8)
        texts, positions, chosen = [], [], []
        for position, (token_id, shape_id) in enumerate(zip(ids.tolist(), shape_ids.tolist())):
            text = plain[shape_id]
            if text is not None:
                texts.append(text)
                positions.append(position)
                chosen.append(token_id)
        if not texts:
            return out
        chosen = np.asarray(chosen, dtype=np.int64)
        if state.last_id < 0:
            holds = np.ones(len(chosen), dtype=np.uint8)
        else:
            words = self._pair_words(state.last_id)
            holds = ((words[chosen >> 5] >> (chosen & 31).astype(np.uint32)) & 1 == 0).astype(np.uint8)
        found = np.empty(len(chosen), dtype=np.int8)
        compiled.complete_after(state.region, state.cuts, texts, holds, found)
        out[positions] = found
        return out

    def _first_index_of_ascii(self) -> np.ndarray:
        """int64[128]: per ASCII byte, the index in ``_first_chars`` of its class, or
        ``len(_first_chars)`` when no shape starts with that class."""
        found = self.__dict__.get("_first_index")
        if found is None:
            index_of_class = {int(class_id): index for index, class_id in enumerate(self._first_classes())
                              if class_id >= 0}
            class_of = self.classes.class_of
            found = self._first_index = np.asarray(
                [index_of_class.get(int(class_of[byte]), len(self._first_chars)) for byte in range(128)],
                dtype=np.int64)
        return found

    def _first_classes(self) -> np.ndarray:
        """The class id of each of ``_first_chars`` (-1 for the empty text of tail-only shapes)."""
        found = self.__dict__.get("_first_class_ids")
        if found is None:
            class_of = self.classes.class_of
            found = self._first_class_ids = np.asarray(
                [int(class_of[ord(first)]) if first else -1 for first in self._first_chars], dtype=np.int32)
        return found

    def allowed_mask(self, state: PretokenState) -> np.ndarray:
        pair_forbidden = self.pair_forbidden(state.last_id) if state.last_id >= 0 else None
        return self._allowed_mask(state, pair_forbidden)

    def is_allowed(self, state: PretokenState, token_id: int) -> bool:
        verdict = self.token_verdict(state, token_id)
        if verdict == 2:
            return True
        return verdict == 1 and self._pair_ok(state, token_id)

    def is_complete(self, state: PretokenState) -> bool:
        return self.is_complete_text(state)
