"""Files shipped inside installed test-data packages (tokenizers, models).

``package_file(package, *parts)`` is the path of such a file; a missing
package or file fails the test (``./run test`` installs them all), it never
skips it.
"""

from __future__ import annotations

import importlib.util
import os

import pytest


def package_file(package: str, *parts: str) -> str:
    """Path of a file shipped inside an installed package; fail the test if absent."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(f"package {package} is not installed (./run test installs it)", pytrace=False)
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *parts)
        if os.path.exists(path):
            return path
    pytest.fail(f"{os.path.join(*parts)} not found in package {package}", pytrace=False)
