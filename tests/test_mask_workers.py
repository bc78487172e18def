"""MaskWorkers (grammask._core.mask_computer): the helper threads behind
BatchMasker hand work over correctly whatever the order of wake-ups.

``run_python(work, n)`` calls ``work`` on the caller and on up to ``n``
helpers, all items done exactly once, an error escaping ``work`` on a helper
raised on the caller; ``prepare()`` (an early wake-up) followed by a run, by
nothing, or by ``stop()`` leaves the helpers able to serve again and to
stop; a run from a second Python thread while one is in progress computes
on its own thread."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from grammask._core.mask_computer import MaskWorkers


def start(n_helpers):
    workers = MaskWorkers(n_helpers)
    threads = [threading.Thread(target=workers.serve, args=(k,), daemon=True) for k in range(n_helpers)]
    for thread in threads:
        thread.start()
    return workers, threads


def stop(workers, threads):
    workers.stop()
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()


def drain_items(n_items, seen, delay=0.0):
    positions = itertools.count()
    lock = threading.Lock()

    def work():
        for position in positions:
            if position >= n_items:
                return
            if delay:
                time.sleep(delay)  # releases the GIL, as a mask does
            with lock:
                seen.append((position, threading.get_ident()))
    return work


@pytest.mark.parametrize("n_helpers", [1, 3])
@pytest.mark.parametrize("prepare", [False, True])
def test_run_python_does_every_item_once(n_helpers, prepare):
    workers, threads = start(n_helpers)
    try:
        for n_items in (0, 1, 2, 7, 40):
            seen = []
            if prepare:
                workers.prepare()
            workers.run_python(drain_items(n_items, seen, delay=0.001), n_helpers)
            assert sorted(position for position, _ in seen) == list(range(n_items))
        seen = []
        workers.run_python(drain_items(40, seen, delay=0.002), n_helpers)
        assert len({thread for _, thread in seen}) > 1  # the helpers took a share
    finally:
        stop(workers, threads)


def test_an_error_on_a_helper_reaches_the_caller():
    workers, threads = start(1)
    try:
        calls = []

        def work():
            calls.append(threading.get_ident())
            if threading.get_ident() != caller:
                raise RuntimeError("helper failed")
            time.sleep(0.05)  # the helper gets its turn meanwhile
        caller = threading.get_ident()
        with pytest.raises(RuntimeError, match="helper failed"):
            workers.run_python(work, 1)
        assert len(calls) == 2
        seen = []
        workers.run_python(drain_items(5, seen), 1)  # and the helpers still serve
        assert sorted(position for position, _ in seen) == list(range(5))
    finally:
        stop(workers, threads)


def test_prepare_without_a_run_then_runs_and_stop():
    workers, threads = start(2)
    for _ in range(50):
        workers.prepare()
    time.sleep(0.01)  # past the helpers' spin: they sleep again
    seen = []
    workers.prepare()
    workers.run_python(drain_items(9, seen), 2)
    assert sorted(position for position, _ in seen) == list(range(9))
    workers.prepare()
    stop(workers, threads)  # a woken helper still stops


def test_a_concurrent_run_computes_on_its_own_thread():
    workers, threads = start(1)
    try:
        inside = threading.Event()
        release = threading.Event()
        seen_second = []

        def first():
            inside.set()
            release.wait(10)
        runner = threading.Thread(target=workers.run_python, args=(first, 0))
        runner.start()
        assert inside.wait(10)
        workers.run_python(drain_items(6, seen_second), 1)  # the helpers are taken
        assert {thread for _, thread in seen_second} == {threading.get_ident()}
        release.set()
        runner.join(10)
        assert not runner.is_alive()
    finally:
        stop(workers, threads)
