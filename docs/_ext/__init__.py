"""Pages generated at build time from the code (never edited by hand):
``_generated/config_reference.md``, every key of the configuration schema with its
default and its comment in the code, and ``_generated/registries.md``, what the
registries hold (as ``rffbench --help`` lists them); both in the ignored ``_generated/``.

The committed pages' generated blocks (``<!-- generated NAME -->``) are filled in as Sphinx
reads each page (:func:`fill_blocks`): a build writes no tracked file.  The test-suite
fails while a committed block is stale; ``python docs/_ext/__init__.py`` rewrites them."""
import dataclasses
import inspect
import json
import re
from pathlib import Path


def _attr_docs(cls):
    """{field: comment}: the ``#:`` comment right above each field of a dataclass and its
    bases, and ``field_docs`` of a block built from declarations (the kernel block's keys,
    described in each kernel's numpydoc Parameters)."""
    docs = {}
    for klass in reversed(cls.__mro__):
        docs.update(_source_docs(klass))
        docs.update(klass.__dict__.get("field_docs") or {})
    return docs


def _source_docs(cls):
    try:
        lines = inspect.getsource(cls).splitlines()
    except (OSError, TypeError):  # a class made at run time (the measure block)
        return {}
    docs, comment = {}, []
    for line in lines[1:]:
        text = line.strip()
        if text.startswith("def "):
            break
        if text.startswith("#:"):
            comment.append(text[2:].strip())
            continue
        name = text.split(":")[0]
        if comment and ":" in text and name.isidentifier():
            docs[name] = " ".join(comment)
        if not text.startswith("#"):
            comment = []
    return docs


def _default(f):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _fmt(v):
    if dataclasses.is_dataclass(v):
        return ""
    text = json.dumps(v) if isinstance(v, (list, dict, bool)) or v is None else str(v)
    return f"`{text}`"


def _cell(text):
    return text.replace("|", "\\|")


def _blocks(cls, prefix=""):
    """(block key, block class, [(key, default, comment)]) for ``cls`` and its sub-blocks."""
    rows, subs = [], []
    docs = _attr_docs(cls)
    for f in dataclasses.fields(cls):
        default = _default(f)
        if dataclasses.is_dataclass(default):
            subs.append((f"{prefix}{f.name}", type(default)))
            continue
        text = docs.get(f.name) or ("run this measurement" if f.name == "enabled" else "")
        c = (getattr(cls, "constraints", None) or {}).get(f.name)
        allowed = c.text.removeprefix("use ") if c is not None else \
            ("true or false" if isinstance(default, bool) else "")
        rows.append((f"{prefix}{f.name}", _fmt(default), allowed, text))
    out = [(prefix.rstrip("."), cls, rows)] if rows else []
    for key, sub in subs:
        out += _blocks(sub, key + ".")
    return out


def config_reference():
    from rffbench.config import Config

    lines = ["# Configuration reference", "",
             "Every key of the configuration, its default and what it does, generated from "
             "the schema (`rffbench/config.py` and each measurement's `Config`) when these "
             "pages are built. Override any key on the command line (`rffbench key=value`, "
             "`python run.py key=value`); a config group (`kernel=`, `features=`, `dataset=`, "
             "`model=`, `experiment=`) sets several at once from `conf/`. Values are checked "
             "before any work: a value out of range stops the run with one line naming the "
             "key, the value and what is allowed (the \"allowed\" column, generated from the "
             "constraints each block, kernel and measurement declares: `rffbench.checks`).", ""]
    for block, cls, rows in _blocks(Config):
        title = block or "top level"
        doc = " ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split())
        lines += [f"## `{title}`" if block else "## Top-level keys", ""]
        if doc and block:
            lines += [doc, ""]
        lines += ["| key | default | allowed | meaning |", "|---|---|---|---|"]
        lines += [f"| `{k}` | {_cell(d)} | {_cell(a)} | {_cell(c)} |" for k, d, a, c in rows]
        lines.append("")
    return "\n".join(lines)


def registries():
    from rffbench.cli_help import help_text

    return "\n".join(["# What is installed", "",
                      "The kernels, feature maps, datasets, models, measurements and presets "
                      "of this installation, plug-ins included, as `rffbench --help` prints "
                      "them (generated when these pages are built):", "", "```text",
                      help_text(), "```", ""])


ROOT = Path(__file__).resolve().parents[2]


def reference_report(folder):
    """The committed reference report (results/README.md and its PNG figures) as a page:
    its figures copied next to it, its links to the self-contained pages kept as
    downloads."""
    import re
    import shutil

    src = ROOT / "results"
    text = (src / "README.md").read_text()
    dest = folder / "reference"
    for png in (src / "reference").glob("*/*.png"):
        target = dest / png.parent.name / png.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != png.read_bytes():
            shutil.copyfile(png, target)
    for page in (src / "reference").glob("*/index.html"):
        target = dest / page.parent.name / "index.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)
    text = re.sub(r"^# rffbench reference report", "# Reference report", text, flags=re.M)
    text = re.sub(r"\]\((reference/[^)]+\.html)\)", r"](\1)", text)
    return text


#: a block of a page made from the code: ``<!-- generated NAME -->...<!-- /generated -->``
GENERATED = re.compile(r"(<!-- generated (?P<name>[\w-]+) -->\n).*?(\n<!-- /generated -->)", re.S)


def generated_blocks():
    """{name: text} of the blocks pages hold between generated markers."""
    from rffbench.cli_help import maps_matrix

    return {"maps-matrix": maps_matrix()}


def rewrite_blocks(text, blocks):
    """``text`` with every generated block replaced by its current text."""
    return GENERATED.sub(lambda m: m.group(1) + blocks[m.group("name")] + m.group(3), text)


def fill_blocks(app):
    """Sphinx: every page's generated blocks current in what the build reads, not on disk."""
    blocks = generated_blocks()

    def fill(app, docname, source):
        source[0] = rewrite_blocks(source[0], blocks)

    app.connect("source-read", fill)


def write_pages(docs):
    """Rewrite the stale generated blocks of the committed pages in ``docs``; returns the
    names of the pages rewritten."""
    blocks = generated_blocks()
    out = []
    for page in sorted(Path(docs).glob("*.md")):
        text = page.read_text()
        new = rewrite_blocks(text, blocks)
        if new != text:
            page.write_text(new)
            out.append(page.name)
    return out


def write_generated(folder):
    """The pages of ``_generated/`` (ignored by git), rewritten where they changed."""
    folder = Path(folder)
    folder.mkdir(exist_ok=True)
    for name, text in (("config_reference.md", config_reference()),
                       ("registries.md", registries()),
                       ("reference_report.md", reference_report(folder))):
        path = folder / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


if __name__ == "__main__":
    print("rewrote:", ", ".join(write_pages(Path(__file__).resolve().parents[1])) or "nothing")
