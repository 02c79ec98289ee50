"""The map of the house is true: docs/layout.md names every module of the package and states
every folder's purpose, names nothing that is not there, no module is over the 800-line
rule of docs/architecture.md, and the test modules mirror the package."""
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


def test_every_folder_states_its_purpose():
    tree = layout_tree()
    folders = {str(p.relative_to(ROOT)) + "/" for p in (ROOT / "rffbench").iterdir()
               if p.is_dir() and p.name not in ("__pycache__", "conf")}
    folders |= {str(p.relative_to(ROOT)) + "/" for p in (ROOT / "tests").iterdir()
                if p.is_dir() and p.name != "__pycache__"}
    missing = sorted(f for f in folders if f not in tree)
    assert not missing, f"folders missing from docs/layout.md: {missing}"
    silent = sorted(f for f in folders if len(tree[f].split()) < 3)
    assert not silent, f"folders whose purpose docs/layout.md does not state: {silent}"


def test_no_module_is_over_the_line_rule():
    assert f"{MAX_MODULE_LINES} lines" in (ROOT / "docs" / "architecture.md").read_text()
    long = {m: n for m in package_modules()
            if (n := len((ROOT / m).read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concern): {long}"


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

