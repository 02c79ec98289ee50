"""rffbench/report/render.py: the report page's data tables sort and filter in the page
(tables.js), checked in headless Chromium by clicking."""
import json
import re
import shutil
import subprocess

import pandas as pd
import pytest

from rffbench.report import render
from tests.helpers import CHROMIUM_FLAGS

#: clicks the third column's header twice, then filters by "b", and writes what it saw
CLICKS = """<script>
var t = document.querySelector("table.data"), th = t.tHead.rows[0].cells[2];
function col(i) { return Array.from(t.tBodies[0].rows).map(r => r.cells[i].textContent); }
th.click(); var asc = col(2), ascSort = th.getAttribute("aria-sort");
th.click(); var desc = col(2);
t.tHead.rows[0].cells[0].click(); var byName = col(0);
var box = document.querySelector("input.filter"); box.value = "B";
box.dispatchEvent(new Event("input"));
var shown = Array.from(t.tBodies[0].rows).filter(r => !r.hidden).map(r => r.cells[0].textContent);
document.body.setAttribute("data-result", JSON.stringify(
  {asc: asc, ascSort: ascSort, desc: desc, byName: byName, shown: shown}));
</script>"""


def test_the_html_table_has_a_head_and_a_body():
    frame = pd.DataFrame({"map": ["rff", "orf"], "D=16": ["0.1", "0.05"]})
    html = render._html_table(frame, 1)
    assert html.startswith("<table class='data'><thead><tr><th class='l'>map</th>")
    assert html.count("<tr>") == 3 and "</thead><tbody>" in html


@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium is not installed")
def test_clicking_a_header_sorts_and_the_box_filters_in_chromium(tmp_path):
    """Numbers sort as numbers (1e-05 < 0.25 < 3 < 20 (n=2)), n/a and empty cells last
    both ways, a second click reverses, text sorts as text, ties keep their order; the
    filter keeps the rows containing its text (any case).  The browser is the point: it
    starts a process (one of the default suite's budgeted sites, ~2 s)."""
    frame = pd.DataFrame({"map": ["alpha", "Beta", "gamma", "delta", "bet"],
                          "kernel": ["g"] * 5,
                          "error": ["3", "20 (n=2)", "n/a", "1e-05", "0.25"]})
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><html><body>" + render._html_table(frame, 2)
                    + f"<script>{render.SCRIPT_FILE.read_text()}</script>{CLICKS}</body></html>")
    p = subprocess.run(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chr'}",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r'data-result="([^"]*)"', p.stdout)
    assert m, p.stdout[-2000:]
    got = json.loads(m.group(1).replace("&quot;", '"'))
    assert got["asc"] == ["1e-05", "0.25", "3", "20 (n=2)", "n/a"]
    assert got["ascSort"] == "ascending"
    assert got["desc"] == ["20 (n=2)", "3", "0.25", "1e-05", "n/a"]
    assert got["byName"] == ["alpha", "bet", "Beta", "delta", "gamma"]
    assert got["shown"] == ["bet", "Beta"]
