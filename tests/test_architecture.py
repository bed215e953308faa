"""The layers of DESIGN.md hold: import-linter's contracts (pyproject.toml) are all kept; no
project module imports itself through a loop; every import inside a function says why."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_the_import_contracts_are_kept() -> None:
    linter = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def test_no_import_loop_among_the_project_modules() -> None:
    cycles = _script("import_cycles")
    edges = cycles.project_imports()
    assert len(edges) > 300  # the graph holds the project
    assert cycles.import_cycles(edges) == []


def test_the_loop_finder_finds_a_loop_through_a_package() -> None:
    """A module reading its own package's namespace while the package imports it is a loop."""
    cycles = _script("import_cycles")
    edges = {"p": {"p.a"}, "p.a": {"p.b", "p"}, "p.b": set(), "q": {"p.b"}}
    assert cycles.import_cycles(edges) == [["p", "p.a"]]
    assert cycles.absolute("p.a", False, "b", 1) == "p.b"
    assert cycles.absolute("p", True, None, 1) == "p"


def test_every_lazy_import_says_why() -> None:
    lazy = _script("lazy_imports")
    found = lazy.lazy_imports()
    assert len(found) > 10  # the walk finds them
    silent = [f"{item.path}:{item.line}: {item.text}" for item in found if not item.reasoned]
    assert silent == [], "import at the top, or say why on the line: # lazy: <reason>"


def test_a_lazy_import_without_a_reason_is_found(tmp_path: Path) -> None:
    lazy = _script("lazy_imports")
    source = tmp_path / "probe.py"
    source.write_text(
        "def f():\n    import json\n\n\n"
        "def g():\n    import json  # lazy: a reason\n\n\n"
        "def h():\n    # lazy: one reason for both\n    import json\n    import os\n"
    )
    found = lazy.lazy_imports_in(source)
    assert [(item.line, item.reasoned) for item in found] == [
        (2, False),
        (6, True),
        (11, True),
        (12, True),
    ]
