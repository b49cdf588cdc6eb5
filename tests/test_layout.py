"""The code's two houses and its stages (docs/index.md, "Code map"), read from the imports.

The estimators (``proxboost``) never import the experiments (``proxboost.experiments``); no module
imports a module that imports it back, directly or around a longer circle; each stage of the
experiments imports only the stages below it in the code map's diagram; no module outside the
engines is longer than 900 lines. Every import counts, those inside functions too.
"""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = SRC / "proxboost"
EXPERIMENTS = "proxboost.experiments"
MAX_LINES = 900


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {
    _module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts
}


def _resolve(name: str) -> str | None:
    """The module of ``name`` (a module, or a name inside one), or None outside proxboost."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """The proxboost modules ``module`` imports (a name taken from a package counts as the
    package, a submodule taken from it as the submodule)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {_resolve(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else _resolve(base))
    return {m for m in found if m and m != module}


GRAPH = {m: _imports(m) for m in MODULES}


def _is_experiments(module: str) -> bool:
    return module == EXPERIMENTS or module.startswith(EXPERIMENTS + ".")


def test_the_library_never_imports_the_experiments():
    wrong = {
        m: sorted(i for i in imports if _is_experiments(i))
        for m, imports in GRAPH.items()
        if not _is_experiments(m)
    }
    wrong = {m: i for m, i in wrong.items() if i}
    assert not wrong, f"library modules importing the experiments: {wrong}"


@pytest.mark.slow
def test_the_library_needs_only_the_core_install():
    """The library's third-party imports are the core dependencies of pyproject.toml."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # distribution names as imported (scikit-learn is imported as sklearn)
    core = {
        {"scikit-learn": "sklearn"}.get(name, name)
        for name in (re.match(r"[A-Za-z0-9_.-]+", d).group(0) for d in project["dependencies"])
    }
    seen = {}
    for module, path in MODULES.items():
        if _is_experiments(module):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in core and top != "proxboost" and not _is_stdlib(top):
                    seen.setdefault(module, set()).add(top)
    assert not seen, f"library modules importing beyond the core install: {seen}"


def _is_stdlib(name: str) -> bool:
    import sys

    return name in sys.stdlib_module_names or name == "__future__"


def _circles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _without_package_faces(graph):
    """The graph without a package's imports of its own submodules: a package's ``__init__``
    that gathers its submodules' names is its face, not a circle (the test below checks that no
    submodule imports its package's face back)."""
    return {m: {i for i in imports if not i.startswith(m + ".")} for m, imports in graph.items()}


def test_no_module_imports_a_module_that_imports_it_back():
    circles = _circles(_without_package_faces(GRAPH))
    assert not circles, f"modules that import each other (around a circle): {circles}"


def test_no_submodule_imports_its_own_package_face():
    back = [
        f"{m} -> {i}"
        for m, imports in GRAPH.items()
        for i in imports
        if m.startswith(i + ".") and not m.endswith(".__main__")
    ]
    assert not back, back


def test_the_circle_check_finds_a_circle():
    """The oracle of the test above: a made-up circle of three is found, a chain is not."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def diagram_stages() -> list[str]:
    """The stages of docs/index.md's diagram, top to bottom (the lines ``  <name>  <what>``
    of its ``text`` block under "Code map")."""
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    block = re.search(r"## Code map.*?```text\n(.*?)```", index, re.S)
    assert block, "docs/index.md: no text diagram under 'Code map'"
    return re.findall(r"^ {2}(\w+) {2,}\S", block.group(1), re.M)


def _stage(module: str) -> str:
    if not _is_experiments(module):
        return "proxboost"
    rest = module[len(EXPERIMENTS) + 1 :]
    return rest.split(".")[0] if rest else ""


def test_the_diagram_names_every_stage_once():
    stages = diagram_stages()
    assert len(stages) == len(set(stages)), stages
    assert stages[-1] == "proxboost", "the estimators are the bottom of the diagram"
    present = {_stage(m) for m in MODULES} - {""}
    assert set(stages) == present, (
        f"docs/index.md's diagram names {sorted(set(stages))}; the code has {sorted(present)}"
    )


def test_each_stage_imports_only_the_stages_below_it():
    order = {name: k for k, name in enumerate(diagram_stages())}
    upward = [
        f"{m} ({_stage(m)}) imports {i} ({_stage(i)})"
        for m, imports in GRAPH.items()
        for i in sorted(imports)
        if _stage(m) and _stage(i) and order[_stage(i)] < order[_stage(m)]
    ]
    assert not upward, "imports that go up the diagram:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    "module", [m for m in MODULES if not m.startswith("proxboost.engines")], ids=str
)
def test_modules_a_person_can_hold_in_their_head(module):
    n = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{MODULES[module].relative_to(REPO)}: {n} lines (at most {MAX_LINES})"
