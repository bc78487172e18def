"""Canonical lookahead: drop tokens after which no canonical token fits the grammar.

What it computes
    The grammar mask G and the canonical filter C are each exact, yet a token
    in G and C can lead into a *joint dead end*: C allows ``t`` (it starts
    many canonical words), the grammar then forces ``rue``, and every token
    spelling ``r...`` after ``t`` is non-canonical because ``true`` is one
    token.  A token t is *alive* after a state if the output may end right
    after it (grammar accepting, tokens canonical as they stand) or some token
    u allowed by both after t is alive in turn.  ``prune`` clears the tokens
    of the current mask that are not alive, looking up to ``max_depth`` tokens
    ahead.

    Checking every token would cost one mask per token.  A joint dead end
    needs the grammar to confine what follows t to a few bytes that the
    tokenizer would have merged into t's spelling, so only *narrow* tokens are
    checked: those after which the grammar allows at most ``NARROW_BYTES``
    distinct next bytes, none of them a space (``_core/narrow.pxd``;
    ``MaskComputer.fill`` reports them in a second bitset: keyword interiors,
    forced separators, fixed counts of digits).  A token after which the
    grammar allows more bytes, or a space (which starts a new pre-token in
    every supported tokenizer), is taken as alive; so is any token reached at
    the depth bound.

    The search looks for a witness cheapest first (``_live_after``): the
    one-byte continuations (searched deeper when narrow), then the *wide*
    continuations of the whole mask (after which the grammar is not narrow,
    so one the filter allows ends the search at once), then the other
    narrow ones.  Some states need a large search: where a
    ``true``/``false`` value begins after flexible whitespace, every
    whitespace token is a candidate and the grammar's whitespace loop is
    searched down to the depth bound for each (about 230,000 work units,
    11 s on Llama-3, when each was searched; witness replays across
    whitespace states of one class, ending where a search from the start of
    a text takes over, now settle it in about 1,700); the budget below cuts
    such a step short.  Looking at wide tokens before the one-byte ones
    instead settled that state in 3,000 units (before those replays) but sends
    number states into a whole keep bitset per candidate (20 s), which the
    budget does not bound; the one-byte-first order is kept.

Bounded work
    One ``prune`` spends at most ``budget`` units
    (``Config.canonical_lookahead_budget``): a node expansion, a witness
    replay or a single ``is_allowed`` query costs one, a whole keep bitset
    ``APPLY_UNITS``.  Past
    the budget the search stops; every verdict reached before stands (and
    stays cached), the candidates not yet decided stay in the mask, and
    ``prune`` says so (the engine counts it in ``stats()["lookahead_cutoffs"]``).
    A kept dead end can later leave a step with no canonical token, which the
    engine reports as a canonical fallback.

Data layout
    Masks are token bitsets (``grammask.bitset``).  One scratch bitset per
    lookahead depth, reused; ``byte_tokens[b]`` is a non-special token
    spelling the single byte b, or -1; the recognizer is probed in place
    (``push_probe`` / ``pop_probe``, no compaction) and always left as it was.
    Verdicts are cached per state after the token: (the recognizer's exact
    ``state_key``, the canonical state, the token's last byte), with the depth
    they were checked to and, when alive, the witness (the tokens after it
    that ended the search), in a bounded FIFO.

Witness replay
    Exact state keys rarely repeat inside one output (each member of an
    object has its own future), so most verdicts would be searched again at
    every value.  Before the key is even computed (it hashes the new Earley
    sets, 60-200 µs on sets of a few hundred items), up to three witnesses
    are replayed: the one found last from the same canonical state and the
    same next allowed bytes (the filter allowed its tokens from there: one
    probe of its bytes), the one found last from a canonical state of the
    same class (``CanonicalFilter.state_class``: for pre-tokenized BPE the
    region's last characters, so the states after whitespace runs of
    different lengths meet), and the one found last anywhere; the filter
    must allow the tokens of the last two from this state as well (checked
    token by token, memoized per (state, rest of the witness)).  Of the
    first two, the one found more recently goes first: where an object's
    member changed, a whitespace token's own witness spells the member
    before, and the class witness found at the current member holds.
    If one still ends the search alive there, the token is alive (every state
    on the path is alive by induction, so the search would find that path or
    another); otherwise nothing is concluded and the search runs.
    A witness may end (``FROM_START``) at a state whose search is the one
    from the start of a text (below): its replay spells only the tokens up
    to there and takes that state's start verdict, kept per state key, so
    the whitespace tokens before a member's name share one search of the
    name per member instead of each replaying (and at a new member failing)
    a witness that spells the name before.  Dead verdicts always come from
    a search.  Witnesses are kept per (state, next bytes) and per (state
    class, next bytes) in bounded FIFOs, and a fresh candidate's also per
    (token, bytes the grammar allowed where it was a candidate), which the
    next mask at such a position replays for all its fresh candidates in
    one compiled pass (``_core.candidate_states.replay_witnesses``).
    Witnesses, the filter's verdicts on their tokens and the canonical
    states after fresh tokens say nothing about a grammar (a replay checks
    the grammar that asks), so they are kept once per vocabulary
    (``grammask.engine.witnesses``) and a grammar compiled later replays
    what earlier ones found: the whitespace runs before a value, the
    separators after one, are searched in the first schema and replayed in
    the next.  ``n_replayed`` counts the replays that held, ``n_replayed_from_start``
    those ending in ``FROM_START``.  The candidates of one mask are probed
    in byte order, each probe extending the previous one by the bytes they
    do not share: the hundreds of whitespace-run tokens a JSON value start
    allows then cost a byte or two of Earley work each instead of their
    whole length.  The candidates are sorted into byte order once per mask
    and every pass keeps that order in what it leaves to the next.
    The candidates the compiled replays leave are decided one by one until a
    search finds a new witness; the rest then go back to the compiled replay
    (``_decide_rest``), where that witness is the one found last.

States searched from the start
    When every byte the grammar allows after a token starts a token that is
    fresh and allowed as at the start of a text
    (``CanonicalFilter.fresh_first_bytes``), the search from there is the one
    from ``initial_state()``: its verdict depends on the Earley state alone
    and is kept per state key in a bounded FIFO (``_alive_from_start``).
    Fresh candidates have a fixed canonical state after them, so their start
    bytes are a per-token table (``CanonicalFilter.start_byte_table``), and a
    mask with ``SETTLE_MIN_CANDIDATES`` of them or more settles them in one
    compiled pass (``_core.candidate_states.settle_from_start``): the ones
    the grammar refuses, is not narrow after, or whose state has a start
    verdict, and one search per new state for the tokens that meet there
    (the thousands of tokens that end a counted string reach one state).
    The pass costs a unit of work per ``SETTLE_IDS_PER_UNIT`` candidates.

Candidates whose search ends at once
    A mask with ``SETTLE_MIN_CANDIDATES`` candidates or more left (fresh
    ones after the passes above, and the others) probes them in one
    compiled pass
    (``_core.candidate_states.probe_next_bytes``): the ones the grammar
    refuses are dead, the ones it is not narrow after alive, and for the
    ones it may end after the filter's end check on the canonical state
    after each is taken in one compiled pass too
    (``CanonicalFilter.complete_after``); the ones complete there are alive.
    In trailing whitespace (the grammar accepts and allows only whitespace)
    every whitespace token is such a candidate at every step; each used to
    cost a canonical state and its end check in Python.  The pass costs a
    unit of work per ``SETTLE_IDS_PER_UNIT`` candidates.

Invariants
    One lock per vocabulary serializes ``prune`` calls of engines on
    several threads (the caches and scratch bitsets are shared by every
    engine of a compiled grammar, the witnesses by every grammar of the
    vocabulary; the work is Python under the GIL anyway).  ``prune`` only clears
    bits of the mask it is given and never clears a token that is alive; if
    every candidate is dead the caller's mask keeps its non-narrow tokens, and
    the engine reports a mask emptied this way as a canonical fallback.

Seeds: docs/design.md section 5 ("Grammar and canonicality together can
dead-end"); Tran-Thien 2024 (docs/references.md) (the tokenizer
automaton intersected with the constraint); Cognetta and Okazaki (docs/references.md)
section 6.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from grammask._core.candidate_bits import (add_ids, bit_ids, clear_dead, has_candidates, in_byte_order,
                                           more_bits_than, split_candidates)
from grammask._core.candidate_states import (kept_fresh_witnesses, probe_next_bytes, replay_witnesses,
                                             settle_from_start)
from grammask._core.mask_computer import next_bytes, pop_probe, push_probe
from grammask.bitset import byte_set_values, byte_set_within, discard
from grammask.engine.witnesses import SharedWitnesses
from grammask.errors import InvalidArgument

__all__ = ["CanonicalLookahead"]

APPLY_UNITS = 64
"""Units charged for one whole keep bitset (``CanonicalFilter.apply``); a
node expansion, a witness replay and a single ``is_allowed`` query cost one."""


SETTLE_MIN_CANDIDATES = 32
"""Candidates of one mask from which ``_settle_from_start``'s and
``_settle_by_next_bytes``' compiled passes run (fewer go one by one, where
witness replays are as cheap)."""

REPLAY_MIN_CANDIDATES = 8
"""Candidates of one mask from which ``_replay_kept_witnesses`` picks and
replays their witnesses in compiled passes (fewer go one by one)."""

REPLAY_ROUNDS = 4
"""Compiled replays of the kept witnesses one mask may add after a search
one by one found a new witness (``_decide_rest``)."""

SETTLE_SAMPLE = 32
"""Fresh candidates (about as many, spread over the byte order) the compiled
pass settles first; it goes on over the rest of the mask's only when it
settled at least half of these."""

SETTLE_IDS_PER_UNIT = 32
"""Candidates the compiled pass settles per unit of work."""

FRESH_WITNESSES_PER_TOKEN = 3
"""Witnesses kept per fresh token whatever the position (``_keep_fresh_witness``)."""

FROM_START = -1
"""Last entry of a witness that ends where the search is the one from the start
of a text (``_alive_from_start``): its replay takes that verdict, kept per
state key, instead of spelling the rest (see "Witness replay")."""

_NO_BYTES = bytes(32)
"""The empty byte set in ``next_bytes``' 32-byte form."""


