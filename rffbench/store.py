"""Where sweeps keep their runs: storage keyed by run identity (docs/architecture.md,
"A sweep").

A run is computed once for every sweep of a results folder (the folder that holds the
sweep folders, ``results/multirun/`` by default): each run computed in a sweep is also
published to the folder's store, ``RESULTS/.runs/<run_id>/``, and a sweep that asks for
a run the store holds copies its records (two presets that share runs, the same command
run again in a new folder, a sweep that adds values to another's lists).  Every sweep
folder holds the runs its commands asked for, as files of its own, so a sweep folder
travels alone (copied, sent, archived), and a sweep folder written before the store
reads and resumes as before.  Runs that many runs share (exact KRR, which depends on
neither D nor the map) live in the store's ``shared/``.

A sweep directory::

    SWEEP/
      multirun.yaml             Hydra: the sweep's configuration (the report expands its jobs)
      0/ 1/ ...                 Hydra's job directories, numbered in launch order only:
                                .hydra/, run.log, and ``run`` -> ../runs/<run_id>
      runs/<run_id>/            one directory per run identity (rffbench.runid)
          config.json           the run's resolved config and the overrides that asked for it
          claim                 exists while a process computes the run (host, pid; its
                                mtime is a heartbeat)
          records.csv           written atomically after the run's other tables
          manifest.json         written last: the run id and a sha256 digest of each result
                                file; a run is complete when its manifest verifies
          bounds_trials.csv     extra tables of the run
          error.txt             a failed run: its one-line reason
          interrupted.txt       a run stopped by Ctrl-C (resumable)
      .jobs/<key>.json          one per job of the sweep's command: its overrides and its
                                run_id (or the error that came before a run_id existed)
      report/

and beside it, the store::

    RESULTS/.runs/<run_id>/     a run computed in one of the folder's sweeps (its claim
                                while a sweep computes it, its config.json, records and
                                manifest)
    RESULTS/.runs/shared/<name>-<hash>/  a result that many runs share, computed once: key.json
                                (what it depends on, the run that computed it), claim,
                                rows.csv (its records' rows) and manifest.json
    .set-aside/<id>-<time>-<pid>/  beside any of these: an entry found damaged (cut, edited,
                                another run's files), moved here for inspection, never
                                deleted; the entry is computed again

Every entry is checked before it is used: a resume, a copy out of the store (the copy
itself is checked against the digests before it is renamed into place) and a read of
shared rows verify the manifest (:func:`check_entry`).  A sweep folder written before
manifests existed is read and resumed when its records pass
:func:`rffbench.results.read_records` for its run id; the store, a cache, recomputes such
an entry rather than trust it.

A run's records are found and written by its ``run_id``, so no job can
overwrite another run's results, whatever the order or the value lists of
later sweeps into the same directory.  Resume is one ``stat`` per job.  A
run is computed by whoever creates its ``claim`` first (``O_CREAT | O_EXCL``);
another process asking for the same run waits for it (or takes the claim over
when its holder is dead: same host and the pid is gone, or another host and
the heartbeat stopped for ``STALE_S`` seconds).  The process holding the claim is
also the only one that sets a damaged entry aside.
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path

from .readers import (
    MAX_TABLE_BYTES,
    DamagedFile,
    open_regular,
    read_bytes,
    read_json,
)
from .results import ERROR_FILE, RECORDS_FILE, write_all_atomic

log = logging.getLogger(__name__)

RUNS_DIR = "runs"
#: the store of a results folder, beside its sweep folders
STORE_DIR = ".runs"
SHARED_DIR = "shared"
SHARED_KEY_FILE = "key.json"
#: a shared result's rows (not records.csv: they are not a run's records)
SHARED_ROWS_FILE = "rows.csv"
JOBS_DIR = ".jobs"
CONFIG_FILE = "config.json"
CLAIM_FILE = "claim"
INTERRUPTED_FILE = "interrupted.txt"
#: an entry's identity and the digests of its result files, written last
MANIFEST_FILE = "manifest.json"
MANIFEST_SHAPE = {"run_id": str, "files": dict}
#: where damaged entries are moved (beside the entries of the same folder)
SET_ASIDE_DIR = ".set-aside"
#: the job directory's pointer to its run directory (a symlink, or a text file)
RUN_LINK = "run"
#: seconds between heartbeats of a claim (its mtime)
HEARTBEAT_S = 30.0
#: a claim from another host whose heartbeat is older than this is stale
STALE_S = 600.0
#: seconds between checks while waiting for a run claimed by another process
POLL_S = 0.5


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` via a temporary file and a rename."""
    return write_all_atomic([(text, path)])[0]


