"""Bounded fuzz of the public Engine API: 10^5 calls on random small grammars.

Each example is a random grammar of ``support.grammar_strategies`` (1-3
rules over ``abc``) and a seed; a session of ``CALLS_PER_GRAMMAR`` calls
picks among every public call of ``Engine`` (accepting tokens and bytes,
rolling back, resetting, copying, the mask in each of its forms, logits,
forced tokens and bytes), each with valid and invalid arguments (wrong
types, out-of-range ids, bad rollback counts, bad arrays).  Checked on
every call:

* an exception is a ``GrammaskError`` subclass, and the engine is exactly
  as before (output bytes, ``n_accepted``, mask);
* a call that succeeds does what a shadow model of the steps says
  (``Model``): a token or byte string is accepted exactly when the oracle
  allows it, rollback removes the model's last steps;
* the mask equals the oracle's on the small vocabulary, and accept agrees
  with the mask for a few sampled tokens per step (on a copy).

Oracle: ``support.ast_reference.ReferenceRecognizer`` over the grammar's AST
(never LNF, never the Earley core): token t is allowed after output o iff
``viable_prefix(o + bytes(t))``, EOS iff ``accepts(o)``; after EOS only EOS.

Reproducible: hypothesis derandomized (the conftest profile), each session
seeded by its example.  ``test_api_fuzz_makes_enough_calls`` runs the
sessions and asserts the total number of calls (about 70 s of CPU on the
shared 2-core machine; 109,622 calls in 352 sessions).
"""

from __future__ import annotations

import random
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grammask
from grammask.errors import DeadEndWarning, GrammaskError, IncompleteOutputWarning, TokenRejected
from support.ast_reference import ReferenceRecognizer
from support.grammar_strategies import grammar_asts

EOS = 0
SPECIAL = 10
PIECES = [None, b"a", b"b", b"c", b"ab", b"ba", b"cc", b"abc", b"aab", None, b"<s>", b"bc"]
VOCAB = grammask.Vocabulary(PIECES, eos_token_ids=[EOS], special_token_ids=[SPECIAL])
TEXT_IDS = [t for t, piece in enumerate(PIECES) if piece and t != SPECIAL]
N_WORDS = (len(PIECES) + 31) // 32

N_GRAMMARS = 380
CALLS_PER_GRAMMAR = 310
MIN_CALLS = 100_000
MAX_ORACLE_OUTPUT = 8
"""Outputs longer than this steer the session back (rollback or reset), so
the oracle's fixpoint stays cheap."""

BAD_IDS = [-1, len(PIECES), 10**20, -(10**20)]
BAD_TYPES = [1.5, "a", None, True, b"a", [1], np.float32(2.0)]


class Oracle:
    """The reference verdicts of one grammar, memoized by text."""

    def __init__(self, ast):
        self.reference = ReferenceRecognizer(ast)
        self.viable: dict[bytes, bool] = {}
        self.accepted: dict[bytes, bool] = {}

    def viable_prefix(self, data: bytes) -> bool:
        if data not in self.viable:
            self.viable[data] = self.reference.viable_prefix(data)
        return self.viable[data]

    def accepts(self, data: bytes) -> bool:
        if data not in self.accepted:
            self.accepted[data] = self.reference.accepts(data)
        return self.accepted[data]

    def mask(self, output: bytes, finished: bool) -> list[int]:
        if finished:
            return [EOS]
        allowed = [t for t in TEXT_IDS if self.viable_prefix(output + PIECES[t])]
        return sorted(allowed + ([EOS] if self.accepts(output) else []))


class Model:
    """The accepted steps as the API promises them: (is EOS, bytes)."""

    def __init__(self):
        self.steps: list[tuple[bool, bytes]] = []

    @property
    def output(self) -> bytes:
        return b"".join(data for _, data in self.steps)

    @property
    def finished(self) -> bool:
        return any(is_eos for is_eos, _ in self.steps)


