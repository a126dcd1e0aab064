"""The layering the folders promise, read from the imports: the engine imports nothing above it, app services
import only the engine, benchmarks import only the engine and app services, and no import circle exists."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {  # a top-level package -> the project's top-level packages it may import
    "recommender": {"recommender"},
    "workspace": {"recommender", "workspace"},
    "bench": {"recommender", "workspace", "bench"},
}
PROJECT = {"recommender", "workspace", "pages", "bench", "tests", "app"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Absolute names of the project's modules a file imports (relative imports resolved)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            found.add(name)
            found |= {f"{name}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in PROJECT}


def sources(*tops: str) -> list[Path]:
    return [p for top in tops for p in sorted((ROOT / top).rglob("*.py")) if "fixtures" not in p.parts]


def test_each_layer_imports_only_the_layers_below():
    wrong = []
    for top, allowed in LAYERS.items():
        for path in sources(top):
            wrong += [f"{module_name(path)} imports {name}" for name in sorted(imports(path))
                      if name.split(".")[0] not in allowed]
    assert not wrong, "\n".join(wrong)


def test_the_engine_has_no_import_circle():
    modules = {module_name(p): p for p in sources("recommender")}
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        graph.add_edges_from((name, other) for other in imports(path) if other in modules and other != name)
    circles = list(nx.simple_cycles(graph))
    assert not circles, circles[:5]


def test_no_test_module_imports_another():
    """Shared helpers live in tests/support; a test module is never a library."""
    tests = {p.stem for p in sources("tests") if p.name.startswith("test_")}
    wrong = [f"{path.relative_to(ROOT)} imports {name}" for path in sources("tests")
             for name in _plain_imports(path) if name.split(".")[-1] in tests]
    assert not wrong, wrong


def _plain_imports(path: Path) -> set[str]:
    """Module names a file imports (tests import their helpers by bare module name)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found