def job_key(overrides):
    """Key of a job: its override list, order-free."""
    return hashlib.sha1("\n".join(sorted(map(str, overrides))).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------
# claims
# --------------------------------------------------------------------------
def _proc_start(pid):
    """Start time of process ``pid`` in clock ticks since boot (None if gone or unknown)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _me():
    return dict(host=socket.gethostname(), pid=os.getpid(), pid_start=_proc_start(os.getpid()),
                time=time.time())


def holder_alive(holder, mtime, now=None):
    """Is the process named in a claim still computing? (True when it cannot be told.)"""
    now = time.time() if now is None else now
    if holder.get("host") == socket.gethostname() and Path("/proc/self").exists():
        start = _proc_start(holder.get("pid", -1))
        return start is not None and (holder.get("pid_start") in (None, start))
    return now - mtime < STALE_S


class Claim:
    """This process's claim on one run; keeps its heartbeat until released."""

    def __init__(self, path, remove_empty=False):
        self.path = Path(path)
        #: the directory was made for this claim: removed on release if nothing was written
        self.remove_empty = remove_empty
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True,
                                      name="rffbench-claim-heartbeat")
        self._beat.start()

    def _heartbeat(self):
        while not self._stop.wait(HEARTBEAT_S):
            try:
                os.utime(self.path)
            except OSError:
                return

    def release(self):
        self._stop.set()
        try:
            self.path.unlink()
            if self.remove_empty:
                self.path.parent.rmdir()  # only if empty: a failed run leaves nothing
        except OSError:
            pass


#: the shapes of the sweep's JSON files (read_json)
CONFIG_SHAPE = {"run_id": str, "overrides": [str], "config": dict}
TICKET_SHAPE = {"overrides": [str], "run_id": (str, type(None)), "error": (str, type(None)),
                "job_dir": (str, type(None))}
CLAIM_SHAPE = {"host": str, "pid": int}


#: a claim is ~150 bytes: a larger file is not one (an anonymous holder)
MAX_CLAIM_BYTES = 1 << 16


def read_claim(path):
    """(holder dict, mtime) of a claim file, or (None, None) if it is gone; a FIFO, device
    or socket in its place is no claim: an anonymous holder, stale at once (mtime 0)."""
    import stat

    try:
        st = os.stat(path)
        mtime = st.st_mtime if stat.S_ISREG(st.st_mode) else 0.0
        holder = read_json(path, CLAIM_SHAPE, MAX_CLAIM_BYTES)
    except OSError:
        return None, None
    except DamagedFile:  # being written right now, cut by a crash, or not a claim
        holder = {}  # an anonymous holder
    return holder, mtime


def _break_stale(path, holder):
    """Remove a stale claim unless someone else replaced it meanwhile."""
    lock = path.with_name(path.name + ".break")
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        try:  # a breaker that died in this window: its lock is old
            if time.time() - os.stat(lock).st_mtime > 60:
                lock.unlink()
        except OSError:
            pass
        return
    os.close(fd)
    try:
        again, _ = read_claim(path)
        if again == holder:
            path.unlink()
    except OSError:
        pass
    finally:
        lock.unlink(missing_ok=True)


def acquire(run_dir, check, on_wait=None):
    """Claim ``run_dir`` for this process.

    Returns a :class:`Claim` (compute the entry, then ``release()``), or None when
    ``check(run_dir)`` (:func:`check_entry`) says the entry is complete and sound,
    possibly after waiting for another process that was computing it.  A damaged entry
    is set aside by the process that claims it (:func:`set_aside`) and computed again.
    ``on_wait(holder)`` is called once when the entry is found busy.
    """
    run_dir = Path(run_dir)
    path = run_dir / CLAIM_FILE
    waited = False
    while True:
        if check(run_dir)[0] == "ok":
            return None
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder, mtime = read_claim(path)
            if holder is None:
                continue  # released between the two calls: try again
            if holder_alive(holder, mtime):
                if not waited and on_wait is not None:
                    on_wait(holder)
                waited = True
                time.sleep(POLL_S)
            else:
                log.warning("run %s: claim of %s pid %s is stale (process gone): taking it over",
                            run_dir.name, holder.get("host"), holder.get("pid"))
                _break_stale(path, holder)
            continue
        try:
            os.write(fd, json.dumps(_me()).encode())
        finally:
            os.close(fd)
        state, why = check(run_dir)
        if state == "ok":  # completed by another process just before our claim
            path.unlink(missing_ok=True)
            return None
        if state == "damaged":
            try:
                set_aside(run_dir, why)
            except OSError:
                path.unlink(missing_ok=True)
                raise
        for stale in (ERROR_FILE, INTERRUPTED_FILE):
            (run_dir / stale).unlink(missing_ok=True)
        for tmp in run_dir.glob(".*.tmp"):  # left by a killed writer
            tmp.unlink(missing_ok=True)
        return Claim(path)

