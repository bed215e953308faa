"""Import loops among the project's modules: `python scripts/import_cycles.py` prints each one.

The graph is grimp's (the library import-linter is built on) for the root packages of
pyproject.toml's ``[tool.importlinter]``, every import statement counted, at module level or in a
function, except those under ``if TYPE_CHECKING:`` (they never run). One edge is added that grimp
leaves out: ``from package import name`` reads ``package``'s namespace, so a module that does it
depends on the package's ``__init__`` too, and a package whose ``__init__`` imports that module
back is a loop (``registry`` and ``registry.celery`` were one).

A loop is a strongly connected component of more than one module; the exit status is 1 when
there is any. tests/test_architecture.py runs it.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def root_packages() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return list(config["tool"]["importlinter"]["root_packages"])


def package_reads(graph: grimp.ImportGraph) -> Iterator[tuple[str, str]]:
    """(importer, package) for each ``from package import name`` of a project package."""
    for module in graph.modules:
        path = module_path(module)
        if path is None:
            continue
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            package = absolute(module, is_package, node.module, node.level)
            if package in graph.modules and package != module and is_package_name(package):
                yield module, package


def module_path(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def is_package_name(module: str) -> bool:
    return (ROOT.joinpath(*module.split(".")) / "__init__.py").is_file()


def absolute(module: str, is_package: bool, name: str | None, level: int) -> str:
    if level == 0:
        return name or ""
    parts = module.split(".")
    parent = parts if is_package else parts[:-1]
    base = parent[: len(parent) - (level - 1)]
    return ".".join([*base, name] if name else base)


def strongly_connected(nodes: Iterable[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, without recursion; the components of more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(nodes):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
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


def project_imports() -> dict[str, set[str]]:
    """Each project module and the project modules it imports (the edges described above)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # grimp finds the packages by importing them
    graph = grimp.build_graph(
        *root_packages(),
        include_external_packages=False,
        exclude_type_checking_imports=True,
        cache_dir=None,
    )
    edges = {
        module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }
    for importer, package in package_reads(graph):
        edges[importer].add(package)
    return edges


def import_cycles(edges: dict[str, set[str]] | None = None) -> list[list[str]]:
    edges = project_imports() if edges is None else edges
    return strongly_connected(edges, edges)


def main() -> int:
    edges = project_imports()
    cycles = import_cycles(edges)
    for cycle in cycles:
        print(" <-> ".join(cycle))
        members = set(cycle)
        for module in cycle:
            for imported in sorted(edges[module] & members):
                print(f"    {module} -> {imported}")
    print(f"{len(cycles)} import loop(s) among {len(edges)} modules")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
