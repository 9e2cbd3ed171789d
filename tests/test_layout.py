"""The package's import graph has no cycle, counting imports inside functions too (a lazy import
must not hide one)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "ratercal_cli"


def _module_name(path: Path) -> str:
    parts = ("ratercal_cli",) + path.relative_to(PKG).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph():
    """``{module: {package-internal modules it imports anywhere in its body}}``."""
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
                for alias in node.names:   # `from . import obsgen` imports a submodule
                    sub = f"{target}.{alias.name}"
                    edges.add(sub if sub in modules else target)
            elif isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name.startswith("ratercal_cli.")}
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def find_cycle(graph):
    """One cycle as a list of modules, or None (depth-first search)."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (c := visit(n)):
                return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (c := visit(m)):
            return c
    return None


def test_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 40 and "ratercal_cli.report.figures" in graph["ratercal_cli.report"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


#: The layers of the README's Layout, lowest first; a module imports only from its layer and below.
LAYERS = (("core", None), ("methods", {"methods", "generators", "models"}),
          ("products", {"study", "montecarlo", "practice", "report"}), ("command line", {"cli", "commands", "app"}))
#: The one import upwards: the config's validation asks the methods which codes a config may name.
UPWARD_ALLOWED = {("ratercal_cli.config", "ratercal_cli.methods")}


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:   # the package: the public API, imported by nothing below it
        return len(LAYERS)
    for k, (_, tops) in reversed(list(enumerate(LAYERS))):
        if tops is not None and parts[1] in tops:
            return k
    return 0


def test_each_layer_imports_only_from_below():
    graph = import_graph()
    up = {(a, b) for a, edges in graph.items() for b in edges
          if b != "ratercal_cli" and _layer(b) > _layer(a)} - UPWARD_ALLOWED
    assert not up, "imports from a higher layer: " + ", ".join(f"{a} -> {b}" for a, b in sorted(up))
    assert _layer("ratercal_cli.practice.check") == 2 and _layer("ratercal_cli.ratings") == 0
