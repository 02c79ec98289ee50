"""The documentation (docs/): it builds with warnings as errors, every page's internal links
and images resolve, every page loads in headless Chromium with all its images, the
configuration reference has every key; no file of the project points to notes outside
the repository; the README is a front page."""
import json
import re
import shutil
import subprocess
import sys
from urllib.parse import unquote, urlsplit

import pytest

from tests.helpers import CHROMIUM_FLAGS, ROOT, HTMLPage

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("pydata_sphinx_theme")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs") / "html"
    pages = {p: p.read_bytes() for p in (ROOT / "docs").rglob("*") if p.is_file()
             and "_build" not in p.parts and "_generated" not in p.parts}
    p = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b",
                        "html", str(ROOT / "docs"), str(out)], capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "WARNING" not in p.stderr and "ERROR" not in p.stderr, p.stderr[-4000:]
    changed = [q.name for q, data in pages.items() if q.read_bytes() != data]
    assert changed == [], f"the docs build rewrote committed files: {changed}"
    return out


def _pages(site):
    """The site's own pages (not the highlighted sources or the search machinery)."""
    skip = {"_modules", "_sources", "_static", "_downloads", "_images"}
    return sorted(p for p in site.rglob("*.html")
                  if not skip & set(p.relative_to(site).parts)
                  and p.name not in ("search.html", "genindex.html", "py-modindex.html")
                  and "reference/" not in p.relative_to(site).as_posix())


