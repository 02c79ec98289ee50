"""Regenerate the committed reference report: ``python -m rffbench.reference``.

Runs every standard preset of ``conf/experiment/`` (``python run.py -m
experiment=NAME``, sweep dir ``results/multirun/NAME``: an interrupted
regeneration resumes), reports each into ``results/reference/NAME/`` (PNG
figures, summary.md and the self-contained index.html; PDFs, results.csv and
jobs.csv stay in the sweep dirs, which are not committed) and writes
``results/README.md`` with each preset's question, a link to its page, its
figures with their captions and its tables.

    python -m rffbench.reference                 # all presets (~3 h on 2 cores)
    python -m rffbench.reference --only bounds   # one preset
    python -m rffbench.reference --samples       # only the docs' sample output and times
    python -m rffbench.reference --report-only   # report the existing sweeps again, no runs

The docs' sample output (the default run's log and summary, its times cold and warm)
sits between ``<!-- sample NAME -->`` and ``<!-- /sample -->`` in the README and
docs/quickstart.md; this script writes it from this version's commands (``--samples``,
or with every preset), so no page shows another version's output or another machine's
paths.

Each preset's wall time (its run and its report) is written to
``results/reference/times.csv`` as it ends, and results/README.md states them: the
regeneration's time is measured, not guessed (until every preset has been timed, the
README gives the sum of the presets' own times, each stated at the top of its file).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ["error_vs_D", "dimension", "bounds", "learning", "maps", "paper_table", "quadrature",
           "quadrature_standardized", "sutherland2015", "choromanski2021", "yu2016", "buechel2024",
           "buechel2024_magic", "buechel2024_ijcnn1", "liu2021", "landmarks", "wacker2022",
           "wacker2022_powerplant", "rahimi2007_adult",
           "wacker2022_fashion_mnist", "wilson2020", "wilson2020_defaults", "speed", "speed_blas"]
DPI = 80  # committed figures stay small
#: each preset's wall time when it was last regenerated (written as each preset ends)
TIMES = Path("results") / "reference" / "times.csv"
#: the regeneration's time while some preset has not been timed yet: the sum of the
#: presets' stated times (the comment at the top of each conf/experiment/NAME.yaml)
ESTIMATE = "~3 h on 2 cores, the sum of the presets' own times"
#: the pages holding samples, and a sample's markers
SAMPLE_PAGES = ["README.md", "docs/quickstart.md", "docs/reproductions.md"]
SAMPLE = re.compile(r"<!-- sample (?P<name>[\w-]+) -->(?P<body>.*?)<!-- /sample -->", re.S)
#: what each sample is (the names ``samples()`` writes)
SAMPLE_NAMES = {"default-log": "the default run's log and summary (warm)",
                "default-summary": "the default run's printed summary",
                "default-times": "the default run's wall time, cold and warm",
                "default-compile": "the default run's compile_time_s, cold and warm",
                "reproductions": "the committed reproductions' verdicts, counted from "
                                 "results/reference/*/reproduction_*.csv",
                "landmarks": "the landmark study's numbers, from the tables of "
                             "results/reference/landmarks/summary.md",
                "quffka-letter": "quffka's LETTER points against ours, from "
                                 "results/reference/quadrature/reproduction_munkhoeva2018.csv"}
#: the samples made from committed tables, not from a run: rewritten with the README
TABLE_SAMPLES = ("reproductions", "landmarks", "quffka-letter")


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
    ap.add_argument("--report-only", action="store_true",
                    help="only report the existing sweeps again (no runs): after a change to "
                         "the report")
    ap.add_argument("--samples", action="store_true",
                    help="only the docs' sample output and times (the default run, 3 times "
                         "cold and warm, ~1 min)")
    args = ap.parse_args(argv)
    modes = [f for f, on in (("--samples", args.samples), ("--readme-only", args.readme_only),
                             ("--report-only", args.report_only)) if on]
    if len(modes) > 1:
        ap.error(f"{modes[0]} and {modes[1]} are two modes: give one")
    if args.only and (args.samples or args.readme_only):
        ap.error(f"--only has no effect with {modes[0]}: it names the presets to run and "
                 "report (alone, or with --report-only)")
    if args.samples:
        write_samples({**samples(), **table_samples()})
        return 0
    names = [] if args.readme_only else (args.only or PRESETS)
    ref = ROOT / "results" / "reference"
    sweep_of = {name: ROOT / "results" / "multirun" / name for name in names}
    missing = [n for n in names if args.report_only and not sweep_of[n].is_dir()]
    if missing and args.only:  # asked by name: nothing is written
        ap.error(f"--report-only: no sweep to report for {', '.join(missing)} (results/"
                 f"multirun/{missing[0]} does not exist): run it first, without --report-only")
    for name in names:
        print(f"== {name}", flush=True)
        t0 = time.monotonic()
        if not args.report_only:
            p = subprocess.run([sys.executable, str(ROOT / "run.py"), "-m",
                                f"experiment={name}"], cwd=ROOT)
            if p.returncode != 0:
                print(f"rffbench reference: preset {name} had failed jobs (exit "
                      f"{p.returncode}); reporting what completed", file=sys.stderr)
        elif name in missing:
            print(f"rffbench reference: {name}: no sweep to report", file=sys.stderr)
            continue
        t1 = time.monotonic()
        make_report(sweep_of[name], ref / name, pdf=False, dpi=DPI, tables=False,
                    latex="none")
        if not args.report_only:
            record_time(name, t1 - t0, time.monotonic() - t1)
    write_readme(ref)
    values = table_samples()
    if not (args.readme_only or args.only or args.report_only):
        values.update(samples())
    write_samples(values)
    return 0


def samples(repeats=3):
    """{name: text} of every sample of a run (SAMPLE_NAMES but TABLE_SAMPLES) from
    ``repeats`` interleaved cold and warm default runs (rffbench.bench.default_runs): the
    last warm run's output, the medians' times."""
    import numpy as np

    from .bench import default_runs

    runs = default_runs(repeats)

    def med(kind, key):
        return float(np.median([r[key] for r in runs[kind]]))

    log = runs["warm"][-1]["log"].replace("RUN_DIR", "results/runs/<date>/<time>")
    log = log.replace(str(ROOT) + os.sep, "")
    lines = log.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("rffbench run "))
    last = next(i for i, ln in enumerate(lines) if ln.startswith("(n/a: "))
    cores = _cores()
    return {
        "default-log": "\n```text\n" + "\n".join(lines) + "\n```\n",
        "default-summary": "\n```text\n" + "\n".join(lines[first:last + 1]) + "\n```\n",
        "default-times": (f"on {cores} cores the default run took {med('cold', 'wall'):.1f} s "
                          f"with an empty numba cache and {med('warm', 'wall'):.1f} s warm, end "
                          f"to end ({med('warm', 'startup'):.2f} s of it before the first "
                          f"measurement; medians of {repeats} interleaved runs)"),
        "default-compile": (f"about {med('cold', 'compile'):.1f} s on the first run after "
                            f"installing, {med('warm', 'compile'):.2f} s after"),
    }


def table_samples(ref=None):
    """{name: text} of the TABLE_SAMPLES, from the committed tables in ``ref`` (default
    results/reference); a sample whose tables are not there is left out."""
    ref = ref or ROOT / "results" / "reference"
    out = {"reproductions": "\n\n" + reproduction_counts(ref) + "\n"}
    if (ref / "landmarks" / "summary.md").is_file():
        out["landmarks"] = "\n\n" + landmark_numbers(ref / "landmarks" / "summary.md") + "\n"
    quffka = ref / "quadrature" / "reproduction_munkhoeva2018.csv"
    if quffka.is_file():
        out["quffka-letter"] = "\n\n" + reproduction_detail(quffka, "letter") + "\n"
    return out


def reproduction_detail(path, dataset):
    """One dataset's points of a committed reproduction table as Markdown: per kernel and
    method (and our map) published / ours at the smallest and largest size n, the range of
    ours / published over n, the largest |z| and the points' verdicts."""
    import pandas as pd

    df = pd.read_csv(path)
    df = df[df.dataset == dataset]
    lo, hi = int(df.n.min()), int(df.n.max())
    old = "detectable" not in df  # made before the power test: within / differ only
    verdicts = (("agrees", ""), ("differs", "")) if old else VERDICTS
    lines = [f"| kernel | method | map | n = {lo} | n = {hi} | ours / published | max \\|z\\| "
             + ("| within / differ (made before the power test) |" if old else
                "| agree / inconclusive / differ |"), "|" + "---|" * 8]
    for (kernel, method, feat), g in df.groupby(["kernel", "method", "features"], sort=False):
        first, last = g[g.n == lo].iloc[0], g[g.n == hi].iloc[0]
        counts = " / ".join(str(int((g.verdict == v).sum())) for v, _ in verdicts)
        lines.append(f"| {kernel} | {method} | {feat} | {first.published:.3g} / {first.ours:.3g} "
                     f"| {last.published:.3g} / {last.ours:.3g} | {g.ratio.min():.2f}-"
                     f"{g.ratio.max():.2f} | {g.z.abs().max():.2f} | {counts} |")
    return "\n".join(lines) + "\n"