def _witness_tokens(suffix: tuple) -> tuple:
    """The tokens a witness spells: ``suffix`` itself, or without its last
    entry when that is ``FROM_START`` (callers tell the two apart by identity)."""
    return suffix[:-1] if suffix and suffix[-1] == FROM_START else suffix


def _ranked_witnesses(exact, similar, latest) -> list:
    """The distinct kept witnesses to replay, in order: the one found last
    from the canonical state itself (``exact``) and the one found last from
    a state of its class (``similar``), the more recent first, then the one
    found last anywhere (``latest``); None stands for none kept."""
    if exact is None or (similar is not None and similar[3] > exact[3]):
        exact, similar = similar, exact
    ranked = [] if exact is None else [exact]
    if similar is not None and similar is not exact:
        ranked.append(similar)
    if latest is not None and latest is not exact and latest is not similar:
        ranked.append(latest)
    return ranked


def _probe_to(recognizer, probe: bytes, target: bytes) -> bytes:
    """Moves the recognizer's probe from ``probe`` to ``target`` (bytes on
    top of the same state), popping and pushing only where they differ;
    returns the probe now in place (``target``, or its common prefix with
    ``probe`` when the grammar refuses the rest)."""
    limit = min(len(probe), len(target))
    # the first differing byte, from the highest set bit of the XOR of both prefixes
    difference = int.from_bytes(probe[:limit], "big") ^ int.from_bytes(target[:limit], "big")
    common = limit - ((difference.bit_length() + 7) >> 3)
    if len(probe) > common:
        pop_probe(recognizer, len(probe) - common)
    if len(target) > common and not push_probe(recognizer, target[common:]):
        return target[:common]
    return target


class _BudgetSpent(Exception):
    """Raised inside the search when a ``prune`` call has spent its budget."""