# --------------------------------------------------------------------------
# entries: what identifies and checks them
# --------------------------------------------------------------------------
def file_digest(path):
    """The sha256 of a file's bytes (hex); DamagedFile when it is not a regular file
    (rffbench.readers.open_regular: a FIFO would block the digest for ever)."""
    h = hashlib.sha256()
    with open_regular(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(folder, entry_id, names):
    """Write ``folder``'s manifest (last): ``entry_id`` and the digest of each of ``names``
    as they are now in ``folder``."""
    folder = Path(folder)
    files = {n: dict(sha256=file_digest(folder / n), bytes=(folder / n).stat().st_size)
             for n in names}
    write_text_atomic(folder / MANIFEST_FILE,
                      json.dumps(dict(run_id=entry_id, files=files), indent=1))


def read_manifest(folder):
    """The manifest of ``folder`` ({"run_id", "files": name -> sha256}); DamagedFile when
    it cannot be read or is not one; OSError (FileNotFoundError) as raised."""
    path = Path(folder) / MANIFEST_FILE
    m = read_json(path, MANIFEST_SHAPE)
    files = {}
    for name, meta in (m.get("files") or {}).items():
        sha = meta.get("sha256") if isinstance(meta, dict) else None
        if not isinstance(sha, str) or not name or Path(name).name != name \
                or name.startswith("."):
            raise DamagedFile(path, f"entry {name!r} is not a file name with its sha256")
        files[name] = sha
    if "run_id" not in m or not files:
        raise DamagedFile(path, "no run_id or no files: not a manifest rffbench wrote")
    return dict(run_id=m["run_id"], files=files)


def check_entry(folder, entry_id, data_file, legacy=None, content=None):
    """The state of an entry (a run's directory, a shared result): ``("absent", None)``
    when it holds neither ``data_file`` nor a manifest, ``("ok", None)`` when its manifest
    names ``entry_id``, lists ``data_file`` and every file it lists has its digest (and
    ``content(folder)``, a further check, returns None), else ``("damaged", reason)``.
    Without a manifest, ``legacy(folder)`` (None: fine; else the reason) decides for a
    folder written before manifests; without ``legacy`` such an entry is damaged."""
    folder = Path(folder)
    try:
        m = read_manifest(folder)
    except FileNotFoundError:
        if not (folder / data_file).exists():
            return "absent", None
        if legacy is None:
            return "damaged", (f"{data_file} without {MANIFEST_FILE} (written by an older "
                               "rffbench, or stopped before its last file): it cannot be "
                               "checked")
        why = legacy(folder)
        return ("ok", None) if why is None else ("damaged", why)
    except OSError as exc:
        return "damaged", f"{MANIFEST_FILE}: cannot read ({exc.strerror or exc})"
    except DamagedFile as exc:
        return "damaged", f"{MANIFEST_FILE}: {exc.reason}"
    if m["run_id"] != entry_id:
        return "damaged", (f"its manifest is entry {m['run_id']}'s, not {entry_id}'s (another "
                           "entry's files copied here?)")
    if data_file not in m["files"]:
        return "damaged", f"its manifest does not list {data_file}"
    for name, sha in sorted(m["files"].items()):
        try:
            ok = file_digest(folder / name) == sha
        except FileNotFoundError:
            return "damaged", f"{name} is missing"
        except OSError as exc:
            return "damaged", f"{name}: cannot read ({exc.strerror or exc})"
        except DamagedFile as exc:
            return "damaged", f"{name}: {exc.reason}"
        if not ok:
            return "damaged", f"{name} differs from its digest (cut, edited or replaced)"
    why = content(folder) if content is not None else None
    return ("ok", None) if why is None else ("damaged", why)


def set_aside(folder, reason):
    """Move the files of a damaged entry (all but this process's claim) to
    ``SET_ASIDE_DIR`` beside it, and say so in one line; the path they went to."""
    folder = Path(folder)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    dest = folder.parent / SET_ASIDE_DIR / f"{folder.name}-{stamp}-{os.getpid()}"
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted(folder.iterdir()):
        if f.name != CLAIM_FILE and not (f.name.startswith(".") and f.name.endswith(".tmp")):
            os.replace(f, dest / f.name)
    print(f"rffbench: warning: {folder} is damaged ({reason}): set aside in {dest}; "
          "it is made again", file=sys.stderr, flush=True)
    log.warning("%s damaged (%s): set aside in %s", folder, reason, dest)
    return dest


def run_check(rid, in_sweep):
    """The :func:`check_entry` of run ``rid``'s directory (for :func:`acquire`): its
    records hold ``rid``.  In a sweep's own folder (``in_sweep``) its config.json (which
    the report reads its conditions from) holds ``rid`` too, and a folder written before
    manifests is sound when its records pass :func:`rffbench.results.read_records` for
    ``rid``."""
    from .results import DamagedRecords, read_records

    def content(folder):
        found = records_run_id(Path(folder) / RECORDS_FILE)
        if found != rid:
            return f"{RECORDS_FILE} holds run {found or '(none)'}"
        if in_sweep:
            try:
                cfg = read_json(Path(folder) / CONFIG_FILE, CONFIG_SHAPE)
            except FileNotFoundError:
                return f"{CONFIG_FILE} is missing"
            except (OSError, DamagedFile) as exc:
                return f"{CONFIG_FILE}: {getattr(exc, 'reason', None) or exc}"
            if cfg.get("run_id") != rid or not isinstance(cfg.get("config"), dict):
                return f"{CONFIG_FILE} is not run {rid}'s config"
        return None

    def legacy(folder):
        try:
            read_records(Path(folder) / RECORDS_FILE, run_id=rid)
        except DamagedRecords as exc:
            return f"{RECORDS_FILE}: {exc.reason}"
        return content(folder)

    return lambda folder: check_entry(folder, rid, RECORDS_FILE,
                                      legacy=legacy if in_sweep else None, content=content)


def _result_names(names):
    """A run's result files in the order they are written: records last."""
    names = sorted(set(names) - {RECORDS_FILE, CONFIG_FILE, MANIFEST_FILE})
    return names + [RECORDS_FILE]


def copy_checked(src, dst, names, entry_id, digests=None):
    """Copy ``names`` from entry ``src`` to ``dst`` all or none, each copy's digest checked
    against ``digests`` (default: ``src``'s manifest) before any is renamed into place,
    then write ``dst``'s manifest of the result files (config.json is not a result: each
    sweep writes its own).  DamagedFile, naming the file, when a copy differs."""
    import shutil

    src, dst = Path(src), Path(dst)
    digests = read_manifest(src)["files"] if digests is None else digests
    dst.mkdir(parents=True, exist_ok=True)

    def copy(name):
        def write(tmp):
            with open_regular(src / name) as fi, open(tmp, "wb") as fo:
                shutil.copyfileobj(fi, fo)
            if name in digests and file_digest(tmp) != digests[name]:
                raise DamagedFile(src / name, "its copy differs from the digest in "
                                  f"{src / MANIFEST_FILE} (changed while copied?)")
        return write

    write_all_atomic([(copy(n), dst / n) for n in names])
    write_manifest(dst, entry_id, [n for n in names if n != CONFIG_FILE])


def check_not_claimed(run_dir, key="hydra.run.dir"):
    """RunDirError (one line naming ``key``) when a live process holds ``run_dir``'s
    claim."""
    from .errors import RunDirError

    holder, mtime = read_claim(Path(run_dir) / CLAIM_FILE)
    if holder is not None and holder_alive(holder, mtime):
        raise RunDirError(f"{key}={str(run_dir)!r} is in use: pid {holder.get('pid')} on "
                          f"{holder.get('host')} is writing a run there; give this run "
                          f"another {key}")


def claim_run_dir(run_dir, rid, key="hydra.run.dir"):
    """Claim the directory of a run alone (not a sweep's) for run ``rid``: a
    :class:`Claim`, or RunDirError (one line naming ``key``) when another live process
    writes into it, or when it holds the records of another run (they would be lost).
    The records of the same run are replaced (the same command, measured again)."""
    from .errors import RunDirError

    run_dir = Path(run_dir)
    path = run_dir / CLAIM_FILE
    made = not run_dir.exists()  # (Hydra makes it; from Python, this makes it)
    run_dir.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder, mtime = read_claim(path)
            if holder is None:
                continue  # released between the two calls
            check_not_claimed(run_dir, key)
            _break_stale(path, holder)
            continue
        try:
            os.write(fd, json.dumps(dict(_me(), run_id=rid)).encode())
        finally:
            os.close(fd)
        break
    other = records_run_id(run_dir / RECORDS_FILE)
    if other is not None and other != rid:
        path.unlink(missing_ok=True)
        raise RunDirError(f"{key}={str(run_dir)!r} holds the records of run {other} (another "
                          f"config); give this run ({rid}) another {key}, or remove them")
    for tmp in run_dir.glob(".*.tmp"):  # left by a killed writer
        tmp.unlink(missing_ok=True)
    return Claim(path, remove_empty=made)


def records_run_id(path):
    """The run_id of a records file (its first row), '' when it has none that can be read,
    None when there is no such file."""
    try:
        with open_regular(path) as fh:
            head = fh.read(1 << 16).decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return None
    except (OSError, DamagedFile):
        return ""
    import csv

    rows = list(csv.reader(head[:2]))
    if len(rows) < 2 or "run_id" not in rows[0] or len(rows[1]) != len(rows[0]):
        return ""
    return rows[1][rows[0].index("run_id")]


# --------------------------------------------------------------------------
# the sweep directory
# --------------------------------------------------------------------------
class SweepStore:
    """The run directories and job tickets of one sweep directory, and the store of its
    results folder (``STORE_DIR`` beside the sweep folder)."""

    def __init__(self, sweep_dir):
        self.root = Path(sweep_dir)
        self.store = self.root.parent / STORE_DIR

    @property
    def runs_dir(self):
        return self.root / RUNS_DIR

    def run_dir(self, rid):
        return self.runs_dir / rid

    def stored_dir(self, rid):
        """Run ``rid``'s directory in the store."""
        return self.store / rid

    def claim_stored(self, rid, on_wait=None):
        """Claim run ``rid`` in the store (:func:`acquire`): a Claim (compute it, then
        :meth:`publish`), or None when the store holds its records (possibly after
        waiting for another sweep that computed it)."""
        d = self.stored_dir(rid)
        d.mkdir(parents=True, exist_ok=True)
        return acquire(d, run_check(rid, in_sweep=False), on_wait=on_wait)

    def copy_stored(self, rid, out):
        """Copy the result files of run ``rid`` from the store into the sweep's ``out``,
        each checked against the store's manifest before it is renamed into place, then
        ``out``'s own manifest (this sweep's config.json is kept); the names copied.
        DamagedFile (nothing renamed) when a copy differs from its digest."""
        src = self.stored_dir(rid)
        names = _result_names(read_manifest(src)["files"])
        copy_checked(src, out, names, rid)
        return names

    def publish(self, rid, out, names):
        """Copy a run just computed in ``out`` (its config.json and result files
        ``names``, records last) to the store for the other sweeps of the results folder,
        checked against ``out``'s manifest; the store's manifest last."""
        copy_checked(out, self.stored_dir(rid), [CONFIG_FILE, *names], rid,
                     digests=read_manifest(out)["files"])

    def write_ticket(self, overrides, rid=None, error=None, job_dir=None):
        """Record which run (or which error) a job of the sweep's command led to."""
        d = self.root / JOBS_DIR
        d.mkdir(parents=True, exist_ok=True)
        ticket = dict(overrides=list(map(str, overrides)), run_id=rid, error=error,
                      job_dir=None if job_dir is None else os.path.relpath(job_dir, self.root))
        write_text_atomic(d / f"{job_key(overrides)}.json", json.dumps(ticket))

    def tickets(self):
        """(job key -> ticket dict for every job that started, job key -> why its ticket
        cannot be read: a damaged ticket's job is found by its run's overrides instead)."""
        out, damaged = {}, {}
        d = self.root / JOBS_DIR
        if d.is_dir():
            for f in d.glob("*.json"):
                try:
                    ticket = read_json(f, TICKET_SHAPE)
                except OSError as exc:
                    damaged[f.stem] = f"{f}: cannot read ({exc.strerror or exc})"
                    continue
                except DamagedFile as exc:
                    damaged[f.stem] = str(exc)
                    continue
                if "overrides" not in ticket:
                    damaged[f.stem] = f"{f}: a JSON object without the job's overrides"
                    continue
                out[f.stem] = ticket
        return out, damaged

    def link_job(self, job_dir, rid):
        """``job_dir/run`` -> the run directory (a relative symlink; a text file where
        symlinks are not available)."""
        link = Path(job_dir) / RUN_LINK
        target = os.path.relpath(self.run_dir(rid), job_dir)
        tmp = link.with_name(f".{RUN_LINK}.{os.getpid()}.tmp")
        try:
            tmp.unlink(missing_ok=True)
            try:
                os.symlink(target, tmp)
            except OSError:
                tmp.write_text(target + "\n")
            os.replace(tmp, link)
        except OSError as exc:  # a pointer for people: never fail the run over it
            log.debug("could not link %s: %s", link, exc)
            tmp.unlink(missing_ok=True)


    def shared(self, name, key, compute, rid):
        """Rows (record dicts) that every run with the same ``key`` shares, in every sweep
        of the results folder: computed by ``compute()`` in the first run that asks (the
        others wait for its claim, as for a run), then read back.  Read-back rows say in
        their note which run computed them."""
        import pandas as pd

        blob = json.dumps(key, sort_keys=True, default=str)
        d = self.store / SHARED_DIR / f"{name}-{hashlib.sha1(blob.encode()).hexdigest()[:12]}"
        d.mkdir(parents=True, exist_ok=True)
        check = lambda folder: check_entry(folder, d.name, SHARED_ROWS_FILE)  # noqa: E731
        claim = acquire(d, check, on_wait=lambda h: log.info(
            "%s: waiting for %s pid %s, which computes it for these runs", name,
            h.get("host"), h.get("pid")))
        if claim is not None:
            try:
                rows = compute()
                meta = json.dumps(dict(name=name, key=key, computed_by=rid), default=str,
                                  indent=1)
                write_all_atomic([(meta, d / SHARED_KEY_FILE),
                                  (pd.DataFrame(rows), d / SHARED_ROWS_FILE)])
                write_manifest(d, d.name, [SHARED_KEY_FILE, SHARED_ROWS_FILE])
                return rows
            finally:
                claim.release()
        try:
            by = read_json(d / SHARED_KEY_FILE, {"computed_by": str}).get("computed_by", "?")
        except (OSError, DamagedFile):
            by = "?"
        raw = read_bytes(d / SHARED_ROWS_FILE, MAX_TABLE_BYTES)  # bounded: DamagedFile
        if hashlib.sha256(raw).hexdigest() != read_manifest(d)["files"][SHARED_ROWS_FILE]:
            # changed since it was checked: these rows are not the ones the manifest names
            log.warning("%s: %s changed while being read: computed here", name, d)
            return compute()
        df = pd.read_csv(io.StringIO(raw.decode("utf-8")), keep_default_na=False,
                         na_values=[""])
        rows = df.astype(object).where(df.notna(), None).to_dict("records")
        for r in rows:
            for col in ("method", "unit"):
                r[col] = r.get(col) or ""
            r["note"] = ((r.get("note") or "") + f" [computed once, by run {by}]").strip()
        log.info("%s: reused from run %s (shared by the runs of this results folder)", name,
                 by)
        return rows


def config_text(rid, conf_dict, overrides):
    """``config.json``'s text: the resolved config of a run and the overrides that asked
    for it."""
    blob = dict(run_id=rid, overrides=list(map(str, overrides or [])), config=conf_dict)
    return json.dumps(blob, default=str, indent=1)


def write_config(run_dir, rid, conf_dict, overrides):
    write_text_atomic(Path(run_dir) / CONFIG_FILE, config_text(rid, conf_dict, overrides))


#: the most jobs one sweep command launches: Hydra lists every job before the first starts
#: and keeps each one's result (~0.3 MB) to the end, so seed=range(0,10**9) filled the
#: memory; a larger study is several commands sharing one hydra.sweep.dir
MAX_SWEEP_JOBS = 10_000


def count_jobs(parsed):
    """The number of jobs of Hydra's basic sweeper for parsed overrides, counted without
    listing them (a range of a billion values is a number here, not a list).  As the
    sweeper, a later override of a key replaces an earlier one (the command line's replace a
    preset's sweeper.params)."""
    import math

    from hydra.core.override_parser.types import ChoiceSweep, RangeSweep

    last = {o.get_key_element(): o for o in parsed}
    total = 1
    for o in last.values():
        if not o.is_sweep_override():
            continue
        v = o.value()
        if isinstance(v, ChoiceSweep):
            total *= len(v.list)
        elif isinstance(v, RangeSweep):
            step = v.step or 1
            total *= max(0, math.ceil((v.stop - v.start) / step))
        else:  # an interval or a glob: the basic sweeper's own error, or the config loader's
            continue
    return total
