"""The import layering of grammask, and a checker that finds upward imports.

``LAYERS`` lists the layers bottom to top; each names the modules of the
package (dotted, after ``grammask.``) that belong to it with everything under
them, so ``grammask.engine`` and ``grammask.engine.x`` are both "engine".  The
longest listed name wins: ``_core._dfa_builder``, the compiled Rust crate
that only the terminal compiler calls, is "terminals", the rest of ``_core``
is "_core".  The
package itself (``grammask/__init__.py``, imported as ``grammask``) is the
top façade.  A module may import modules of its own layer and of the layers
below it, never of a layer above.

``find_imports(root, package)`` reads every module under ``root/package``:
Python files with ``ast`` (every ``import`` and ``from ... import``
anywhere, inside functions too, relative ones resolved against the module's
package; ``from P import name`` counts as importing ``P.name`` when that is a
module of the package), Cython files (``.pyx``, ``.pxd``, ``.pxi``) line by
line (``cimport`` and ``import`` statements).  ``layering_violations``
returns the upward ones, each naming both modules and both layers.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("errors/config/source", frozenset({"errors", "config", "source", "bitset"})),
    ("terminals", frozenset({"terminals", "_core._dfa_builder"})),
    ("grammar", frozenset({"grammar", "grammars"})),
    ("json_schema", frozenset({"json_schema"})),
    ("_core", frozenset({"_core"})),
    ("vocab", frozenset({"vocab"})),
    ("canonical", frozenset({"canonical"})),
    ("engine", frozenset({"engine"})),
    ("integrations/cli", frozenset({"integrations", "cli"})),
    ("façade", frozenset({""})),
)

CYTHON_SUFFIXES = (".pyx", ".pxd", ".pxi")
_CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+))", re.MULTILINE)


@dataclass(frozen=True)
class Import:
    importer: str        # dotted module name of the importing file
    imported: str        # dotted module name it imports
    path: Path
    line: int


@dataclass(frozen=True)
class Violation:
    imp: Import
    importer_layer: str
    imported_layer: str

    def __str__(self) -> str:
        return (f"{self.imp.path}:{self.imp.line}: {self.imp.importer} (layer {self.importer_layer}) "
                f"imports {self.imp.imported} (layer {self.imported_layer}, higher)")


def layer_of(module: str, package: str) -> tuple[int, str] | None:
    """(rank, name) of the layer of a dotted module of ``package``; None for
    modules outside the package; KeyError for a module no layer lists."""
    if module != package and not module.startswith(package + "."):
        return None
    relative = module[len(package) + 1:]
    best = None
    for rank, (name, members) in enumerate(LAYERS):
        for member in members:
            if (member == relative or relative.startswith(member + ".")
                    or (member == "" and relative == "")):
                if best is None or len(member) > best[0]:
                    best = (len(member), rank, name)
    if best is None:
        raise KeyError(f"{module}: no layer in LAYERS lists {relative.split('.')[0]!r}")
    return best[1], best[2]


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    """Dotted name of a source file and whether it is a package's __init__."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _is_module(dotted: str, root: Path) -> bool:
    parts = dotted.split(".")
    if any(".".join(parts[1:]) in members for _, members in LAYERS):
        return True
    base = root.joinpath(*parts)
    return base.is_dir() or any(base.with_suffix(suffix).exists() for suffix in (".py",) + CYTHON_SUFFIXES)


def _python_imports(path: Path, module: str, is_package: bool, root: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package_parts = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package_parts[:len(package_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield (candidate if alias.name != "*" and _is_module(candidate, root) else base), node.lineno


def _cython_imports(path: Path):
    text = path.read_text(encoding="utf-8")
    for match in _CYTHON_IMPORT.finditer(text):
        yield match.group(1) or match.group(2), text.count("\n", 0, match.start()) + 1


def find_imports(root: Path, package: str) -> list[Import]:
    """Every import statement of every module under ``root / package``."""
    found = []
    for path in sorted((root / package).rglob("*")):
        if path.suffix == ".py":
            module, is_package = _module_name(path, root)
            pairs = _python_imports(path, module, is_package, root)
        elif path.suffix in CYTHON_SUFFIXES:
            module, _ = _module_name(path, root)
            pairs = _cython_imports(path)
        else:
            continue
        found.extend(Import(module, imported, path, line) for imported, line in pairs)
    return found


def layering_violations(root: Path, package: str) -> list[Violation]:
    violations = []
    for imp in find_imports(root, package):
        target = layer_of(imp.imported, package)
        if target is None:
            continue
        source = layer_of(imp.importer, package)
        if target[0] > source[0]:
            violations.append(Violation(imp, source[1], target[1]))
    return violations