def summary_tables(path):
    """{heading: DataFrame of strings} of the Markdown tables of a report's summary.md (the
    ``###`` heading above each)."""
    import pandas as pd

    tables, heading, rows = {}, None, []
    for line in path.read_text().splitlines() + [""]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if rows:
            tables[heading] = pd.DataFrame(rows[2:], columns=rows[0])
            rows = []
        if line.startswith("### "):
            heading = line[4:].strip()
    return tables


def landmark_numbers(path):
    """The landmark study's numbers as a Markdown table, from its report's tables: per
    dataset and landmark rule the Gram error over uniform's at D = 16, 64, 512, the test
    error at D = 16 and 512 (exact kernel ridge's in the dataset's first row) and the
    ridge's train time at D = 512 (the map's fit included); medians over the seeds."""
    tabs = summary_tables(path)
    err = tabs["Gram-matrix error (approximation)"]
    err = err[err.metric == "rel_fro_error"].set_index(["dataset", "features.params.landmarks"])
    learn = tabs["Learning: test error and train time"]
    lines = ["| dataset | rule | Gram error / uniform's, D = 16, 64, 512 | test error, D = 16 "
             "| test error, D = 512 | train time (s), D = 512 |", "|" + "---|" * 6]
    for dataset, rules in err.groupby(level=0, sort=True):
        lx = learn[learn.dataset == dataset]
        metric = "test_error_rate" if (lx["test_error_rate / ridge"] != "").any() \
            else "test_rel_rmse"

        def cell(rule, D, col):
            row = lx[(lx.D == str(D)) & (lx["features.params.landmarks"] == rule)]
            return row[col].iloc[0] if len(row) else "n/a"

        exact = lx[f"{metric} / exact_krr"].iloc[0]
        for i, rule in enumerate(rules.index.get_level_values(1)):
            mine, base = err.loc[(dataset, rule)], err.loc[(dataset, "uniform")]
            ratios = ", ".join(f"{float(mine[c]) / float(base[c]):.2g}"
                               for c in ("D=16", "D=64", "D=512"))
            label = f"{dataset} ({metric}; exact KRR {exact})" if i == 0 else ""
            lines.append(f"| {label} | {rule} | {ratios} | {cell(rule, 16, metric + ' / ridge')} "
                         f"| {cell(rule, 512, metric + ' / ridge')} "
                         f"| {cell(rule, 512, 'train_time_s / ridge')} |")
    return "\n".join(lines) + "\n"


