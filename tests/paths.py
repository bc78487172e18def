"""Where the tests' data lives: the vendored copy of the shared workloads
(``tests/workloads``, see its VENDORED.md), so a clean clone runs anywhere."""

import pathlib

WORKLOADS = pathlib.Path(__file__).resolve().parent / "workloads"