@pytest.mark.slow
def test_docs_build_and_every_internal_link_and_image_resolves(site):
    pages = _pages(site)
    names = {p.relative_to(site).as_posix() for p in pages}
    for need in ("index.html", "theory.html", "architecture.html", "api.html",
                 "_generated/config_reference.html", "_generated/registries.html",
                 "_generated/reference_report.html", "python.html", "reproductions.html"):
        assert need in names, need
    parsed, broken = {}, []
    for page in pages:
        parsed[page] = refs = HTMLPage.parse(page)
        for src in refs.images:
            if not src.startswith("data:") and not (page.parent / unquote(src)).exists():
                broken.append(f"{page.name}: image {src}")
        for href in refs.links:
            u = urlsplit(href)
            if u.scheme or href.startswith(("mailto:", "javascript:")):
                continue
            target = page if not u.path else (page.parent / unquote(u.path)).resolve()
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: link {href}")
            elif u.fragment and target.suffix == ".html":
                ids = (parsed.get(target) or HTMLPage.parse(target)).ids
                if unquote(u.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: anchor {href}")
    assert not broken, "\n".join(broken[:40])


def _config_keys():
    """Every key of the config (and of each measurement's block), dotted."""
    from dataclasses import asdict

    from rffbench.config import Config
    from rffbench.runid import flatten

    return list(flatten({k: v for k, v in asdict(Config()).items() if k != "report"} |
                        {"report": asdict(Config()).get("report", {})}))


def test_the_configuration_reference_source_has_every_key(monkeypatch):
    """Generated from the schema (docs/_ext, what the docs build writes): every key of the
    config with its default and a comment, each in a code span of its own."""
    monkeypatch.syspath_prepend(str(ROOT / "docs"))
    from _ext import config_reference

    text = config_reference()
    missing = [key for key in _config_keys() if f"| `{key}` |" not in text]
    assert not missing, missing


@pytest.mark.slow
def test_the_configuration_reference_has_every_key(site):
    """The built page (the docs build, slow): every key of the config as a code span."""
    text = (site / "_generated" / "config_reference.html").read_text()
    for key in _config_keys():
        assert f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{key}" \
               f"</span></code>" in text, key


@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium is not installed")
@pytest.mark.slow
def test_every_page_loads_in_headless_chromium_with_its_images(site, tmp_path):
    """Each page in an iframe of a checker page (file:// access allowed): loaded, titled,
    every <img> decoded (naturalWidth > 0)."""
    pages = [p.relative_to(site).as_posix() for p in _pages(site)]
    checker = site / "_check_pages.html"
    checker.write_text("""<html><body><pre id="out">pending</pre><script>
const pages = %s; const results = []; let i = 0;
function next() {
  if (i >= pages.length) { document.getElementById('out').textContent =
    'RESULT' + JSON.stringify(results) + 'END'; return; }
  const f = document.createElement('iframe');
  f.style.width = '1200px'; f.style.height = '20000px'; f.src = pages[i];
  f.onload = () => { setTimeout(() => {
    const d = f.contentDocument; const imgs = Array.from(d.images);
    results.push({page: pages[i], title: d.title, n_img: imgs.length,
                  broken: imgs.filter(m => !(m.complete && m.naturalWidth > 0))
                              .map(m => m.getAttribute('src')),
                  text: d.body ? d.body.innerText.length : 0});
    f.remove(); i++; next(); }, 50); };
  document.body.appendChild(f);
}
next();
</script></body></html>""" % json.dumps(pages))
    flags = [*CHROMIUM_FLAGS, "--allow-file-access-from-files", "--virtual-time-budget=60000",
             f"--user-data-dir={tmp_path / 'chr'}"]
    p = subprocess.run(["chromium", *flags, "--dump-dom", checker.as_uri()],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r'<pre id="out">RESULT(.*?)END</pre>', p.stdout, flags=re.S)
    assert m, p.stdout[-2000:]
    results = json.loads(m.group(1).replace("&amp;", "&").replace("&lt;", "<")
                         .replace("&gt;", ">").replace("&quot;", '"'))
    assert [r["page"] for r in results] == pages
    for r in results:
        assert r["title"] and r["text"] > 200, r
        assert not r["broken"], r
    by_page = {r["page"]: r for r in results}
    assert by_page["_generated/reference_report.html"]["n_img"] >= 10  # the report's figures


def test_no_file_points_outside_the_repository():
    """Our working notes (DESIGN.md, theory.md) are not part of the repository: nothing in
    it may send a reader there."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    files = tracked.stdout.split() if tracked.returncode == 0 else \
        [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]
    bad = []
    pattern = re.compile(r"DESIGN\.md|(?<![\w/])theory\.md|\.\./shared|shared/reference")
    for name in files:
        path = ROOT / name
        if path.suffix not in (".py", ".md", ".yaml", ".toml", ".txt", ".cfg", "") or \
                not path.is_file() or name.startswith(("results/", "tests/fixtures/")) or \
                path.name == "test_docs.py":
            continue
        inside_docs = name.startswith("docs/")  # docs/theory.md links its neighbours
        for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            hit = pattern.search(line)
            if hit and not (inside_docs and hit.group(0) == "theory.md"):
                bad.append(f"{name}:{i}: {line.strip()[:100]}")
    assert not bad, "\n".join(bad)


def test_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).exists(), link


def test_generated_blocks_of_the_pages_are_current():
    """The blocks made from the code (the map x kernel matrix of kernels-and-maps.md, from
    each map's check_kernel and tags) are current in the committed pages: a new kernel or
    map fails here until they are rewritten (the docs build fills them in as it reads the
    pages and writes no tracked file, so the order of the tests does not matter)."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from _ext import GENERATED, generated_blocks, rewrite_blocks
    finally:
        sys.path.remove(str(ROOT / "docs"))
    blocks = generated_blocks()
    seen = set()
    for page in (ROOT / "docs").glob("*.md"):
        text = page.read_text()
        seen |= {m.group("name") for m in GENERATED.finditer(text)}
        assert rewrite_blocks(text, blocks) == text, (
            f"{page.name}: a generated block is stale: python docs/_ext/__init__.py "
            "rewrites it")
    assert seen == set(blocks)
    assert "| `rff` | x | x | x | x | x |" in blocks["maps-matrix"]  # rff: every stationary one


def test_the_docs_build_fills_a_stale_block_as_it_reads_the_page():
    """What Sphinx reads has every generated block current, whatever the committed page
    holds (the build itself writes nothing: the site fixture checks the files)."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from _ext import fill_blocks, generated_blocks
    finally:
        sys.path.remove(str(ROOT / "docs"))
    handlers = {}

    class App:
        def connect(self, event, fn):
            handlers[event] = fn

    fill_blocks(App())
    source = ["# Maps\n\n<!-- generated maps-matrix -->\nstale\n<!-- /generated -->\nafter\n"]
    handlers["source-read"](None, "kernels-and-maps", source)
    assert "stale" not in source[0] and source[0].endswith("after\n")
    assert generated_blocks()["maps-matrix"] in source[0]


@pytest.mark.parametrize("key,module,registry", [
    ("kernel", "rffbench.kernels", "KERNELS"), ("features", "rffbench.features", "FEATURE_MAPS"),
    ("dataset", "rffbench.datasets", "DATASETS")])
def test_the_configuration_pages_lists_of_units_are_the_registries(key, module, registry):
    """docs/configuration.md's row of ``key`` names every built-in unit of its registry as
    an allowed value, and nothing else: a unit added or renamed fails here until the row
    says so."""
    import importlib

    builtins = set(getattr(importlib.import_module(module), registry).builtins())
    rows = [line for line in (ROOT / "docs" / "configuration.md").read_text().splitlines()
            if line.startswith(f"| `{key}` |")]
    assert len(rows) == 1, rows
    allowed = set(re.findall(r"`([^`]+)`", rows[0].split("|")[2]))
    assert allowed == builtins, (f"missing: {sorted(builtins - allowed)}, "
                                 f"not registered: {sorted(allowed - builtins)}")


def test_the_kernels_and_maps_page_names_every_unit_outside_its_table():
    """docs/kernels-and-maps.md's prose (the generated matrix aside) names every built-in
    kernel and map: a unit added fails here until the page says what it is."""
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS

    text = re.sub(r"<!-- generated [\w-]+ -->.*?<!-- /generated -->", "",
                  (ROOT / "docs" / "kernels-and-maps.md").read_text(), flags=re.S)
    named = set(re.findall(r"`([a-z0-9_]+)`", text))
    assert set(KERNELS.builtins()) - named == set()
    assert set(FEATURE_MAPS.builtins()) - named == set()
