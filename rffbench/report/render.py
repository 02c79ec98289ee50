"""The report's pages: summary.md (Markdown) and index.html (one self-contained page:
its style, ``page.css``, its tables' sorting and filtering, ``tables.js``, beside this module,
and the figures are inlined), from what
:func:`rffbench.report.make_report` gathered.
"""
from __future__ import annotations

import base64
import html
import os
from collections import Counter
from pathlib import Path

from .collect import BAD

#: the page's style sheet, inlined into every index.html
CSS_FILE = Path(__file__).with_name("page.css")
#: the data tables' sorting and filtering (tables.js beside this module), inlined
SCRIPT_FILE = Path(__file__).with_name("tables.js")


def _what_was_run(rep, col):
    """[(title, [lines])] describing each sweep and the runs found."""
    items = []
    for s in col.sweeps:
        lines = [f"command overrides: {' '.join(s.overrides) or '(none)'}"]
        if s.params:
            lines.append("swept by its config (hydra.sweeper.params): "
                         + "; ".join(f"{k}={v}" for k, v in s.params.items()))
        lines.append(f"launcher: {s.launcher or 'basic'}; sweeper: {s.sweeper}")
        jobs = [j for j in col.jobs if j.sweep == s.path]
        if s.n_jobs is None:
            lines.append(s.note)
        else:
            c = Counter(j.status for j in jobs)
            lines.append(f"{s.n_jobs} jobs expected: "
                         + ", ".join(f"{c[k]} {k}" for k in ("complete",) + BAD if c[k]))
        items.append(("sweep (this folder)" if s.path in (".", "") else f"sweep {s.path}",
                      lines))
    n_runs = Counter(r.status for r in col.runs)
    lines = [f"{len(col.runs)} run directories: "
             + ", ".join(f"{v} {k}" for k, v in sorted(n_runs.items()))]
    if col.jobs and sum(rep.earlier.values()):
        lines.append(f"{sum(rep.earlier.values())} of them from earlier commands into this "
                     "directory (not among the jobs above): "
                     + ", ".join(f"{v} {k}" for k, v in sorted(rep.earlier.items()))
                     + "; their complete runs are included in the figures and tables")
    good = [r for r in col.runs if r.status == "complete"]
    if good:
        import pandas as pd

        env = pd.concat([r.records[["run_id", "rffbench", "git_sha"]].iloc[:1] for r in good])
        versions = env.fillna("").astype(str).groupby(["rffbench", "git_sha"]).size()
        if len(versions) > 1:
            lines.append("runs made by different rffbench versions (resume keeps a run's "
                         "records): " + "; ".join(f"{v} {sha or '(no git sha)'}: {n} runs"
                                                  for (v, sha), n in versions.items()))
    items.append(("runs found", lines))
    return items


def _md_table(frame):
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(str(v) for v in row.values) + " |")
    return "\n".join(lines)


def _shown(root):
    """The sweep directory as the page shows it: relative to here when inside it, its
    absolute path when it is here or above (never ".")."""
    root = Path(root).resolve()
    rel = os.path.relpath(root)
    return rel if not (rel.startswith("..") or rel == ".") else str(root)


def _title(root):
    """The page's title: the sweep's name (its folder's), then where it is."""
    return f"{Path(root).resolve().name}"


def _md_details(d):
    """A figure's details (layout, what was left out), apart from its caption."""
    return [f"<sub>{d.details}</sub>", ""] if d.details else []


def render_markdown(rep, col, env):
    out = [f"# rffbench report: {_title(col.root)}", "", f"Folder: `{_shown(col.root)}`", "",
           f"**Status: {rep.status_line}**", ""]
    out += ["## What was run", ""]
    for title, lines in _what_was_run(rep, col):
        out += [f"- {title}: " + "; ".join(lines)]
    out.append("")
    if rep.problems:
        shown, more = rep.shown_problems()
        out += ["## Problems", "", "| status | what | reason |", "|---|---|---|"]
        out += [f"| {s} | {w} | {r} |" for s, w, r in shown]
        out += ["", more] if more else []
        out.append("")
    if rep.notes:
        out += [f"Note: {n}." for n in rep.notes] + [""]
    if rep.reproductions:
        out += ["## Reproductions", ""]
        for sec in rep.reproductions:
            out += [f"### {sec.title}", "", f"**{sec.summary}**", ""]
            out += [t for t in sec.text] + [""] if sec.text else []
            for d in sec.figures:
                out += [f"![{d.name}]({d.name}.png)", "", d.caption, ""] + _md_details(d)
            for t in sec.tables:
                out += [t.caption, "", _md_table(t.frame), ""]
    out += ["## Figures", ""]
    for d in rep.figures:
        out += [f"### {d.name}", "", f"![{d.name}]({d.name}.png)", "", d.caption, ""]
        out += _md_details(d)
    if rep.skipped:
        out += ["Not drawn (their data is absent from this sweep):", ""]
        out += [f"- {s}" for s in rep.skipped] + [""]
    if rep.tables:
        out += ["## Tables", ""]
        for t in rep.tables:
            out += [f"### {t.title}", "", t.caption, "", _md_table(t.frame), ""]
    out += ["## Environment", ""] + [f"- {k}: {v}" for k, v in env] + [""]
    return "\n".join(out)


