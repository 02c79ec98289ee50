"""Every function, method and class on the API page (docs/api.md) documents exactly the
parameters it takes (numpydoc ``Parameters``, in the signature's order) and what it returns
(``Returns`` or ``Yields``), as scikit-learn's test_docstring_parameters checks its own."""
import importlib
import inspect
import re

import pytest

from tests.helpers import ROOT

DIRECTIVE = re.compile(r"^\.\. auto(class|function|method|module):: (\S+)"
                       r"(?:\n   :members:(?: (.*))?)?", re.M)


def api_items():
    """(qualified name, object, kind) of every item docs/api.md documents."""
    text = (ROOT / "docs" / "api.md").read_text()
    items = []
    for m in DIRECTIVE.finditer(text):
        kind, name = m.group(1), m.group(2)
        members = (m.group(3) or "") if ":members:" in m.group(0) else None
        if kind == "module":
            module = importlib.import_module(name)
            for m in (members or "").replace(",", " ").split():
                items.append((f"{name}.{m}", getattr(module, m), "function"))
            continue
        module_name, attr = name.rsplit(".", 1)
        try:
            owner = importlib.import_module(module_name)
        except ModuleNotFoundError:  # a method: module.Class.method
            mod, cls = module_name.rsplit(".", 1)
            owner = getattr(importlib.import_module(mod), cls)
        obj = getattr(owner, attr)
        items.append((name, obj, kind))
        if kind == "class" and members is not None:
            names = (members.replace(",", " ").split() if members.strip() else
                     [m for m, v in vars(obj).items() if callable(v) and not m.startswith("_")])
            items += [(f"{name}.{m}", getattr(obj, m), "method") for m in names]
    return items


def sections(doc):
    """{section title: [lines]} of a numpydoc docstring (dedented)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out, current = {}, None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and line.strip():
            current = line.strip()
            out[current] = []
            continue
        if re.fullmatch(r"-{3,}", line.strip()):
            continue
        if current is not None:
            out[current].append(line)
    return out


def documented_parameters(doc):
    """The parameter names of the ``Parameters`` section, in order (``a, b : type`` names
    two; ``**params`` keeps its stars)."""
    names = []
    for line in sections(doc).get("Parameters", []):
        if line and not line[0].isspace():
            head = line.split(" : ")[0].strip()
            names += [n.strip() for n in head.split(",") if n.strip()]
    return names


def docstring_of(obj, kind):
    """A class's docstring is that of the class that defines its constructor (a subclass
    that keeps its base's parameters keeps their documentation)."""
    if kind == "class":
        owner = next(c for c in obj.__mro__ if "__init__" in vars(c))
        return obj.__doc__ if owner is object else owner.__doc__
    return inspect.getdoc(obj)


def signature_parameters(obj, kind):
    if kind == "class" and obj.__init__ is object.__init__:
        return []  # no constructor of its own: nothing to document
    target = obj.__init__ if kind == "class" else obj
    sig = inspect.signature(target)
    out = []
    for i, p in enumerate(sig.parameters.values()):
        if i == 0 and kind != "function" and p.name in ("self", "cls"):
            continue  # a method's own object, not a parameter
        out.append({p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name)
    return out


ITEMS = api_items()


def test_the_api_page_lists_what_it_promises():
    names = {n for n, _, _ in ITEMS}
    assert len(ITEMS) >= 30
    assert {"rffbench.features.FeatureMap", "rffbench.testing.check_feature_map",
            "rffbench.exact.ExactKRR", "rffbench.theory.features_needed"} <= names


@pytest.mark.parametrize("name,obj,kind", ITEMS, ids=[n for n, _, _ in ITEMS])
def test_documented_parameters_match_the_signature(name, obj, kind):
    doc = docstring_of(obj, kind)
    documented, actual = documented_parameters(doc), signature_parameters(obj, kind)
    if actual:
        assert "Parameters" in sections(doc), f"{name}: no numpydoc Parameters section"
    assert documented == actual, (f"{name}: documents {documented}, takes {actual}")


@pytest.mark.parametrize("name,obj,kind", [i for i in ITEMS if i[2] != "class"],
                         ids=[n for n, _, k in ITEMS if k != "class"])
def test_functions_say_what_they_return(name, obj, kind):
    found = sections(inspect.getdoc(obj))
    assert "Returns" in found or "Yields" in found, f"{name}: no Returns section"


def test_the_checker_catches_a_mismatch():
    def f(a, b=1, **params):
        """Do.

        Parameters
        ----------
        a, b : int
            Numbers.

        Returns
        -------
        int
        """

    assert documented_parameters(f.__doc__) == ["a", "b"]
    assert signature_parameters(f, "function") == ["a", "b", "**params"]
