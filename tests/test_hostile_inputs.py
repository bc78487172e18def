"""Hostile inputs end quickly, in bounded memory, with a result or a typed error.

Each case of ``support/hostile_cases.py`` that is marked bounded runs in its
own process (``run_case``): it must end as expected (a result, or the named
``GrammaskError`` subclass), within ``TIME_BUDGET_S`` CPU seconds plus slack
for a loaded CI machine (CPU time: wall time on a loaded machine measures
the load), and with a peak RSS within ``MEMORY_BUDGET_MB``.  The
cases still over budget are listed by ``benchmarks/bench_hostile.py``.
"""

from __future__ import annotations

import pytest

from support.hostile_cases import CASES, MEMORY_BUDGET_MB, TIME_BUDGET_S, as_expected, run_case

CI_SLACK_S = 4.0

BOUNDED = [case for case in CASES if case.bounded]


@pytest.mark.parametrize("case", BOUNDED, ids=[case.name for case in BOUNDED])
def test_hostile_case_is_bounded(case):
    measured = run_case(case, TIME_BUDGET_S + CI_SLACK_S)
    assert as_expected(case, measured["outcome"]), measured
    assert measured["cpu_seconds"] <= TIME_BUDGET_S + CI_SLACK_S, measured
    assert measured["peak_mb"] <= MEMORY_BUDGET_MB, measured