class CanonicalLookahead:
    """Removes joint grammar/canonical dead ends from masks of one compiled grammar."""

    def __init__(self, mask_computer, canonical, token_bytes, byte_tokens, n_words: int,
                 byte_order: tuple, max_depth: int, budget: int, cache_size: int = 1 << 16,
                 shared=None):
        if max_depth < 1:
            raise InvalidArgument("canonical lookahead needs max_depth >= 1")
        self.mask_computer = mask_computer
        self.canonical = canonical
        self.token_bytes = token_bytes
        self.byte_tokens = byte_tokens
        # the vocabulary's ids in the order of their bytes, and its inverse
        # (``VocabularyTables.byte_order`` / ``byte_rank``)
        self._byte_order, self._byte_rank = byte_order
        self.max_depth = max_depth
        self._scratch = [np.zeros(n_words, np.uint32) for _ in range(max_depth)]
        self._narrow_scratch = [np.zeros(n_words, np.uint32) for _ in range(max_depth)]
        self._verdicts: OrderedDict = OrderedDict()
        self._start_verdicts: dict = {}
        self._initial_state = canonical.initial_state()
        self.cache_size = cache_size
        self._fresh_verdicts: OrderedDict = OrderedDict()
        self.fresh_cache_size = 256
        # The witnesses and filter facts (``grammask.engine.witnesses``),
        # shared with the vocabulary's other grammars, and its lock.
        self._shared = shared if shared is not None else SharedWitnesses(cache_size)
        self._lock = self._shared.lock
        self._suffix: tuple = ()
        self.n_replayed = 0
        self.n_replayed_from_start = 0
        # A grammar mask of more than ``max_tested_tokens`` tokens takes the
        # canonical state's whole keep bitset at once; a smaller one has up
        # to ``max_single_tests`` of its tokens tested one by one with
        # ``is_allowed`` (wide ones first) before the keep bitset is taken
        # anyway (a bitset of a known region signature costs about as much
        # as a dozen tests).
        self.max_tested_tokens = 512
        self.max_single_tests = 16
        self.n_checked = 0
        self.budget = budget
        self._work = 0
        self.max_work = 0

    def prune(self, recognizer, canonical_state, bits: np.ndarray, narrow: np.ndarray) -> tuple:
        """Clear from ``bits`` the narrow tokens that are not alive; returns
        how many, and whether the budget cut the search short.

        Candidates whose canonical state afterwards does not depend on
        ``canonical_state`` (``CanonicalFilter.fresh_bitset``) have verdicts
        that depend on the recognizer's state alone: they are kept as two
        bitsets (checked, dead) per recognizer state key, so a repeated
        grammar state costs a compiled pass over the mask
        (``_core.candidate_bits``)."""
        if not has_candidates(bits, narrow):
            return 0, False
        with self._lock:
            self._work = 0
            self._n_removed = 0
            try:
                self._prune_within_budget(recognizer, canonical_state, bits, narrow)
                return self._n_removed, False
            except _BudgetSpent:
                return self._n_removed, True
            finally:
                self.max_work = max(self.max_work, self._work)

    def _spend(self, units: int) -> None:
        """Count ``units`` of work; raise ``_BudgetSpent`` past the budget."""
        self._work += units
        if self._work > self.budget:
            raise _BudgetSpent

    def _prune_within_budget(self, recognizer, canonical_state, bits: np.ndarray, narrow: np.ndarray) -> None:
        """``prune``'s work; ``self._n_removed`` counts cleared tokens as they
        go, so a cutoff keeps every verdict reached before it."""
        fresh = self.canonical.fresh_bitset(canonical_state)
        state_key = entry = None
        if fresh is not None:
            state_key = recognizer.state_key()
            entry = self._fresh_verdicts.get(state_key)
        unknown, others, n_fresh = split_candidates(bits, narrow, fresh, None if entry is None else entry[0])
        if n_fresh:
            self._prune_fresh(recognizer, bits, narrow, fresh, unknown, state_key, entry)
        dead_ids = []
        try:
            others = in_byte_order(others, self._byte_rank, self._byte_order)
            others, probed = self._settle_by_next_bytes(recognizer, canonical_state, others, [], dead_ids)
            self._decide_rest(recognizer, canonical_state, others, [], dead_ids, probed=probed)
        finally:
            for token_id in dead_ids:
                discard(bits, token_id)
            self._n_removed += len(dead_ids)

    def _prune_fresh(self, recognizer, bits: np.ndarray, narrow: np.ndarray, fresh: np.ndarray,
                     candidate_ids: list, state_key: bytes, entry) -> None:
        """Settle the fresh candidates not checked yet (``candidate_ids``)
        and clear the dead ones, from the verdicts kept for the recognizer's
        state key (``entry``: checked and dead bitsets, None when none are
        kept yet), searching the unchecked ones."""
        if entry is None:
            entry = self._fresh_verdicts[state_key] = (np.zeros_like(bits), np.zeros_like(bits))
            if len(self._fresh_verdicts) > self.fresh_cache_size:
                self._fresh_verdicts.popitem(last=False)
        checked, dead = entry
        if not candidate_ids:
            # every one checked before at this state (a repeated grammar state)
            self._n_removed += clear_dead(bits, narrow, fresh, dead)
            return
        decided, dead_ids = [], []
        candidate_ids = in_byte_order(candidate_ids, self._byte_rank, self._byte_order)
        try:
            candidate_ids = self._settle_from_start(recognizer, candidate_ids, decided, dead_ids)
            position = recognizer.allowed_first_bytes()
            candidate_ids = self._replay_fresh_witnesses(recognizer, candidate_ids, position, decided)
            candidate_ids, probed = self._settle_by_next_bytes(recognizer, self._initial_state, candidate_ids,
                                                               decided, dead_ids)
            self._decide_rest(recognizer, None, candidate_ids, decided, dead_ids, position, probed)
        finally:
            add_ids(checked, decided)
            add_ids(dead, dead_ids)
            self._n_removed += clear_dead(bits, narrow, fresh, dead)

    def _keep_fresh_witness(self, token_id: int, position: bytes, suffix: tuple, end_fresh=None) -> None:
        """Keep fresh candidate ``token_id``'s witness ``suffix`` for
        ``_replay_fresh_witnesses``, under (the token, ``position``: the bytes
        the grammar allowed where the token was a candidate, which tells an
        object's member start from the end of its value), and under the
        token alone (the last ``FRESH_WITNESSES_PER_TOKEN`` of different
        bytes found at any position, most recent first, replayed where the
        position has none: a boolean value and a nullable one allow other
        bytes where their whitespace begins): (the token's bytes
        and the witness's, the fresh first bytes of the canonical state after
        them when the witness ends in ``FROM_START`` (else none; 32 bytes,
        ``next_bytes``' form), the witness's token count), in bounded FIFOs.  The token
        is fresh, so the filter's verdicts on the witness and the canonical
        states along it hold after whatever came before.  ``end_fresh``: those
        fresh first bytes when the caller has them."""
        tokens = _witness_tokens(suffix)
        fresh_words = _NO_BYTES if end_fresh is None else end_fresh
        if tokens is not suffix and end_fresh is None:
            fresh_words = self._fresh_bytes_after(self._fresh_after(token_id), tokens)
            if fresh_words is None:
                return
        spelled = b"".join([self.token_bytes[next_id] for next_id in (token_id,) + tokens])
        witness = (spelled, fresh_words, len(tokens))
        shared = self._shared
        shared.keep(shared.fresh, (token_id, position), witness)
        others = [kept for kept in shared.fresh_by_token.get(token_id, ()) if kept[0] != spelled]
        shared.keep(shared.fresh_by_token, token_id, (witness, *others[:FRESH_WITNESSES_PER_TOKEN - 1]))

    def _replay_fresh_witnesses(self, recognizer, candidate_ids: list, position: bytes, decided: list) -> list:
        """Settle the fresh candidates with a witness kept at the same
        ``position``, or else one of the last ``FRESH_WITNESSES_PER_TOKEN``
        kept at any (``_keep_fresh_witness``), in compiled passes
        (``_core.candidate_states.replay_witnesses``; the first pass replays
        each candidate's first witness, the next one the second witness of
        those left, and so on), searching from the start of a text once per
        new state the witnesses ending in ``FROM_START`` meet in (the
        whitespace tokens before an object's member all reach the state after
        its opening quote); appends the ids shown alive to ``decided`` and
        returns the others.  A pass costs one unit of work per
        ``SETTLE_IDS_PER_UNIT`` candidates."""
        by_token = self._shared.fresh_by_token
        ids, witnesses = kept_fresh_witnesses(candidate_ids, position, self._shared.fresh, by_token)
        if not ids:
            return candidate_ids
        settled = set(self._replay_entries(recognizer, ids, witnesses))
        # the tokens left: the other witnesses kept for each, one per pass
        rest = {token_id: [kept for kept in by_token.get(token_id, ()) if kept[0] != witness[0]]
                for token_id, witness in zip(ids, witnesses) if token_id not in settled}
        for round_ in range(FRESH_WITNESSES_PER_TOKEN - 1):
            left = [(token_id, kept[round_]) for token_id, kept in rest.items()
                    if len(kept) > round_ and token_id not in settled]
            if not left:
                break
            settled.update(self._replay_entries(recognizer, [entry[0] for entry in left],
                                                [entry[1] for entry in left]))
        if not settled:
            return candidate_ids
        self.n_replayed += len(settled)
        decided += settled
        return [token_id for token_id in candidate_ids if token_id not in settled]

    def _replay_entries(self, recognizer, ids: list, witnesses: list) -> list:
        """The compiled replay (``_core.candidate_states.replay_witnesses``) of
        ``witnesses`` ((bytes spelled, fresh first bytes at its end, token
        count) each, the candidate's bytes first) for the candidates ``ids``
        (in byte order), then one search from the start of a text per new
        state the ``FROM_START`` ones meet in; returns the ids shown alive."""
        self._spend(1 + len(ids) // SETTLE_IDS_PER_UNIT)
        alive_ids, keyed = replay_witnesses(recognizer, ids, witnesses, self._start_verdicts, self.max_depth - 1)
        groups: dict = {}
        for index, key, left in keyed:
            groups.setdefault((key, left), []).append(index)
        for (_key, left), indices in groups.items():
            if self._start_verdict_after(recognizer, witnesses[indices[0]][0], left):
                self.n_replayed_from_start += len(indices)
                alive_ids += [ids[index] for index in indices]
        return alive_ids

    def _decide_rest(self, recognizer, canonical_state, candidate_ids: list, decided: list, dead_ids: list,
                     position: bytes = b"", probed=None) -> None:
        """Decide the candidates ``candidate_ids`` (in byte order) the passes
        before left: the kept witnesses replayed in compiled passes
        (``_replay_kept_witnesses``), then one by one
        (``_verdicts_in_byte_order``), appending every id to ``decided`` and
        the dead ones to ``dead_ids``.  When a search one by one finds a new
        witness (``SharedWitnesses.serial`` moves) and at least
        ``REPLAY_MIN_CANDIDATES`` candidates are left, they go back to the
        compiled replay, where that witness is the one found last: after a
        number in an array, a kept witness held for 2 of Llama-3's 438
        whitespace tokens, the first search found one (a tab, a comma) and
        the other 435 replayed it one by one in Python.  At most
        ``REPLAY_ROUNDS`` more replays per call, and none after one that
        settled fewer than ``REPLAY_MIN_CANDIDATES``.  ``canonical_state`` None:
        fresh candidates, whose witnesses are kept at ``position`` too
        (``_keep_fresh_witness``); ``probed``: as for
        ``_replay_kept_witnesses``, whose rows of the candidates it leaves
        serve the next replay (the recognizer's state is the same)."""
        rounds = 0
        while True:
            n_given = len(candidate_ids)
            candidate_ids, probed = self._replay_kept_witnesses(recognizer, canonical_state, candidate_ids,
                                                                decided, dead_ids, position, probed)
            if rounds and n_given - len(candidate_ids) < REPLAY_MIN_CANDIDATES:
                rounds = REPLAY_ROUNDS
            serial = self._shared.serial
            n_done = 0
            verdicts = self._verdicts_in_byte_order(recognizer, canonical_state, candidate_ids)
            try:
                for token_id, alive in verdicts:
                    n_done += 1
                    if not alive:
                        dead_ids.append(token_id)
                    elif canonical_state is None and self._suffix:
                        self._keep_fresh_witness(token_id, position, self._suffix)
                    decided.append(token_id)
                    if (self._shared.serial != serial and rounds < REPLAY_ROUNDS
                            and len(candidate_ids) - n_done >= REPLAY_MIN_CANDIDATES):
                        break
                else:
                    return
            finally:
                verdicts.close()
            rounds += 1
            candidate_ids = candidate_ids[n_done:]
            if probed is not None:
                left = set(candidate_ids)
                probed = [row for row in probed if row[0] in left]

    def _replay_kept_witnesses(self, recognizer, canonical_state, candidate_ids: list, decided: list,
                               dead_ids: list, position: bytes = b"", probed=None) -> tuple:
        """``_alive_here``'s witness replay for the candidates of one mask at
        once: one compiled probe of each in byte order
        (``_core.candidate_states.probe_next_bytes``: the ones the grammar
        refuses are dead, the ones it is not narrow after alive), then for
        each narrow one (canonical states after them in one
        ``CanonicalFilter.advance_all``) the witnesses ``_alive_here`` would replay, in its
        order (``_kept_witnesses``), one per round: each round checks the
        filter part of the candidates' next witness from their canonical
        states (``_filter_allows``) and replays them in one compiled pass
        (``_replay_entries``); the next round takes the ones left.  Appends
        the ids shown alive (and the refused ones) to ``decided`` and the
        refused ones to ``dead_ids``; returns (the others: the grammar may end after them, no witness is
        kept, or it does not hold, which the search decides as before; their
        narrow rows, or None when a token without bytes is among them).
        ``canonical_state`` None: fresh candidates, whose witnesses are then
        kept at ``position`` too (``_keep_fresh_witness``).  From
        ``REPLAY_MIN_CANDIDATES`` candidates; the probe costs a unit of work
        per ``SETTLE_IDS_PER_UNIT`` candidates, as the replay does.
        ``probed``: the narrow rows of ``candidate_ids`` when
        ``_settle_by_next_bytes`` or a replay before at this mask probed them
        already (none is dead or wide), in place of a second probe."""
        if len(candidate_ids) < REPLAY_MIN_CANDIDATES:
            return candidate_ids, probed
        token_bytes, canonical, shared = self.token_bytes, self.canonical, self._shared
        self._spend(1 + len(candidate_ids) // SETTLE_IDS_PER_UNIT)
        if probed is None:
            dead, wide, narrow, empty = probe_next_bytes(recognizer, np.asarray(candidate_ids, dtype=np.int32),
                                                         token_bytes)
        else:
            dead, wide, narrow, empty = [], [], probed, []
        decided += dead
        decided += wide
        dead_ids += dead
        pending = []
        rows = [row for row in narrow if not row[2]]
        if canonical_state is None:
            afters = [self._fresh_after(row[0]) for row in rows]
        else:
            afters = canonical.advance_all(canonical_state, [row[0] for row in rows])
        for (token_id, byte_set, _accepting), after in zip(rows, afters):
            exact_key, _class_key, exact, ranked = self._kept_witnesses(after, byte_set)
            if ranked:
                pending.append((token_id, after, exact_key, exact, ranked))
        settled = set(dead)
        settled.update(wide)
        for round_ in range(max((len(row[4]) for row in pending), default=0)):
            ids, witnesses, chosen, left = [], [], {}, []
            for row in pending:
                token_id, after, exact_key, exact, ranked = row
                if len(ranked) <= round_:
                    continue
                left.append(row)
                witness = ranked[round_]
                suffix, data, origin, _serial = witness
                tokens = _witness_tokens(suffix)
                end_fresh = _NO_BYTES
                if origin != after and not self._filter_allows(after, tokens):
                    continue
                if tokens is not suffix:
                    end_fresh = self._fresh_bytes_after(after, tokens)
                    if end_fresh is None:
                        continue
                ids.append(token_id)
                witnesses.append((token_bytes[token_id] + data, end_fresh, len(tokens)))
                chosen[token_id] = (witness, witness is exact, exact_key, end_fresh)
            alive = self._replay_entries(recognizer, ids, witnesses) if ids else []
            for token_id in alive:
                witness, is_exact, exact_key, end_fresh = chosen.pop(token_id)
                if not is_exact:
                    # checked from this canonical state now, so its filter part is known here
                    shared.keep(shared.exact, exact_key, (witness[0], witness[1], exact_key[0], witness[3]))
                if canonical_state is None and witness[0]:
                    self._keep_fresh_witness(token_id, position, witness[0], end_fresh)
            self.n_replayed += len(alive)
            decided += alive
            settled.update(alive)
            pending = [row for row in left if row[0] not in settled] if alive else left
        return ([token_id for token_id in candidate_ids if token_id not in settled],
                None if empty else [row for row in narrow if row[0] not in settled])

    def _settle_by_next_bytes(self, recognizer, canonical_state, candidate_ids: list, decided: list,
                              dead_ids: list) -> tuple:
        """Settle the candidates whose search ends at once (``_ends_alive``) in
        compiled passes: one probe of each in byte order
        (``_core.candidate_states.probe_next_bytes``: the grammar refuses it,
        is not narrow after it, or may end after it), then for the last kind
        the filter's end check on the canonical state after each
        (``CanonicalFilter.complete_after`` from ``canonical_state``; for fresh
        candidates the initial state, whose state after them is theirs from
        anywhere).  Appends the settled ids to ``decided`` (and the refused
        ones to ``dead_ids``); the others are left to the search.  It
        runs only where the filter has a batched end check from
        ``canonical_state`` (not SentencePiece's, nor after a partial
        character: there its probes would only be repeated).  Outside
        trailing whitespace (an object's whitespace runs) it settles fewer and
        the search probes the rest again; skipping it wherever the grammar
        does not accept before the candidates cost more than it saved on
        cl100k and Llama-3 (random generations: the candidates that end a
        top-level value).  No
        verdict or witness is kept for the settled ones, as none is where the
        search ends at once.  From ``SETTLE_MIN_CANDIDATES`` candidates; a
        pass costs one unit of work per ``SETTLE_IDS_PER_UNIT`` of them.
        Returns (the ids left, their narrow rows from the probe, which
        ``_replay_kept_witnesses`` takes instead of probing them again; None
        when the pass did not run)."""
        if len(candidate_ids) < SETTLE_MIN_CANDIDATES or self.canonical.complete_after(canonical_state, ()) is None:
            return candidate_ids, None
        self._spend(1 + len(candidate_ids) // SETTLE_IDS_PER_UNIT)
        dead, wide, narrow, empty = probe_next_bytes(recognizer, np.asarray(candidate_ids, dtype=np.int32),
                                                     self.token_bytes)
        accepting = [token_id for token_id, _byte_set, may_end in narrow if may_end]
        decided += dead
        decided += wide
        dead_ids += dead
        settled = set(dead)
        settled.update(wide)
        complete = self.canonical.complete_after(canonical_state, accepting) if accepting else None
        if complete is not None:
            complete_ids = [token_id for token_id, verdict in zip(accepting, complete.tolist()) if verdict == 1]
            decided += complete_ids
            settled.update(complete_ids)
        left = [token_id for token_id in candidate_ids if token_id not in settled]
        # the narrow rows of the ones left, for the witness replay; none when a token without bytes is left
        probed = None if empty else [row for row in narrow if row[0] not in settled]
        return left, probed

    def _settle_from_start(self, recognizer, candidate_ids: list, decided: list, dead_ids: list) -> list:
        """Settle the fresh candidates whose search is the one from the start of
        a text (``_alive_from_start``) in compiled passes
        (``_core.candidate_states.settle_from_start``: the grammar refuses them,
        is not narrow after them, or the state after them has a start verdict),
        searching once for each new state such candidates meet in; appends the
        settled ids to ``decided`` (and ``dead_ids``) and returns the others.
        A sample of about ``SETTLE_SAMPLE`` candidates spread evenly over the
        byte order goes first, and the rest only when at least half of those
        were settled (elsewhere, e.g. the digits of a number member, nearly all
        are left to the search, which would probe them a second time).  Spread,
        not the first ones: where a counted string ends, the 15,000
        three-character tokens of Llama-3 are candidates, and the first ones in
        byte order are punctuation that a closing quote continues, while
        nearly all the rest meet in one state.  A pass costs one unit of work
        per ``SETTLE_IDS_PER_UNIT`` candidates."""
        if len(candidate_ids) < SETTLE_MIN_CANDIDATES:
            return candidate_ids
        stride = max(1, len(candidate_ids) // SETTLE_SAMPLE)
        head = candidate_ids[::stride]
        tail = []
        if stride > 1:
            tail = list(candidate_ids)
            del tail[::stride]   # the ids not in the head, in order
        n_decided = len(decided)
        others = self._settle_part(recognizer, head, decided, dead_ids)
        if others is None:
            return candidate_ids
        if tail and 2 * len(others) <= len(head):
            self._settle_part(recognizer, tail, decided, dead_ids)
        settled = set(decided[n_decided:])
        return [token_id for token_id in candidate_ids if token_id not in settled]

    def _settle_part(self, recognizer, ordered: list, decided: list, dead_ids: list):
        """``_settle_from_start``'s compiled pass over ``ordered`` (ids in byte
        order); returns the ids left to the search, or None when the filter has
        no start bytes."""
        table = self.canonical.start_byte_table(ordered)
        if table is None:
            return None
        self._spend(1 + len(ordered) // SETTLE_IDS_PER_UNIT)
        depth = self.max_depth - 1
        alive_ids, dead_now, keyed, others = settle_from_start(
            recognizer, np.asarray(ordered, dtype=np.int32), self.token_bytes, table[0], table[1],
            self._start_verdicts, depth)
        decided += alive_ids
        decided += dead_now
        dead_ids += dead_now
        self._settle_keyed(recognizer, keyed, depth, decided, dead_ids, others)
        return others

    def _settle_keyed(self, recognizer, keyed: list, depth: int, decided: list, dead_ids: list,
                      others: list) -> None:
        """One search from the start of a text per new state of ``keyed`` ((id,
        state key) pairs), whose verdict every id of that state takes."""
        token_bytes = self.token_bytes
        by_key: dict = {}
        for token_id, key in keyed:
            by_key.setdefault(key, []).append(token_id)
        for group in by_key.values():
            alive = self._start_verdict_after(recognizer, token_bytes[group[0]], depth)
            if alive is None:
                others += group
                continue
            decided += group
            if not alive:
                dead_ids += group

    def _start_verdict_after(self, recognizer, data: bytes, depth: int):
        """``_alive_from_start`` (``depth`` tokens deep) of the state after the
        bytes ``data``, probed and popped; None when the grammar refuses them."""
        if not push_probe(recognizer, data):
            return None
        try:
            byte_set, narrow = next_bytes(recognizer, data[-1])
            return self._alive_from_start(recognizer, byte_set, narrow, depth)
        finally:
            pop_probe(recognizer, len(data))

    def _verdicts_in_byte_order(self, recognizer, canonical_state, token_ids: list):
        """Yields (token id, alive) for ``token_ids`` (in byte order) after the
        current state (``canonical_state`` None: fresh tokens): each token's
        probe extends the previous one by the bytes they do not share
        (whitespace runs, digit groups share most), and is popped at the end."""
        token_bytes = self.token_bytes
        depth = self.max_depth - 1
        probe = b""
        try:
            for token_id in token_ids:
                data = token_bytes[token_id]
                probe = _probe_to(recognizer, probe, data)
                if probe != data:
                    yield token_id, False
                    continue
                after = (self._fresh_after(token_id) if canonical_state is None
                         else self.canonical.advance(canonical_state, token_id))
                yield token_id, self._alive_here(recognizer, after, data[-1], depth)
        finally:
            _probe_to(recognizer, probe, b"")

    def _alive(self, recognizer, canonical_state, token_id: int, depth: int) -> bool:
        """Token ``token_id`` can follow the current state and be continued
        canonically within the grammar (checked ``depth`` more tokens deep;
        see ``_alive_here``)."""
        data = self.token_bytes[token_id]
        if not push_probe(recognizer, data):
            return False
        try:
            return self._alive_here(recognizer, self.canonical.advance(canonical_state, token_id),
                                    data[-1], depth)
        finally:
            pop_probe(recognizer, len(data))

    def _alive_here(self, recognizer, after, last_byte: int, depth: int) -> bool:
        """The recognizer's state, reached by a token ending in ``last_byte``
        with canonical state ``after``, can be continued canonically within
        the grammar (checked ``depth`` more tokens deep).  First the witness
        found last from the same canonical state and the one found last from
        a state of the same class (``CanonicalFilter.state_class``), each
        with the same next allowed bytes, the more recent first, then the
        one found last anywhere, are replayed (``_witness_holds``: one
        probe, cheaper than the recognizer's state key on large Earley
        sets), unless the search would end alive here at once
        (``_ends_alive``); else, where the grammar allows only start bytes
        of ``after`` next, the verdict of the search from the start of a
        text (``_alive_from_start``; the witness is then ``(FROM_START,)``);
        else the verdict, which depends only on this state (the recognizer's
        exact key and the canonical state), is looked up or searched and
        cached.  When alive, ``self._suffix`` is the witness from here."""
        byte_set, narrow = next_bytes(recognizer, last_byte)
        if self._ends_alive(recognizer, after, byte_set, narrow, depth):
            self._suffix = ()
            return True
        shared = self._shared
        exact_key, class_key, exact, ordered = self._kept_witnesses(after, byte_set)
        for witness in ordered:
            if self._witness_holds(recognizer, after, byte_set, narrow, depth, witness):
                self.n_replayed += 1
                self._suffix = witness[0]
                if witness is not exact:
                    # checked from ``after`` now, so its filter part is known here
                    shared.keep(shared.exact, exact_key, (witness[0], witness[1], after, witness[3]))
                return True
        fresh_bytes = self.canonical.fresh_first_bytes(after)
        if fresh_bytes is not None and byte_set_within(byte_set, fresh_bytes):
            alive = self._alive_from_start(recognizer, byte_set, narrow, depth)
            self._suffix = (FROM_START,)
        else:
            key = (recognizer.state_key(), after, last_byte)
            found = self._verdicts.get(key)
            if found is not None and (not found[0] or found[1] >= depth):
                self._suffix = found[2]
                return found[0]
            alive = self._live_after(recognizer, after, byte_set, narrow, depth)
            self._verdicts[key] = (alive, depth, self._suffix if alive else None)
            if len(self._verdicts) > self.cache_size:
                self._verdicts.popitem(last=False)
        if alive:
            shared.serial += 1
            witness = (self._suffix, b"".join([self.token_bytes[next_id] for next_id in self._suffix
                                               if next_id != FROM_START]), after, shared.serial)
            shared.keep(shared.exact, exact_key, witness)
            shared.keep(shared.by_class, class_key, witness)
            shared.latest = witness
        return alive

    def _kept_witnesses(self, after, byte_set: bytes) -> tuple:
        """(exact key, class key, the witness kept under the exact key or
        None, the distinct kept witnesses to replay from canonical state
        ``after`` with next bytes ``byte_set``, in order): the ones found last
        from ``after`` and from a state of its class, the more recent first,
        then the one found last anywhere."""
        shared = self._shared
        exact_key = (after, byte_set)
        class_key = (self.canonical.state_class(after), byte_set)
        exact = shared.exact.get(exact_key)
        return exact_key, class_key, exact, _ranked_witnesses(exact, shared.by_class.get(class_key),
                                                              shared.latest)

    def _fresh_bytes_after(self, state, tokens: tuple):
        """``CanonicalFilter.fresh_first_bytes`` of the canonical state after
        ``tokens`` from ``state`` (None when the filter cannot tell)."""
        for next_id in tokens:
            state = self.canonical.advance(state, next_id)
        return self.canonical.fresh_first_bytes(state)

    def _alive_from_start(self, recognizer, byte_set: bytes, narrow: bool, depth: int) -> bool:
        """``_alive_here``'s search where every byte the grammar allows next starts
        a token that is fresh after the canonical state and allowed as at the start
        of a text (``CanonicalFilter.fresh_first_bytes``): the search is the one
        from ``initial_state()`` (its tokens, their verdicts and the states after
        them are the same), so its verdict depends on the recognizer's state alone
        and is kept per state key, for every token that leads there (the tokens
        of one length that end a counted string all meet in one state)."""
        self._spend(1)
        key = recognizer.state_key()
        found = self._start_verdicts.get(key)
        if found is not None and (not found[0] or found[1] >= depth):
            return found[0]
        alive = self._live_after(recognizer, self._initial_state, byte_set, narrow, depth)
        self._start_verdicts[key] = (alive, depth)
        if len(self._start_verdicts) > self.cache_size:
            del self._start_verdicts[next(iter(self._start_verdicts))]
        return alive

    def _witness_holds(self, recognizer, after, byte_set: bytes, narrow: bool, depth: int,
                       witness: tuple) -> bool:
        """The witness ``(suffix, its bytes, the canonical state it was found
        from, its serial)`` shows the recognizer's state
        (canonical state ``after``; ``byte_set`` and ``narrow``: what
        ``next_bytes`` says of it; ``depth`` tokens left to check) alive as
        ``_live_after`` defines it: the filter allows each token of the
        suffix in turn from ``after``, the grammar allows their bytes, and
        the state after them ends the search alive (output complete, grammar
        not narrow, or the depth bound passed with a byte allowed) or, for a
        witness ending in ``FROM_START``, is one whose search is the one from
        the start of a text with an alive verdict (``_alive_from_start``,
        searched there when not known).  Every state on the path is then
        alive by induction, so the intermediate ones need no check.  A
        witness found from ``after`` itself has the filter's part known; one
        found from another state has it checked here.  The canonical state
        after the last token is computed only when the output may end there
        or the witness ends in ``FROM_START``.  False says nothing (the
        search decides)."""
        suffix, data, origin, _serial = witness
        tokens = _witness_tokens(suffix)
        self._spend(1)
        if origin != after and not self._filter_allows(after, tokens):
            return False
        if data and not push_probe(recognizer, data):
            return False
        try:
            end_state = None
            if recognizer.is_accepting() or tokens is not suffix:
                end_state = after
                for next_id in tokens:
                    end_state = self.canonical.advance(end_state, next_id)
            if data:
                byte_set, narrow = next_bytes(recognizer, data[-1])
            depth -= len(tokens)
            if self._ends_alive(recognizer, end_state, byte_set, narrow, depth):
                return True
            if tokens is suffix:
                return False
            fresh_bytes = self.canonical.fresh_first_bytes(end_state)
            if fresh_bytes is None or not byte_set_within(byte_set, fresh_bytes) or \
                    not self._alive_from_start(recognizer, byte_set, narrow, depth):
                return False
            self.n_replayed_from_start += 1
            return True
        finally:
            if data:
                pop_probe(recognizer, len(data))

    def _filter_allows(self, state, suffix: tuple) -> bool:
        """The canonical filter allows each token of ``suffix`` in turn from
        ``state`` (one unit of work per token asked).  Memoized per (state,
        rest of the suffix) at every token, in a bounded FIFO: a class
        witness replayed after many whitespace tokens reaches one canonical
        state once its first token or two fix a pre-token boundary, and the
        rest (the member's name, say) is asked once per mask."""
        memo = self._shared.filter_memo
        pending = []
        verdict = True
        for position, next_id in enumerate(suffix):
            if position:
                state = self.canonical.advance(state, suffix[position - 1])
            key = (state, suffix[position:])
            found = memo.get(key)
            if found is not None:
                verdict = found
                break
            pending.append(key)
            if not self._allowed(state, next_id):
                verdict = False
                break
        for key in pending:
            memo[key] = verdict
        while len(memo) > self._shared.cache_size:
            memo.popitem(last=False)
        return verdict

    def _fresh_after(self, token_id: int):
        """The canonical state after ``token_id`` from a fixed boundary (memoized)."""
        fresh_states = self._shared.fresh_states
        after = fresh_states.get(token_id)
        if after is None:
            after = fresh_states[token_id] = self.canonical.advance(self._initial_state, token_id)
        return after

    def _ends_alive(self, recognizer, after, byte_set: bytes, narrow: bool, depth: int) -> bool:
        """The search ends alive at the recognizer's state without a next
        token: the output may end here (grammar accepting, canonical state
        ``after`` complete), the grammar is not narrow here (``byte_set``,
        ``narrow``: ``next_bytes``), or the depth bound is passed with a byte
        allowed."""
        return (not narrow or (depth < 0 and byte_set != _NO_BYTES)
                or (recognizer.is_accepting() and self.canonical.is_complete_canonical(after)))

    def _live_after(self, recognizer, after, byte_set: bytes, narrow: bool, depth: int) -> bool:
        """Some continuation of the recognizer's state is canonical after
        canonical state ``after`` (``byte_set`` and ``narrow``: what
        ``next_bytes`` says of the state).

        Called where the search does not end at once (``_alive_here`` asks
        ``_ends_alive`` first: the output may end here, or what the grammar
        allows next is not narrow).  A witness is looked for in three
        rounds, cheapest first; a token is *wide* when the grammar
        is not narrow after it, so a wide token the canonical filter allows
        is a witness without looking further:

        1. the one-byte tokens of the allowed bytes: a wide one the filter
           allows is a witness; the narrow ones are searched ``depth - 1``
           tokens deeper (cheap: no mask, usually enough inside numbers,
           keys and keywords);
        2. every wide token of the grammar mask (one ``MaskComputer.fill``
           with its narrow bitset; up to ``max_single_tests`` tokens, wide
           ones first, are tested one by one, and past that, or when the
           mask holds over ``max_tested_tokens``, the canonical state's
           whole keep bitset decides);
        3. the other narrow tokens the canonical filter allows, searched
           ``depth - 1`` tokens deeper.

        A dead verdict is final; an alive one assumes every state ``depth``
        tokens further is alive."""
        self.n_checked += 1
        self._spend(1)
        self._suffix = ()
        if depth < 0:
            return False
        canonical = self.canonical
        one_byte = []
        for byte in byte_set_values(byte_set):
            next_id = self.byte_tokens[byte]
            if next_id < 0 or not self._allowed(after, next_id):
                continue
            if self._wide_after(recognizer, next_id):
                self._suffix = (next_id,)
                return True
            one_byte.append(next_id)
        for next_id in one_byte:
            if self._alive(recognizer, after, next_id, depth - 1):
                self._suffix = (next_id,) + self._suffix
                return True
        bits, narrow_bits = self._scratch[depth], self._narrow_scratch[depth]
        self.mask_computer.fill(recognizer, bits, narrow_bits)
        narrow_bits &= bits
        filtered = more_bits_than(bits, self.max_tested_tokens)
        tests_left = self.max_single_tests
        if not filtered:
            for next_id in bit_ids(bits, narrow_bits, tests_left + 1):
                if not tests_left:
                    filtered = True
                    break
                tests_left -= 1
                if self._allowed(after, next_id):
                    self._suffix = (next_id,)
                    return True
        if not filtered and more_bits_than(narrow_bits, tests_left):
            filtered = True
        if filtered:
            self._spend(APPLY_UNITS)
            canonical.apply(after, bits)
            narrow_bits &= bits
            wide = bit_ids(bits, narrow_bits, 1)
            if wide:
                self._suffix = (wide[0],)
                return True
        tried = set(one_byte)
        for next_id in bit_ids(narrow_bits, None, -1):
            if next_id in tried or not (filtered or self._allowed(after, next_id)):
                continue
            if self._alive(recognizer, after, next_id, depth - 1):
                self._suffix = (next_id,) + self._suffix
                return True
        return False

    def _allowed(self, after, token_id: int) -> bool:
        """The canonical filter allows ``token_id`` after ``after`` (one unit of work)."""
        self._spend(1)
        return self.canonical.is_allowed(after, token_id)

    def _wide_after(self, recognizer, token_id: int) -> bool:
        """The grammar allows ``token_id`` and is not narrow after it."""
        data = self.token_bytes[token_id]
        if not push_probe(recognizer, data):
            return False
        try:
            return not next_bytes(recognizer, data[-1])[1]
        finally:
            pop_probe(recognizer, len(data))