#: the verdicts a reproduction table counts, and their words
VERDICTS = (("agrees", "agree"), ("inconclusive", "inconclusive"), ("differs", "differ"))


def reproduction_counts(ref):
    """The verdicts of every committed reproduction table (``ref/PRESET/reproduction_KEY
    .csv``) as a Markdown table: per paper, preset and dataset the points compared, how
    many agree, are inconclusive (could not detect the inconclusive ratio) or differ, and
    the verdicts of its families (dataset, kernel: their points tested together); a table
    made before the power and family tests (no ``detectable`` column) says so instead of
    counting its points as agreeing.  A family's cell: its kernel, verdict, common ratio
    ours / published with its interval, and the ratio its test could detect."""
    import pandas as pd

    rows, total = [], dict.fromkeys(("points", "agrees", "inconclusive", "differs"), 0)
    families = dict.fromkeys((v for v, _ in VERDICTS), 0)
    for path in sorted(ref.glob("*/reproduction_*.csv")):
        key = path.stem[len("reproduction_"):]
        df = pd.read_csv(path)
        for dataset, g in df.groupby("dataset", sort=True):
            head = f"| {key} | {path.parent.name} | {dataset} | {len(g)} |"
            if "detectable" not in df:
                rows.append(head + " made before the power and family tests: "
                            f"{int((g.verdict == 'agrees').sum())} within, not counted | | | | |")
                continue
            n = {v: int((g.verdict == v).sum()) for v, _ in VERDICTS}
            total["points"] += len(g)
            for v in n:
                total[v] += n[v]
            fams = g.dropna(subset=["family_verdict"]).groupby("kernel").first()
            for v in families:
                families[v] += int((fams.family_verdict == v).sum())
            fam = "; ".join(_family_text(k, f) for k, f in fams.iterrows()) or "none tested"
            untested = len(g) - sum(n.values())
            cells = [str(n[v]) for v, _ in VERDICTS] + [str(untested or ""), fam]
            rows.append(head + "".join(f" {c} |" for c in cells))
    head = ("| paper | preset | dataset | points | agree | inconclusive | differ | "
            "untested (< 2 seeds) | families (kernel: verdict, common ratio [95%], detectable) |\n|"
            + "---|" * 9)
    foot = (f"| all | | | {total['points']} | {total['agrees']} | {total['inconclusive']} | "
            f"{total['differs']} | | " + ", ".join(f"{families[v]} {w}" for v, w in VERDICTS)
            + " |")
    return "\n".join([head, *rows, foot]) + "\n"


