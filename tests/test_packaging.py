"""Every third-party module that grammask imports when a module of it is
imported is a declared dependency: a plain ``pip install grammask`` plus a
tokenizer package must compile a grammar with the canonical filter (on by
default for Hugging Face tokenizers), which imports ``regex``.  Modules
imported inside functions are optional parts (``grammask.integrations``
needs the framework it integrates with) and are not checked here."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OPTIONAL_PACKAGES = {"grammask.integrations"}
"""Packages whose modules import their framework at the top (torch, vLLM,
transformers): imported only by a user of that integration."""


def _top_level_imports(path: Path) -> set:
    """The first component of every absolute import at a module's top level."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT / "src").with_suffix("").parts)


def test_core_modules_import_only_declared_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("-", "_")
                for requirement in project["dependencies"]}
    undeclared = {}
    for path in sorted((ROOT / "src" / "grammask").rglob("*.py")):
        module = _module_name(path)
        if any(module == package or module.startswith(package + ".") for package in OPTIONAL_PACKAGES):
            continue
        for name in _top_level_imports(path) - set(sys.stdlib_module_names) - {"grammask"}:
            if name.lower() not in declared:
                undeclared.setdefault(name, []).append(module)
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"
    assert {"numpy", "regex"} <= declared
