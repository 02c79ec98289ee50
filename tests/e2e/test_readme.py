"""The Python examples run as written: the "Use from Python" page's blocks (docs/python.md)
in order in one namespace, saying what they claim (the Pipeline with defaults reaches
exact kernel ridge's accuracy), and the README's one example."""
import re
import sys

import pytest

from tests.helpers import ROOT


def python_blocks(page):
    text = (ROOT / "docs" / page).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_use_from_python_blocks_run(capsys):
    """The "Use from Python" page's blocks run, in order, in one namespace, and say what
    they claim (the Pipeline with defaults reaches exact kernel ridge's accuracy)."""
    import types
    import warnings

    blocks = python_blocks("python.md")
    assert len(blocks) >= 5
    # a real module, as a user's script is: classes defined in it can be pickled
    mod = types.ModuleType("docs_blocks")
    sys.modules[mod.__name__] = mod
    ns = mod.__dict__
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for i, code in enumerate(blocks):
                exec(compile(code, f"docs/python.md block {i + 1}", "exec"), ns)
    finally:
        del sys.modules[mod.__name__]
    assert ns["acc_exact"] > 0.97 and ns["acc_rff"] >= ns["acc_exact"] - 0.01
    assert ns["search"].best_score_ > 0.95
    assert ns["r2"] > 0.4
    assert ns["report"].passed
    need = ns["need"].set_index("method")["D_required"]
    assert need["hoeffding"] == 147556  # 4 ln(40) / 0.01^2, rounded up
    out = capsys.readouterr().out
    assert "check_feature_map(stratified_rff, kernel=gaussian): passed" in out


def test_the_readme_python_example_runs():
    """The README's one Python example runs as written."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    ns = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)


def fence_problems(text):
    """What a Markdown renderer would get wrong in ``text``'s code fences (CommonMark, by
    markdown-it, the parser behind the docs' MyST): a fence that never closes (it swallows
    the rest of the page), or a line inside a fence that ends with a fence marker glued to
    text (``...note column)```: meant to close the block, it does not)."""
    from markdown_it import MarkdownIt

    lines = text.splitlines()
    problems = []
    for tok in MarkdownIt("commonmark").parse(text):
        if tok.type != "fence":
            continue
        start, end = tok.map
        marker = tok.markup
        closing = lines[end - 1].strip() if end - 1 > start else ""
        if not (closing.startswith(marker) and set(closing) <= set(marker[0])):
            problems.append(f"line {start + 1}: the fence opened here never closes")
        for i, ln in enumerate(lines[start + 1:end - 1], start + 2):
            if ln.rstrip().endswith(marker[:3]) and not ln.strip().startswith(marker[:3]):
                problems.append(f"line {i}: {ln.strip()[-40:]!r} ends with a fence marker "
                                "glued to text, which does not close the block")
    return problems


MARKDOWN_PAGES = ["README.md", "results/README.md", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def test_the_fence_check_finds_what_renderers_get_wrong():
    assert fence_problems("a\n\n```text\nout\n(note)```\n\n## Next\n") == [
        "line 3: the fence opened here never closes",
        "line 5: '(note)```' ends with a fence marker glued to text, which does not close "
        "the block"]
    assert fence_problems("```text\nout\n```\n\n## Next\n") == []


@pytest.mark.parametrize("page", MARKDOWN_PAGES)
def test_every_fence_of_every_page_closes(page):
    """The README (and every page of docs/) renders everywhere a project's page is read:
    each code block closes where it was meant to (a fence glued to the last line of a
    block swallowed the README's next sections)."""
    assert fence_problems((ROOT / page).read_text()) == []


def test_every_sample_of_the_docs_is_written_by_the_reference_script(tmp_path):
    """The docs' sample output (log, summary, times) sits between markers that
    ``python -m rffbench.reference --samples`` rewrites: every marker names a sample the
    script writes, each sample is on a page, and rewriting keeps every fence intact and
    replaces only the marked text."""
    from rffbench import reference

    found = {}
    for page in reference.SAMPLE_PAGES:
        text = (ROOT / page).read_text()
        for m in reference.SAMPLE.finditer(text):
            found.setdefault(m.group("name"), []).append(page)
        assert text.count("<!-- sample ") == text.count("<!-- /sample -->"), page
    assert set(found) == set(reference.SAMPLE_NAMES)
    values = {n: (f"\n```text\nnew {n}\n```\n" if n in ("default-log", "default-summary")
                  else f"new {n}") for n in reference.SAMPLE_NAMES}
    copies = []
    for page in reference.SAMPLE_PAGES:
        dst = tmp_path / page.replace("/", "_")
        dst.write_text((ROOT / page).read_text())
        copies.append(dst)
    reference.write_samples(values, pages=copies)
    for page, dst in zip(reference.SAMPLE_PAGES, copies):
        old, new = (ROOT / page).read_text(), dst.read_text()
        assert not fence_problems(new), page
        assert reference.SAMPLE.sub("", old) == reference.SAMPLE.sub("", new)
        for name in (n for n, pages in found.items() if page in pages):
            assert f"new {name}" in new
    partial = tmp_path / "partial.md"  # a sample not given is left as it is
    partial.write_text("<!-- sample default-times -->old<!-- /sample --> <!-- sample "
                       "default-compile -->old<!-- /sample -->")
    reference.write_samples({"default-times": "new"}, pages=[partial])
    assert partial.read_text() == ("<!-- sample default-times -->new<!-- /sample --> "
                                   "<!-- sample default-compile -->old<!-- /sample -->")
    with pytest.raises(SystemExit, match="unknown sample 'nope'"):
        bad = tmp_path / "bad.md"
        bad.write_text("x <!-- sample nope -->y<!-- /sample -->\n")
        reference.write_samples(values, pages=[bad])


@pytest.mark.slow
def test_the_samples_come_from_this_versions_default_run(default_runs_once, monkeypatch):
    """samples() from the default run cold and warm (rffbench.bench.default_runs; the runs
    of the session's fixture): its log is this version's (no absolute path of this
    checkout), its summary is the printed one, its times numbers."""
    import rffbench.bench
    from rffbench import reference

    asked = []
    monkeypatch.setattr(rffbench.bench, "default_runs",
                        lambda repeats=3: asked.append(repeats) or default_runs_once)
    values = reference.samples(repeats=1)
    assert asked == [1]
    assert set(values) == set(reference.SAMPLE_NAMES) - set(reference.TABLE_SAMPLES)
    log, summary = values["default-log"], values["default-summary"]
    assert str(ROOT) not in log and "results/runs/<date>/<time>" in log
    assert summary.strip().startswith("```text\nrffbench run ") and "[learning]" in summary
    assert re.fullmatch(r"on \d+ cores the default run took [\d.]+ s with an empty numba cache "
                        r"and [\d.]+ s warm, end to end \([\d.]+ s of it before the first "
                        r"measurement; medians of 1 interleaved runs\)",
                        values["default-times"])