def _family_text(kernel, f):
    """A family's verdict: 'gaussian agree: 1.01 [0.95, 1.07], detects 1.12x', and when its
    points scatter more than their noise (Cochran's Q), that."""
    words = dict(VERDICTS).get(f.family_verdict, f.family_verdict)
    if "family_ratio" not in f or not f.family_ratio == f.family_ratio:  # not NaN
        return f"{kernel} {words}"
    spread = " (its points scatter: Cochran's Q above its critical value)" \
        if "family_q" in f and f.family_q > f.family_q_crit else ""
    return (f"{kernel} {words}: {f.family_ratio:.3g} [{f.family_lo:.3g}, {f.family_hi:.3g}], "
            f"detects {f.family_detectable:.3g}x{spread}")


def write_samples(values, pages=None):
    """Replace the body of every sample marker of the SAMPLE_PAGES named in ``values``
    (the others are left as they are); a name that is not in SAMPLE_NAMES is an error
    (every sample is this script's)."""
    for page in pages or [ROOT / p for p in SAMPLE_PAGES if (ROOT / p).is_file()]:
        text = page.read_text()

        def body(m):
            name = m.group("name")
            if name not in SAMPLE_NAMES:
                raise SystemExit(f"rffbench reference: {page}: unknown sample {name!r} "
                                 f"(known: {', '.join(sorted(SAMPLE_NAMES))})")
            return f"<!-- sample {name} -->{values[name]}<!-- /sample -->" \
                if name in values else m.group(0)

        new = SAMPLE.sub(body, text)
        if new != text:
            page.write_text(new)
            print(f"wrote the samples of {page}")


def _cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def read_times():
    """{preset: (run_s, report_s, cores)} of TIMES (empty if there is none)."""
    import pandas as pd

    path = ROOT / TIMES
    if not path.is_file():
        return {}
    df = pd.read_csv(path)
    return {r.preset: (float(r.run_s), float(r.report_s), int(r.cores))
            for r in df.itertuples() if r.preset in PRESETS}


def record_time(name, run_s, report_s):
    """Preset ``name``'s wall times into TIMES (its earlier row replaced), at once: an
    interrupted regeneration keeps the times of the presets it finished."""
    import pandas as pd

    rows = {**read_times(), name: (run_s, report_s, _cores())}
    path = ROOT / TIMES
    path.parent.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame([(p, round(a, 1), round(b, 1), c) for p, (a, b, c) in rows.items()],
                      columns=["preset", "run_s", "report_s", "cores"])
    tmp = path.with_suffix(".tmp")
    df.sort_values("preset").to_csv(tmp, index=False)
    os.replace(tmp, path)


def times_text():
    """The regeneration's time for results/README.md: measured once every preset has a
    time in TIMES, else the estimate and how many presets were timed."""
    times = read_times()
    if len(times) < len(PRESETS):
        return f"{ESTIMATE}; {len(times)} of {len(PRESETS)} timed in `reference/times.csv`"
    total = sum(a + b for a, b, _ in times.values())
    cores = sorted({c for _, _, c in times.values()})
    slowest = sorted(times, key=lambda p: -sum(times[p][:2]))[:3]
    return (f"{total / 3600:.1f} h measured on {'/'.join(map(str, cores))} cores, of it "
            + ", ".join(f"{p} {sum(times[p][:2]) / 60:.0f} min" for p in slowest)
            + ": each preset's time in `reference/times.csv`")


def write_readme(ref):
    """results/README.md from the summaries in ``ref`` (no runs)."""
    parts = ["# rffbench reference report", "",
             f"Regenerate with `python -m rffbench.reference` (all presets, {times_text()}; "
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
