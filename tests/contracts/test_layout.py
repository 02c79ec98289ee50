"""The map of the house is true: docs/layout.md names every module of the package and every
folder, says of each module what it defines (its names, its registered units: all of them,
and nothing another module defines), names nothing that is not there, no module is over the
800-line rule of docs/architecture.md, and the test modules mirror the package."""
import ast
import functools
import re
from pathlib import Path

from tests.helpers import ROOT

#: the most lines a module of the package may have (docs/architecture.md)
MAX_MODULE_LINES = 800
#: the column where descriptions start in the tree of docs/layout.md
DESCRIPTION_COLUMN = 24


def layout_tree():
    """{path: description} of the tree in docs/layout.md's text block: an entry is a name at
    an indentation of 2 per level (a folder ends with '/'), a continuation line is indented
    to the description column."""
    text = (ROOT / "docs" / "layout.md").read_text()
    block = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    entries, stack, last = {}, [], None
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent >= DESCRIPTION_COLUMN:  # the description of the entry above, continued
            entries[last] += " " + line.strip()
            continue
        assert indent % 2 == 0, f"docs/layout.md: odd indentation: {line!r}"
        name, _, description = line.strip().partition(" ")
        stack = stack[:indent // 2]
        last = "".join(stack) + name
        entries[last] = description.strip()
        if name.endswith("/"):
            stack.append(name)
    return entries


def package_modules():
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rffbench").rglob("*.py")
                  if "__pycache__" not in p.parts and "conf" not in p.relative_to(ROOT).parts)


def test_every_module_is_on_the_map_and_nothing_else():
    tree = layout_tree()
    listed = {p for p in tree if p.startswith("rffbench/") and p.endswith(".py")}
    modules = set(package_modules())
    assert not modules - listed, f"modules missing from docs/layout.md: {sorted(modules - listed)}"
    stale = sorted(listed - modules)
    assert not stale, f"docs/layout.md names what is not there: {stale}"


@functools.lru_cache(maxsize=1)
def _walk():
    """(folders holding a file, folders holding a Python module) under rffbench/ and
    tests/, each as 'a/b/', not __pycache__ nor hidden ones (their numba caches hold
    thousands of files) nor rffbench/conf, the link to conf/."""
    import os

    files, modules = set(), set()
    for top in ("rffbench", "tests"):
        for where, dirs, names in os.walk(ROOT / top):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")
                       and not (where == str(ROOT / "rffbench") and d == "conf")]
            rel = str(Path(where).relative_to(ROOT)) + "/"
            files |= {rel} if names else set()
            modules |= {rel} if any(n.endswith(".py") for n in names) else set()
    return files, modules


