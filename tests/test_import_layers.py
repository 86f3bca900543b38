"""python/psbench is layered (docs/architecture.md): base < results < run < report <
history < reproduce < cli. A module imports only from its own layer or the ones below, at module
level and inside functions alike, and no group of modules imports itself in a circle."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "psbench"
LAYERS = ["base", "hosts", "results", "run", "report", "history", "reproduce", "cli"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) for every psbench module path imports, wherever the import is."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("psbench")]
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}:{node.lineno}: relative import; write psbench.<layer>...")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("psbench"):
            for a in node.names:  # `from psbench.run import measure` imports a module
                child = f"{node.module}.{a.name}"
                found.append((node.lineno, child if child in known else node.module))
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_lives_in_a_layer():
    loose = [
        name
        for name in modules()
        if layer_of(name) is None and name not in ("psbench", "psbench.__main__")
    ]
    assert loose == [], f"modules outside the layer packages {LAYERS}: {loose}"


def upward_imports(mods: dict[str, Path]) -> list[str]:
    known = set(mods)
    found = []
    for name, path in sorted(mods.items()):
        mine = layer_of(name)
        for line, target in imports_of(path, known):
            theirs = layer_of(target)
            if mine and theirs and LAYERS.index(theirs) > LAYERS.index(mine):
                found.append(f"{path.name}:{line}: {name} imports {target}")
    return found


def import_cycles(mods: dict[str, Path]) -> list[list[str]]:
    known = set(mods)
    # A package's __init__ importing its own modules is how a package shows its
    # interface, not a cycle of design: edges into the package itself are left out.
    graph = {
        name: {
            t
            for _, t in imports_of(path, known)
            if t in known and t != name and not t.startswith(name + ".")
        }
        for name, path in mods.items()
    }
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_imports_go_only_downward():
    assert upward_imports(modules()) == []


def test_no_import_cycles():
    assert import_cycles(modules()) == []


def test_an_injected_upward_import_is_caught_wherever_it_is(tmp_path):
    top = tmp_path / "top.py"
    top.write_text("from psbench.cli import main\n")
    inner = tmp_path / "inner.py"
    inner.write_text("def f():\n    from psbench.report import html\n")
    down = tmp_path / "down.py"
    down.write_text("from psbench.results import stats\n")
    mods = modules() | {
        "psbench.base.top": top,
        "psbench.run.inner": inner,
        "psbench.report.down": down,
    }
    assert upward_imports(mods) == [
        "top.py:1: psbench.base.top imports psbench.cli.main",
        "inner.py:2: psbench.run.inner imports psbench.report.html",
    ]


def test_an_injected_cycle_is_caught(tmp_path):
    (tmp_path / "a.py").write_text("from psbench.base import b\n")
    (tmp_path / "b.py").write_text("def f():\n    import psbench.base.a\n")
    mods = modules() | {"psbench.base.a": tmp_path / "a.py", "psbench.base.b": tmp_path / "b.py"}
    assert import_cycles(mods) == [["psbench.base.a", "psbench.base.b", "psbench.base.a"]]