def _html_table(frame, n_keys):
    """A table whose first ``n_keys`` columns are row labels (left-aligned)."""
    e = html.escape
    cls = ["l" if i < n_keys else "" for i in range(frame.shape[1])]
    head = "<tr>" + "".join(f"<th class='{c}'>{e(str(h))}</th>"
                            for c, h in zip(cls, frame.columns)) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td class='{c}'>{e(str(v))}</td>"
                                    for c, v in zip(cls, row.values)) + "</tr>"
                   for _, row in frame.iterrows())
    return f"<table class='data'><thead>{head}</thead><tbody>{body}</tbody></table>"


def _html_figure(rep, d):
    e = html.escape
    data = base64.b64encode((rep.out / f"{d.name}.png").read_bytes()).decode()
    return (f"<figure id='fig-{e(d.name)}'><img alt='{e(d.name)}' "
            f"src='data:image/png;base64,{data}'><figcaption><b>{e(d.name)}.</b> "
            f"{e(d.caption)}" + (f"<span class='details'>{e(d.details)}</span>"
                                 if d.details else "") + "</figcaption></figure>")


def render_html(rep, col, env):
    e = html.escape
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>rffbench report: {e(_title(col.root))}</title>",
             f"<style>{CSS_FILE.read_text()}</style></head><body>",
             f"<h1>rffbench report: {e(_title(col.root))}</h1>",
             f"<p class='caption'>Folder: <code>{e(_shown(col.root))}</code></p>",
             f"<p><span class='status {'ok' if rep.complete else 'bad'}'>"
             f"{e(rep.status_line)}</span></p>",
             "<h2 id='run'>What was run</h2><ul>"]
    for title, lines in _what_was_run(rep, col):
        parts.append(f"<li><b>{e(title)}</b><ul>"
                     + "".join(f"<li>{e(ln)}</li>" for ln in lines) + "</ul></li>")
    parts.append("</ul>")
    if rep.problems:
        shown, more = rep.shown_problems()
        parts.append("<h2 id='problems'>Problems</h2><table><tr><th class='l'>status</th>"
                     "<th class='l'>what</th><th class='l'>reason</th></tr>")
        parts += [f"<tr><td class='l'>{e(s)}</td><td class='l'>{e(w)}</td>"
                  f"<td class='l'>{e(r)}</td></tr>" for s, w, r in shown]
        parts.append("</table>")
        parts += [f"<p class='caption'>{e(more)}</p>"] if more else []
    parts += [f"<p class='caption'>Note: {e(n)}.</p>" for n in rep.notes]
    if rep.reproductions:
        parts.append("<h2 id='reproductions'>Reproductions</h2>")
        for sec in rep.reproductions:
            parts.append(f"<h3 id='{e(sec.name)}'>{e(sec.title)}</h3>"
                         f"<p><b>{e(sec.summary)}</b></p>")
            parts += [f"<p class='caption'>{e(t)}</p>" for t in sec.text]
            for d in sec.figures:
                parts.append(_html_figure(rep, d))
            for t in sec.tables:
                parts.append(f"<p class='caption'>{e(t.caption)}</p>"
                             f"{_html_table(t.frame, t.n_keys)}")
    parts.append("<h2 id='figures'>Figures</h2>")
    for d in rep.figures:
        parts.append(_html_figure(rep, d))
    if rep.skipped:
        parts.append("<p>Not drawn (their data is absent from this sweep):</p><ul>"
                     + "".join(f"<li>{e(s)}</li>" for s in rep.skipped) + "</ul>")
    if rep.tables:
        parts.append("<h2 id='tables'>Tables</h2>")
        for t in rep.tables:
            parts.append(f"<h3 id='table-{e(t.name)}'>{e(t.title)}</h3>"
                         f"<p class='caption'>{e(t.caption)}</p>{_html_table(t.frame, t.n_keys)}")
    parts.append("<h2 id='environment'>Environment</h2><table>")
    parts += [f"<tr><th class='l'>{e(k)}</th><td class='l'>{e(v)}</td></tr>" for k, v in env]
    parts.append(f"</table><script>{SCRIPT_FILE.read_text()}</script></body></html>")
    return "\n".join(parts)


__all__ = ["render_html", "render_markdown"]
