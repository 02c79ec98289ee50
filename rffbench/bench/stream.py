"""``--stream``: ridge on a streamed .npy against the same rows loaded whole."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from ..config import DatasetConfig
from ..datasets import write_synthetic_npy


def stream_bench(n, d=16, D=1024, lam=1e-3, data_dir=None, in_memory=False):
    """Ridge on D features of the synthetic d-ball data with n rows, read from a .npy
    file (written once, block by block) by ``python run.py dataset=file`` in its own
    process; learning only, exact KRR off.  With ``in_memory`` the same rows come from
    ``dataset=synthetic`` instead (loaded whole), for the memory comparison.  Returns a
    dict of wall time, the learning records' times and the process's peak RSS."""



    root = Path(__file__).resolve().parents[2]
    data_dir = Path(data_dir or tempfile.gettempdir())
    path = data_dir / f"rffbench-synthetic-{n}x{d}.npy"
    if not in_memory and not path.exists():
        t0 = time.perf_counter()
        write_synthetic_npy(str(path), DatasetConfig(name="synthetic", n=n, d=d))
        print(f"wrote {path} ({path.stat().st_size / 2**30:.2f} GiB) in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    data = ["dataset=synthetic", f"dataset.n={n}", f"dataset.d={d}"] if in_memory else \
        ["dataset=file", f"dataset.path={path}"]
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, str(root / "run.py"), *data, f"D={D}",
                            f"model.lam={lam}", "measure.approximation.enabled=false",
                            "measure.bounds.enabled=false", "measure.timing.enabled=false",
                            "measure.learning.exact=false", "measure.learning.repeats=1",
                            f"hydra.run.dir={out}"], cwd=root, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode:
            raise RuntimeError(p.stderr[-2000:])
        rec = pd.read_csv(Path(out) / "records.csv")
    r = rec[(rec.measurement == "learning") & (rec.method == "ridge")].set_index("metric")
    return dict(n=n, d=d, D=D, source="in memory" if in_memory else "streamed .npy",
                n_train=int(rec.n_train.iloc[0]), time_s=r.value["train_time_s"], wall_s=wall,
                train_time_s=r.value["train_time_s"], train_split=r.note["train_time_s"],
                predict_time_s=r.value["predict_time_s"],
                test_rel_rmse=r.value["test_rel_rmse"], peak_rss_mb=r.value["peak_rss_mb"])
