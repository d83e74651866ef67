"""The layering in specs/architecture.md, checked on the source: the agent runtime imports
nothing else of the package, the import graph has no cycle, and functions stay short."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "backend" / "sommelier"
MAX_FUNCTION_LINES = 50


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text()) for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """Imports under `if TYPE_CHECKING:` name types for annotations; they never run."""
    blocks = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    return {node for block in blocks for stmt in block.body for node in ast.walk(stmt)}


def _imports(name: str, tree: ast.Module, known: set[str]) -> set[str]:
    """Every package module `name` imports at run time, at any depth of the file (lazy imports
    inside functions count)."""
    found: set[str] = set()
    package = name
    annotations_only = _type_checking_only(tree)
    for node in ast.walk(tree):
        if node in annotations_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                root = package.split(".")[: -node.level or None]
                base = ".".join([*root, base] if base else root)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, tree, known) for name, tree in modules.items()}


def test_the_agent_runtime_imports_nothing_else_of_the_package() -> None:
    graph = _graph()
    leaks = {
        (name, target)
        for name, targets in graph.items()
        if name.startswith("sommelier.agent")
        for target in targets
        if not target.startswith("sommelier.agent")
    }
    assert leaks == set()


def test_the_import_graph_has_no_cycle() -> None:
    graph = _graph()
    # A package's __init__ is where its modules are gathered; edges into it are fine.
    edges = {
        n: {t for t in ts if not any(m.startswith(t + ".") for m in graph)}
        for n, ts in graph.items()
    }
    state: dict[str, str] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                cycle.extend([*path[path.index(target) :], target] if target in path else [target])
                return
            if target not in state:
                visit(target, [*path, target])
                if cycle:
                    return
        state[node] = "done"

    for start in sorted(edges):
        if start not in state and not cycle:
            visit(start, [start])
    assert cycle == []


# What each layer may import (specs/architecture.md): a package, or single modules of one.
FRONT_END = {
    "chat",
    "agent",
    "i18n",
    "db.repositories",
    "db.turns",
    "db.session",
    "db.chat_settings",
}
ALLOWED = {
    "db": {"db"},
    "i18n": {"i18n"},
    "catalog": {"catalog", "db", "agent", "i18n"},
    "observability": {"observability", "agent", "config"},
    "chat": {"chat", "catalog", "cellar", "db", "agent", "observability", "i18n", "vision"},
    "vision": {"vision", "catalog", "db"},
    "cellar": {"cellar", "catalog", "db", "agent", "i18n"},
    "terminal": {"terminal", "cellar", *FRONT_END},
    "bot": {"bot", "cellar", *FRONT_END},
    "mcp_tools": {"mcp_tools", "agent"},
}
# The modules that wire settings into a layer: they may also import the app and its settings.
WIRING = {"sommelier.bot.application", "sommelier.bot.runner"}


def _allowed(target: str, allowed: set[str]) -> bool:
    inner = target.removeprefix("sommelier.")
    return any(inner == a or inner.startswith(a + ".") for a in allowed)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_lower_layers_do_not_reach_up(layer: str) -> None:
    graph = _graph()
    reached = {
        (name, target)
        for name, targets in graph.items()
        if name == f"sommelier.{layer}" or name.startswith(f"sommelier.{layer}.")
        for target in targets
        if not _allowed(target, ALLOWED[layer] | ({"app", "config"} if name in WIRING else set()))
    }
    assert reached == set()


def test_no_function_is_longer_than_a_screen() -> None:
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.name} ({lines} lines)")
    assert long == []