def folders_with_files():
    """The folders under rffbench/ and tests/ that hold a file, and those above them."""
    folders = set()
    for f in _walk()[0]:
        parts = f.rstrip("/").split("/")
        folders |= {"/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1)}
    return folders


def package_folders():
    """The folders of the package and of the tests (rffbench/conf is conf/, listed apart)."""
    return {f for f in folders_with_files() if f.count("/") > 1 or f == "tests/"} - {
        "rffbench/conf/"}


def unlisted_folders(tree, folders):
    """The folders docs/layout.md does not list: a folder needs its entry when it, or the
    folder it is in, holds Python modules (in it or beneath it); a folder inside a folder of
    data only (shipped files, a stored sweep) is covered by that folder's entry."""
    def code(f):
        return any(g.startswith(f) for g in _walk()[1])

    return sorted(f for f in folders if f not in tree
                  and (code(f) or code(str(Path(f).parent) + "/")))


def test_every_folder_states_its_purpose():
    tree = layout_tree()
    folders = package_folders()
    missing = unlisted_folders(tree, folders)
    assert not missing, f"folders missing from docs/layout.md: {missing}"
    silent = sorted(f for f in folders if f in tree and len(tree[f].split()) < 3)
    assert not silent, f"folders whose purpose docs/layout.md does not state: {silent}"


def stale_entries(tree):
    return sorted(p for p in tree if not (ROOT / p.rstrip("/")).exists())


def test_every_entry_is_there():
    """A file or folder the tree names that the repository does not hold (one removed or
    renamed without its entry) is stale."""
    stale = stale_entries(layout_tree())
    assert not stale, f"docs/layout.md names what is not there: {stale}"


@functools.lru_cache(maxsize=None)
def bound_names(path):
    """The names a module binds at its top level: what it defines, and for a package's face
    (__init__.py) what it imports to show."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and path.name == "__init__.py":
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)  # cached: read, never changed


@functools.lru_cache(maxsize=1)
def registered_units():
    """{module name: [the units it registers]} over the maps, kernels and dataset sources."""
    from rffbench.datasets import DATASETS
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS

    units = {}
    for registry in (FEATURE_MAPS, KERNELS, DATASETS):
        for name in registry:
            unit = registry[name]
            module = getattr(unit, "__module__", None) or type(unit).__module__
            units.setdefault(module, []).append(name)
    return units


#: a word of a description that reads as a Python name, not as English: snake_case,
#: CamelCase, UPPER_CASE
IDENTIFIER = re.compile(r"\b(?:[A-Za-z]\w*_\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z]{2,}[A-Z0-9]*)\b")


def description_problems(tree):
    modules = {m: bound_names(ROOT / m) for m in package_modules()}
    defined_in = {}
    for m, names in modules.items():
        for n in names:
            defined_in.setdefault(n, set()).add(m)
    units = registered_units()
    problems = []
    for m, names in sorted(modules.items()):
        text = tree.get(m, "").replace("`", "")
        words = set(re.findall(r"[A-Za-z_][\w.-]*\w|\w", text))
        own_units = set(units.get(m[:-3].replace("/", "."), ()))
        if m.endswith("__main__.py"):
            command = "python -m " + m[:-len("/__main__.py")].replace("/", ".")
            if command not in text:
                problems.append(f"{m}: does not name its command ({command})")
            continue
        if not words & (names | own_units):
            problems.append(f"{m}: names none of its names or units ({sorted(names)[:6]}...)")
        for w in sorted(set(IDENTIFIER.findall(text)) & set(defined_in)):
            if w not in names:
                problems.append(f"{m}: names {w}, defined in {sorted(defined_in[w])}")
        missing = sorted(own_units - words)
        if missing:
            problems.append(f"{m}: registers {missing} and does not name them")
    return problems


def test_each_description_says_what_its_module_defines():
    """Each module's entry names what the module binds (a class, function or constant of
    its own, or the units it registers: all of them), a __main__'s its command; a Python
    name in an entry that another module defines is a wrong description (layout.md once put
    RunContext in measure/base.py; it is in experiment.py)."""
    problems = description_problems(layout_tree())
    assert not problems, "docs/layout.md:\n" + "\n".join(problems)


def test_no_module_is_over_the_line_rule():
    """The package's modules and the tests' alike (a test module over it is split by the
    package's modules it tests)."""
    assert f"{MAX_MODULE_LINES} lines" in (ROOT / "docs" / "architecture.md").read_text()
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")
                   if "__pycache__" not in p.parts)
    long = {m: n for m in package_modules() + tests
            if (n := len((ROOT / m).read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concern): {long}"


#: the most lines a function of the package may have, its docstring included
MAX_FUNCTION_LINES = 80


def test_no_function_is_over_its_line_rule():
    """A function reads as its steps (docs/architecture.md): one over 80 lines is split
    into functions of its own (none was left when the rule came, from eight)."""
    assert f"at most {MAX_FUNCTION_LINES} lines" in (ROOT / "docs" / "architecture.md") \
        .read_text()
    long = [f"{m}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for m in package_modules()
            for n in ast.walk(ast.parse((ROOT / m).read_text()))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def mirroring_tests(module):
    """The test modules that may hold ``module``'s tests by name: tests/P/test_X.py for
    rffbench/P/X.py (tests/test_X.py or tests/e2e/test_X.py at the top), or the package's
    test module tests/test_P.py, which tests the package as a whole while it keeps within
    the line rule."""
    rel = Path(module).relative_to("rffbench")
    name = rel.stem
    own = [ROOT / "tests" / rel.parent / f"test_{name}.py"]
    if rel.parent == Path("."):
        own.append(ROOT / "tests" / "e2e" / f"test_{name}.py")
    else:
        whole = ROOT / "tests" / f"test_{rel.parts[0].lstrip('_')}.py"
        if whole.is_file() and len(whole.read_text().splitlines()) <= MAX_MODULE_LINES:
            own.append(whole)
    return [p for p in own if p.is_file()]


def test_every_module_has_a_test_module_of_its_name():
    """The mirror the other way: a reader looking for a module's tests finds them by its
    name."""
    modules = [m for m in package_modules()
               if Path(m).name not in ("__init__.py", "__main__.py")]
    missing = sorted(m for m in modules if not mirroring_tests(m))
    assert not missing, f"modules without a test module of their name: {missing}"


def test_the_test_of_a_module_is_found_by_its_name():
    """tests/test_X.py tests rffbench/X.py or the package rffbench/X/ (rffbench/_X/ for the
    compiled loops); tests/P/test_X.py tests rffbench/P/X.py.  contracts/ and e2e/ hold the
    rules over every unit and the runs through the command."""
    wrong = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        rel = path.relative_to(ROOT / "tests")
        if rel.parts[0] in ("contracts", "e2e"):
            continue
        name = path.stem[len("test_"):]
        where = ROOT / "rffbench" / Path(*rel.parts[:-1])
        if not ((where / f"{name}.py").is_file() or (where / name).is_dir()
                or (where / f"_{name}").is_dir()):
            wrong.append(str(rel))
    assert not wrong, f"test modules that name no module of the package: {wrong}"



def test_the_map_checks_fail_on_each_kind_of_drift():
    """Each check above says no to the drift it is for, on the tree as read with one entry
    changed: a description naming what another module defines, one naming nothing of its
    module, one leaving out a unit; an entry for a removed file; a folder left out."""
    tree = layout_tree()
    assert not description_problems(tree) and not stale_entries(tree)
    assert not unlisted_folders(tree, package_folders())
    drifts = {"rffbench/measure/base.py": "Measurement and RunContext",
              "rffbench/clock.py": "timing one call",
              "rffbench/kernels/chi2.py": "additive_chi2, skewed_chi2"}
    for module, text in drifts.items():
        problems = description_problems({**tree, module: text})
        assert len(problems) == 1 and problems[0].startswith(module), (module, problems)
    assert stale_entries({**tree, "rffbench/gone.py": "a module removed"}) == [
        "rffbench/gone.py"]
    for folder in ("rffbench/datasets/data/", "tests/fixtures/sweep_v0/", "tests/cuda/"):
        rest = {k: v for k, v in tree.items() if k != folder}
        assert unlisted_folders(rest, package_folders()) == [folder]
