"""The package's layers (docs/architecture.md, "Layers"): every import statement of every
module (module level and inside functions) goes to the importer's layer or one below it,
and the imports between modules have no cycle."""
import ast
import re

from tests.helpers import ROOT

PACKAGE = ROOT / "rffbench"


def layers():
    """{module or package name: layer index (0 = top)} from docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"## Layers\n.*?```text\n(.*?)```", text, re.S).group(1)
    out = {}
    for i, line in enumerate(ln for ln in block.splitlines() if ln.strip()):
        for name in re.findall(r"rffbench[\w.]*", line):
            out[name] = i
    return out


def module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path):
    """The rffbench modules ``path`` imports (absolute names), with their line numbers."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("rffbench")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("rffbench"):
                continue
            # "from . import x" and "from .pkg import mod": the module when it is one
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub if _is_module(sub) else target, node.lineno))
    return out


def _is_module(name):
    rel = PACKAGE.parent.joinpath(*name.split("."))
    return rel.with_suffix(".py").exists() or (rel / "__init__.py").exists()


def layer_of(name, table):
    best = None
    for key in table:
        if name == key or name.startswith(key + "."):
            if best is None or len(key) > len(best):
                best = key
    return best


def graph():
    table = layers()
    edges = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        src = module_name(path)
        edges[src] = [(dst, line) for dst, line in imports(path) if dst != src]
    return table, edges


def test_every_module_has_a_layer():
    table, edges = graph()
    missing = sorted(m for m in edges if layer_of(m, table) is None)
    assert not missing, f"modules without a layer in docs/architecture.md: {missing}"


def test_no_import_reaches_into_a_higher_layer():
    table, edges = graph()
    up = []
    for src, dsts in edges.items():
        ls = table[layer_of(src, table)]
        for dst, line in dsts:
            key = layer_of(dst, table)
            if key is not None and table[key] < ls:
                up.append(f"{src}:{line} imports {dst} (layer {table[key]} above {ls})")
    assert not up, "\n".join(up)


def cycles_of(adj):
    """Every cycle a depth-first walk of ``adj`` ({node: set of nodes}) meets."""
    state, stack, cycles = {}, [], []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(adj.get(n, ())):
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(adj):
        if n not in state:
            visit(n)
    return cycles


def test_the_imports_have_no_cycle():
    _, edges = graph()
    adj = {s: {d for d, _ in ds if d in edges} for s, ds in edges.items()}
    cycles = cycles_of(adj)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)
    # the walk finds a cycle when there is one (config -> cli_help -> config was one)
    adj["rffbench.config"] = adj["rffbench.config"] | {"rffbench.cli_help"}
    assert any(c[0] == c[-1] and "rffbench.cli_help" in c for c in cycles_of(adj))


def test_the_import_reader_sees_what_it_must():
    """The reader resolves relative imports at module and function level (catalog's
    import of rffbench.measure is inside a function)."""
    table, edges = graph()
    got = {d for d, _ in edges["rffbench.report.catalog"]}
    assert "rffbench.report.across" in got and "rffbench.measure" in got
    assert "rffbench.cli_help" in {d for d, _ in edges["rffbench.cli"]}
    assert layer_of("rffbench.report.__main__", table) == "rffbench.report.__main__"
    assert layer_of("rffbench._numba.gram", table) == "rffbench._numba"
