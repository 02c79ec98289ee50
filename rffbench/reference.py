"""Regenerate the committed reference report: ``python -m rffbench.reference``.

Runs every standard preset of ``conf/experiment/`` (``python run.py -m
experiment=NAME``, sweep dir ``results/multirun/NAME``: an interrupted
regeneration resumes), reports each into ``results/reference/NAME/`` (PNG
figures, summary.md and the self-contained index.html; PDFs, results.csv and
jobs.csv stay in the sweep dirs, which are not committed) and writes
``results/README.md`` with each preset's question, a link to its page, its
figures with their captions and its tables.

    python -m rffbench.reference                 # all presets (~35 min on 2 cores)
    python -m rffbench.reference --only bounds   # one preset
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ["error_vs_D", "dimension", "bounds", "learning", "maps", "paper_table", "quadrature",
           "quadrature_standardized", "sutherland2015", "choromanski2021", "yu2016", "speed"]
DPI = 80  # committed figures stay small


def question(name):
    """The comment block at the top of a preset: what question it answers."""
    lines = (ROOT / "conf" / "experiment" / f"{name}.yaml").read_text().splitlines()
    text = [ln.lstrip("# ").rstrip() for ln in lines[1:] if ln.startswith("#")]
    return " ".join(t for t in text if t and not t.startswith("python run.py"))


def main(argv=None):
    from .report import make_report

    ap = argparse.ArgumentParser(prog="python -m rffbench.reference", description=__doc__)
    ap.add_argument("--only", action="append", choices=PRESETS, help="preset(s) to regenerate")
    ap.add_argument("--readme-only", action="store_true",
                    help="only rewrite results/README.md from the existing summaries")
    args = ap.parse_args(argv)
    names = [] if args.readme_only else (args.only or PRESETS)
    ref = ROOT / "results" / "reference"
    for name in names:
        print(f"== {name}", flush=True)
        p = subprocess.run([sys.executable, str(ROOT / "run.py"), "-m", f"experiment={name}",
                            ], cwd=ROOT)
        if p.returncode != 0:
            print(f"rffbench reference: preset {name} had failed jobs (exit {p.returncode}); "
                  "reporting what completed", file=sys.stderr)
        make_report(ROOT / "results" / "multirun" / name, ref / name, pdf=False, dpi=DPI,
                    tables=False)
    write_readme(ref)
    return 0


def write_readme(ref):
    """results/README.md from the summaries in ``ref`` (no runs)."""
    parts = ["# rffbench reference report", "",
             "Regenerate with `python -m rffbench.reference` (all presets, ~35 min on 2 cores; "
             "one preset: `--only NAME`). Each section is one preset of `conf/experiment/`, "
             "run as `python run.py -m experiment=NAME`; its self-contained page is "
             "`reference/NAME/index.html`, and the full tables and PDF figures are in "
             "`results/multirun/NAME/report/` after a run.", ""]
    for name in PRESETS:
        summary = ref / name / "summary.md"
        if not summary.exists():
            continue
        body, skipping = [], False
        for ln in summary.read_text().splitlines()[1:]:  # drop its title
            if ln.startswith("Not drawn (their data is absent"):  # other presets' figures
                skipping = True
                continue
            if skipping and (ln.startswith("- ") or not ln.strip()):
                continue
            skipping = False
            body.append(ln)
        body = [ln.replace("](", f"](reference/{name}/") if ln.startswith("![") else
                (("#" + ln) if ln.startswith("#") else ln) for ln in body]
        parts += [f"## {name}", "", f"*{question(name)}*", "",
                  f"Page: [reference/{name}/index.html](reference/{name}/index.html)", "",
                  *body, ""]
    (ROOT / "results" / "README.md").write_text("\n".join(parts))
    print(f"wrote {ROOT / 'results' / 'README.md'}")


if __name__ == "__main__":
    sys.exit(main())