class Session:
    def __init__(self, ast, seed: int):
        self.rng = random.Random(seed)
        self.oracle = Oracle(ast)
        self.engine = grammask.Engine(grammask.compile(grammask.Grammar.from_ast(ast), VOCAB))
        self.model = Model()
        self.n_calls = 0
        self.checked_outputs: set[tuple[bytes, bool]] = set()

    # -- state ------------------------------------------------------------------

    def state(self, engine=None):
        engine = engine or self.engine
        return engine.output_bytes(), engine.n_accepted, engine.compute_allowed_token_ids().tolist()

    def check_model(self) -> None:
        output, n_accepted, mask = self.state()
        assert output == self.model.output
        assert n_accepted == len(self.model.steps)
        key = (output, self.model.finished)
        if key not in self.checked_outputs:
            self.checked_outputs.add(key)
            assert mask == self.oracle.mask(*key), f"mask after {output!r}"

    def call(self, function, *args):
        """Call ``function``; returns (True, result) or (False, the error),
        after checking that an error is typed and changed nothing."""
        before = self.state()
        self.n_calls += 1
        try:
            return True, function(*args)
        except GrammaskError as error:
            assert self.state() == before, f"{function.__name__}{args!r} changed the state: {error}"
            return False, error

    # -- one random call ----------------------------------------------------------

    def token_argument(self):
        roll = self.rng.random()
        if roll < 0.75:
            mask = self.oracle.mask(self.model.output, self.model.finished)
            pool = mask if mask and self.rng.random() < 0.7 else list(range(len(PIECES)))
            return self.rng.choice(pool)
        return self.rng.choice(BAD_IDS if roll < 0.88 else BAD_TYPES)

    def expect_token(self, token_id) -> bool:
        """Whether accepting ``token_id`` should succeed (and then record it)."""
        if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, bool):
            return False
        if token_id not in self.oracle.mask(self.model.output, self.model.finished):
            return False
        if not self.model.finished:
            self.model.steps.append((token_id == EOS, b"" if token_id == EOS else PIECES[token_id]))
        return True

    def accept_token(self) -> None:
        token_id = self.token_argument()
        ok, _ = self.call(self.engine.try_accept_new_token, token_id)
        assert ok == self.expect_token(token_id), f"accept {token_id!r} after {self.model.output!r}"

    def accept_bytes(self) -> None:
        if self.rng.random() < 0.15:
            data = self.rng.choice(["ab", 3, [97], None, 3 * 10**9])
            ok, _ = self.call(self.engine.try_accept_new_bytes, data)
            assert not ok
            return
        data = bytes(self.rng.choice(b"abcd") for _ in range(self.rng.randint(0, 3)))
        argument = self.rng.choice([data, bytearray(data), memoryview(data)])
        ok, _ = self.call(self.engine.try_accept_new_bytes, argument)
        if self.model.finished:
            expected = False
        elif not data:
            expected = True
        else:
            expected = self.oracle.viable_prefix(self.model.output + data)
        assert ok == expected, f"accept bytes {data!r} after {self.model.output!r}"
        if ok and data:
            self.model.steps.append((False, data))

    def rollback(self) -> None:
        n = len(self.model.steps)
        argument = self.rng.choice([self.rng.randint(0, n), self.rng.randint(0, n), -1, n + 1,
                                    self.rng.choice(BAD_TYPES)])
        ok, _ = self.call(self.engine.rollback, argument)
        valid = isinstance(argument, int) and not isinstance(argument, bool) and 0 <= argument <= n
        assert ok == valid, f"rollback({argument!r}) with {n} steps"
        if ok and argument:
            del self.model.steps[-argument:]

    def reset(self) -> None:
        ok, _ = self.call(self.engine.reset)
        assert ok
        self.model.steps.clear()

    def copy(self) -> None:
        ok, clone = self.call(self.engine.copy)
        assert ok and self.state(clone) == self.state()

    def is_token_allowed(self) -> None:
        token_id = self.token_argument()
        ok, allowed = self.call(self.engine.is_token_allowed, token_id)
        if isinstance(token_id, (int, np.integer)) and not isinstance(token_id, bool):
            assert ok and allowed == (token_id in self.oracle.mask(self.model.output, self.model.finished))
        else:
            assert not ok

    def masks(self) -> None:
        ids = self.oracle.mask(self.model.output, self.model.finished)
        expected_bits = np.zeros(N_WORDS, dtype=np.uint32)
        for t in ids:
            expected_bits[t // 32] |= np.uint32(1 << (t % 32))
        which = self.rng.randrange(3)
        if which == 0:
            ok, bits = self.call(self.engine.allowed_bitset)
            assert ok and np.array_equal(bits, expected_bits)
        elif which == 1:
            ok, found = self.call(self.engine.compute_allowed_token_ids)
            assert ok and found.tolist() == ids
        else:
            arrays = [np.zeros((2, N_WORDS), np.int32), np.zeros(N_WORDS, np.int32),
                      np.zeros((2, N_WORDS), np.int64), np.zeros((2, N_WORDS + 1), np.int32),
                      np.zeros((2, 2, N_WORDS), np.int32), [0] * N_WORDS, "bitmask"]
            array = self.rng.choice(arrays)
            row = self.rng.choice([0, 1, 1, -1, 2, "0", 1.0])
            ok, _ = self.call(self.engine.fill_bitmask, array, row)
            valid = (isinstance(array, np.ndarray) and array.dtype == np.int32 and array.shape[-1] == N_WORDS
                     and isinstance(row, int) and ((array.ndim == 1 and row == 0)
                                                   or (array.ndim == 2 and 0 <= row < 2)))
            assert ok == valid, f"fill_bitmask({array!r}, {row!r})"
            if ok:
                written = array if array.ndim == 1 else array[row]
                assert np.array_equal(written.view(np.uint32), expected_bits)

    def logits(self) -> None:
        ids = self.oracle.mask(self.model.output, self.model.finished)
        candidates = [np.zeros(len(PIECES), np.float32), np.zeros((2, len(PIECES) + 3), np.float64),
                      np.zeros(len(PIECES) - 1, np.float32), np.zeros(len(PIECES), np.int64),
                      np.zeros((1, 1, len(PIECES)), np.float32), list(range(len(PIECES))), None]
        logits = self.rng.choice(candidates)
        if isinstance(logits, np.ndarray):
            logits = logits.copy()
        valid = (isinstance(logits, np.ndarray) and logits.dtype.kind == "f" and logits.ndim in (1, 2)
                 and logits.shape[-1] >= len(PIECES))
        if self.rng.random() < 0.5:
            ok, _ = self.call(self.engine.mask_logits, logits)
            assert ok == valid
        else:
            token_id = None if self.rng.random() < 0.3 else self.token_argument()
            ok, _ = self.call(self.engine.modify_possible_logits, token_id, logits)
            if not valid:
                assert not ok
                return
            if token_id is not None:
                assert ok == self.expect_token(token_id), f"modify_possible_logits({token_id!r})"
            else:
                assert ok
            ids = self.oracle.mask(self.model.output, self.model.finished)
        if ok:
            allowed = np.zeros(logits.shape[-1], dtype=bool)
            allowed[ids] = True
            assert np.array_equal(np.isfinite(logits), np.broadcast_to(allowed, logits.shape))

    def forced(self) -> None:
        if self.rng.random() < 0.5:
            argument = self.rng.choice([0, 1, 5, 64, -1, 2.5, "3", None])
            ok, tokens = self.call(self.engine.compute_forced_tokens, argument)
            assert ok == (isinstance(argument, int) and argument >= 0)
            if ok:
                probe = self.engine.copy()
                for token_id in tokens:
                    assert token_id != EOS
                    probe.try_accept_new_token(token_id)
                    self.n_calls += 1
        else:
            argument = self.rng.choice([0, 1, 8, -3, 1.5])
            ok, forced = self.call(self.engine.forced_bytes, argument)
            assert ok == (isinstance(argument, int) and argument >= 0)
            if ok and forced:
                output = self.model.output
                assert not self.model.finished and not self.oracle.accepts(output)
                assert self.oracle.viable_prefix(output + forced)

    def queries(self) -> None:
        for function in (self.engine.is_finished, self.engine.can_end, self.engine.output_bytes,
                         self.engine.stats):
            ok, result = self.call(function)
            assert ok
        ok, can_end = self.call(self.engine.can_end)
        assert can_end == (EOS in self.oracle.mask(self.model.output, self.model.finished)
                           and not self.model.finished)

    def agreement(self) -> None:
        """Sampled tokens: in the mask iff a copy accepts them."""
        for token_id in self.rng.sample(range(len(PIECES)), 3):
            probe = self.engine.copy()
            allowed = self.engine.is_token_allowed(token_id)
            try:
                probe.try_accept_new_token(token_id)
                accepted = True
            except TokenRejected:
                accepted = False
            self.n_calls += 3
            assert allowed == accepted, f"token {token_id} after {self.model.output!r}"

    def run(self, n_calls: int) -> None:
        operations = [(self.accept_token, 30), (self.accept_bytes, 12), (self.rollback, 10),
                      (self.reset, 1), (self.copy, 3), (self.is_token_allowed, 8), (self.masks, 8),
                      (self.logits, 8), (self.forced, 3), (self.queries, 2), (self.agreement, 4)]
        functions = [function for function, _ in operations]
        weights = [weight for _, weight in operations]
        self.check_model()
        while self.n_calls < n_calls:
            if len(self.model.output) > MAX_ORACLE_OUTPUT:
                function = self.rng.choice([self.rollback, self.rollback, self.reset])
            else:
                function = self.rng.choices(functions, weights)[0]
            function()
            self.check_model()


def test_api_fuzz_makes_enough_calls():
    total = {"calls": 0, "sessions": 0}

    @settings(max_examples=N_GRAMMARS, suppress_health_check=list(HealthCheck))
    @given(grammar_asts(max_rules=3), st.integers(0, 2**32 - 1))
    def session(ast, seed):
        try:
            grammar = grammask.Grammar.from_ast(ast)
        except GrammaskError:
            return
        del grammar
        fuzz = Session(ast, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeadEndWarning)
            warnings.simplefilter("ignore", IncompleteOutputWarning)
            fuzz.run(CALLS_PER_GRAMMAR)
        total["calls"] += fuzz.n_calls
        total["sessions"] += 1

    session()
    print(f"{total['calls']} public API calls in {total['sessions']} sessions")
    assert total["calls"] >= MIN_CALLS, total
