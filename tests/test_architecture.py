"""The shape of the source tree, read from the files: layers that hold, no import cycles,
transports told apart by their descriptions only, small modules and (in the protocol cores)
short functions. docs/architecture.md draws the same layers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("whiteboard", "coreapi", "rmp", "mtp", "analytics")

# Lowest first. A module may import its own group and the groups of lower layers, never a
# higher layer nor another group of its own layer. The registry finds the protocol packages
# by name at run time (importlib), which is what lets the transport layer sit below them.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("whiteboard", "coreapi"),  # the version; the contract between cores and whiteboard
    ("whiteboard.board",),  # ops, the board model, its codec and file format
    ("whiteboard.desktop",),  # the app's files on a desktop (they are written as boards are)
    ("whiteboard.presence", "whiteboard.pointer"),  # who is drawing where; where they point
    ("whiteboard.carry",),  # ops handed on to a board that lacks them
    ("whiteboard.security",),  # private sessions: the session key, the sealed envelope
    ("whiteboard.transport",),  # the interface, the driver, the registry, the raw reference
    ("rmp", "mtp"),  # the protocol cores
    ("whiteboard.replica", "whiteboard.net"),  # a board fed by a transport; real sockets
    ("whiteboard.sessionlog",),  # recording sessions
    ("whiteboard.sim", "whiteboard.replay"),  # the simulator; reading recordings back
    ("whiteboard.peer", "whiteboard.app"),  # the headless member; the Qt app
    ("analytics",),  # the Spark jobs (their frames are painted by the app's renderer)
    ("whiteboard.cli",),  # the command that opens all of the above
    ("whiteboard.__main__",),  # python -m whiteboard
)
# Only these import anything of the whiteboard's own packages: the cores stay independent.
CORE_PACKAGES = frozenset({"coreapi", "rmp", "mtp"})
QT_GROUPS = frozenset({"whiteboard.app", "analytics"})
TRANSPORT_NAMES = frozenset({"raw", "rmp", "mtp"})
REGISTRY = "whiteboard.transport.registry"
MAX_FILE_LINES = 800
MAX_CORE_FUNCTION_LINES = 60


@cache
def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


@cache
def tree(module: str) -> ast.Module:
    return ast.parse(modules()[module].read_text(), str(modules()[module]))


def group(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "whiteboard" and len(parts) > 1 else parts[0]


def imports(module: str) -> Iterator[tuple[str, int]]:
    """Every module ``module`` imports (lazy imports in functions included), with the line."""
    for node in ast.walk(tree(module)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield (full if full in modules() else node.module), node.lineno


def project_imports(module: str) -> Iterator[tuple[str, int]]:
    for name, line in imports(module):
        if name.split(".")[0] in PACKAGES:
            yield name, line


def layer_of(name: str) -> int:
    for index, groups in enumerate(LAYERS):
        if group(name) in groups:
            return index
    raise AssertionError(f"{name} is in no layer: add its package to LAYERS and the docs")


def test_every_module_is_in_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_no_module_imports_a_higher_layer_or_a_neighbour() -> None:
    wrong = []
    for module in modules():
        here = layer_of(module)
        for name, line in project_imports(module):
            there = layer_of(name)
            if group(name) != group(module) and there >= here:
                wrong.append(f"{modules()[module].relative_to(ROOT)}:{line} imports {name}")
    assert wrong == []


def test_the_cores_import_nothing_of_the_whiteboard() -> None:
    wrong = [
        f"{module}:{line} imports {name}"
        for module in modules()
        if module.split(".")[0] in CORE_PACKAGES
        for name, line in project_imports(module)
        if name.split(".")[0] not in CORE_PACKAGES
    ]
    assert wrong == []


def test_only_the_app_and_the_analytics_import_qt() -> None:
    wrong = [
        f"{module}:{line} imports {name}"
        for module in modules()
        if group(module) not in QT_GROUPS
        for name, line in imports(module)
        if name.split(".")[0] in ("PySide6", "pytestqt")
    ]
    assert wrong == []


def test_there_are_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {}
    for module in modules():
        targets = set()
        for name, _ in project_imports(module):
            while name and name not in modules():
                name = name.rpartition(".")[0]
            targets.add(name)
        graph[module] = targets - {module, ""}
    cycles = strongly_connected(graph)
    assert cycles == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def _names_compared(node: ast.Compare) -> set[str]:
    found = set()
    for side in (node.left, *node.comparators):
        items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
        for item in items:
            if isinstance(item, ast.Constant) and item.value in TRANSPORT_NAMES:
                found.add(item.value)
    return found


def test_no_transport_is_told_apart_by_its_name_outside_the_registry() -> None:
    wrong = []
    for module in modules():
        if module == REGISTRY or module.split(".")[0] in CORE_PACKAGES:
            continue
        for node in ast.walk(tree(module)):
            if isinstance(node, ast.Compare) and _names_compared(node):
                wrong.append(f"{modules()[module].relative_to(ROOT)}:{node.lineno}")
    assert wrong == []


def test_the_name_check_sees_a_comparison() -> None:
    node = ast.parse('x == "mtp" or y in ("rmp", "raw")').body[0]
    assert isinstance(node, ast.Expr) and isinstance(node.value, ast.BoolOp)
    compared = [_names_compared(c) for c in node.value.values if isinstance(c, ast.Compare)]
    assert compared == [{"mtp"}, {"rmp", "raw"}]


@pytest.mark.parametrize("module", sorted(modules()))
def test_no_source_file_is_over_800_lines(module: str) -> None:
    lines = len(modules()[module].read_text().splitlines())
    assert lines <= MAX_FILE_LINES, f"{module}: {lines} lines"


def test_no_function_in_the_cores_is_over_60_lines() -> None:
    long = []
    for module in modules():
        if module.split(".")[0] not in ("rmp", "mtp"):
            continue
        for node in ast.walk(tree(module)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > MAX_CORE_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {length} lines")
    assert long == []
