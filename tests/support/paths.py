"""Where the tests' data lives: the vendored copy of the shared workloads
(``tests/workloads``, see its VENDORED.md), so a clean clone runs anywhere.

The data is part of the repository: ``workload(*parts)`` returns the path of
one file and fails the test (never skips it) when the file is missing.
"""

import pathlib

import pytest

WORKLOADS = pathlib.Path(__file__).resolve().parents[1] / "workloads"


def workload(*parts: str) -> pathlib.Path:
    """Path of a vendored workload file; fails the calling test if it is missing."""
    path = WORKLOADS.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"vendored workload {path} is missing (tests/workloads is part of the "
                    "repository, see its VENDORED.md)", pytrace=False)
    return path
