"""The modules of ``grammask.json_schema`` import each other without a cycle.

Reads every import statement (module level or inside functions) of the
package's modules and checks that the graph of "module imports module" is
acyclic, so each keyword module can be read and tested on its own, and that
only ``translator`` imports the keyword modules it dispatches to.
"""

from __future__ import annotations

import ast
import pathlib

import grammask.json_schema

PACKAGE = "grammask.json_schema"
PACKAGE_DIR = pathlib.Path(grammask.json_schema.__file__).parent
KEYWORD_MODULES = {"applicators", "arrays", "const_nodes", "number_nodes", "objects",
                   "string_nodes"}


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
                imported.add(node.module.split(".")[2])
            elif isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[2] for alias in node.names
                             if alias.name.startswith(PACKAGE + ".")}
        graph[path.stem] = imported - {path.stem}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    on_path: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> list[str] | None:
        if module in on_path:
            return on_path[on_path.index(module):] + [module]
        if module in done:
            return None
        on_path.append(module)
        for imported in sorted(graph.get(module, ())):
            cycle = visit(imported)
            if cycle:
                return cycle
        on_path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return None


def test_json_schema_modules_have_no_import_cycle():
    graph = import_graph()
    assert {"translator", "builder", "keywords"} <= set(graph)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_only_the_translator_imports_keyword_modules():
    graph = import_graph()
    importers = {module for module, imported in graph.items() if imported & KEYWORD_MODULES}
    assert importers <= {"translator"}


def test_cycle_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
