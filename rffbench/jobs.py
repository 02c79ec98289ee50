"""The way of one run through the storage: alone in its own directory, or as a job of a
sweep (docs/sweeps.md).

:class:`Job` holds the protocol that :func:`rffbench.experiment.main` drives around the
measuring itself:

* **identify**: the run's id (in a sweep, found among the sweep's and the store's runs so
  that a sweep written before the store keeps its ids), and the job's ticket (its
  overrides and run id, or its refusal) for the report;
* **begin**: claim the run directory; in a sweep, a run already complete there is checked
  and skipped (resume), one being computed elsewhere is waited for, a damaged one is set
  aside; its ``config.json`` is written, then the store of the results folder is asked:
  its checked copy is taken instead of computing, or its claim is held while this sweep
  computes;
* **finish**: every table, then ``records.csv``, then the manifest, all or nothing; a
  sweep's run is published to the store;
* **fail** / **interrupted**: one line, ``error.txt`` or ``interrupted.txt`` where the
  run's own directory is, the claims released (``release``).
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from .errors import RffbenchError
from .interrupts import checkpoint
from .readers import DamagedFile
from .results import ERROR_FILE, RECORDS_FILE, write_all_atomic
from .runid import find_run, run_id, stored_disagreement
from .store import (
    CONFIG_FILE,
    INTERRUPTED_FILE,
    SweepStore,
    acquire,
    claim_run_dir,
    config_text,
    run_check,
    write_config,
    write_manifest,
    write_text_atomic,
)

log = logging.getLogger("rffbench")


def os_message(exc):
    """One line for an OSError: the path and the system's reason."""
    where = exc.filename if exc.filename is not None else "(unknown path)"
    return f"cannot write {where}: {exc.strerror or exc}"


class Job:
    """One run's storage protocol (module docs).

    Parameters
    ----------
    output_dir : str or Path
        The run's directory alone, or the job's directory in a sweep.
    sweep_dir : str, Path or None, default None
        The sweep's folder (None: a run alone).
    overrides : sequence of str, default ()
        The job's command-line overrides, recorded with its run id.
    """

    def __init__(self, output_dir, sweep_dir=None, overrides=()):
        self.job_dir = Path(output_dir)
        self.in_sweep = sweep_dir is not None
        self.store = SweepStore(sweep_dir) if self.in_sweep else None
        self.overrides = overrides
        self.out, self.rid, self.claim, self.stored = self.job_dir, None, None, None

    def identify(self, conf):
        """The run id of the checked config ``conf`` (and, in a sweep, the job's ticket)."""
        self.rid = find_run(conf, self.store.runs_dir, self.store.store) if self.in_sweep \
            else run_id(conf)
        return self.rid

    def refused(self, exc):
        """A config refused before the run had an id: its line (in the ticket too); code 2."""
        if self.in_sweep:
            self.store.write_ticket(self.overrides, error=str(exc).splitlines()[0],
                                    job_dir=self.job_dir)
        return self.fail(2, str(exc))

    def _busy(self, holder):
        print(f"rffbench: run {self.rid} is being computed by pid {holder.get('pid')} on "
              f"{holder.get('host')}: waiting for it", flush=True)

    def begin(self, conf, conf_dict):
        """Claim the run; an exit code when it needs no computing here (resumed, copied
        from the store, or refused), None when the caller measures it."""
        rid, store = self.rid, self.store
        if not self.in_sweep:  # a run alone: its directory is its own while it runs (two
            try:  # runs given one hydra.run.dir would lose one's records)
                self.claim = claim_run_dir(self.out, rid)
            except RffbenchError as exc:
                return self.fail(2, str(exc), own_dir=False)
            return None
        store.write_ticket(self.overrides, rid=rid, job_dir=self.job_dir)
        self.out = store.run_dir(rid)
        self.out.mkdir(parents=True, exist_ok=True)
        store.link_job(self.job_dir, rid)
        # a run already here is checked (its manifest, or for a folder written before
        # manifests its records); a damaged one is set aside and computed again
        self.claim = acquire(self.out, run_check(rid, in_sweep=True), on_wait=self._busy)
        if self.claim is None:
            stale = stored_disagreement(conf, self.out)
            if stale:
                msg = (f"run {rid} in {self.out.parent} was recorded with {stale[0]}="
                       f"{stale[1]!r}, this config has {stale[2]!r} (a default changed "
                       "between rffbench versions): not reused; use another "
                       "hydra.sweep.dir or remove that run directory")
                store.write_ticket(self.overrides, error=msg, job_dir=self.job_dir)
                return self.fail(2, msg, own_dir=False)
            print(f"rffbench: run {rid} already has records in {self.out / RECORDS_FILE}: "
                  "skipped (resume)")
            log.info("run %s already done (%s): skipped", rid, self.out)
            return 0
        # the report can tell what a failed or interrupted run was
        write_config(self.out, rid, conf_dict, self.overrides)
        # computed once for every sweep of the results folder: the store's copy, or its
        # claim while this sweep computes it (another sweep waits for it)
        self.stored = store.claim_stored(rid, on_wait=self._busy)
        if self.stored is not None:
            return None
        stale = stored_disagreement(conf, store.stored_dir(rid))
        if stale is not None:
            log.warning("run %s in the store was recorded with %s=%r, this config has %r: "
                        "computed again here, not reused", rid, *stale)
            return None
        try:
            store.copy_stored(rid, self.out)
        except DamagedFile as exc:  # changed after it was checked
            print(f"rffbench: warning: {exc}: run {rid} computed here instead",
                  file=sys.stderr)
            return None
        print(f"rffbench: run {rid} was computed by another sweep: its records copied from "
              f"{store.stored_dir(rid)} (checked)")
        log.info("run %s copied from the store (%s)", rid, store.stored_dir(rid))
        return 0

    def finish(self, df, tables, conf_dict):
        """Write the run's tables, its records and its manifest, all or nothing; publish a
        sweep's run to the store.  Returns the records' path."""
        out, rid = self.out, self.rid
        out.mkdir(parents=True, exist_ok=True)
        files = [(t, out / name) for name, t in tables.items()]
        if not self.in_sweep:
            files.append((config_text(rid, conf_dict, self.overrides), out / CONFIG_FILE))
        # all or nothing, records.csv last, then the manifest: a run is complete when its
        # manifest verifies (rffbench.store.check_entry)
        checkpoint()  # a Ctrl-C that a library swallowed during the run stops it here
        path = write_all_atomic(files + [(df, out / RECORDS_FILE)])[-1]
        # last: what identifies and checks the run (a resume, a copy, the report verify it)
        results = [name for name in tables] + [RECORDS_FILE]
        write_manifest(out, rid, results + ([] if self.in_sweep else [CONFIG_FILE]))
        if not self.in_sweep:  # an earlier failure's line in this directory is no longer true
            (out / ERROR_FILE).unlink(missing_ok=True)
        elif self.stored is not None:  # for the other sweeps of the results folder
            try:
                self.store.publish(rid, out, results)
            except OSError as exc:  # the sweep's own records are written: a warning
                log.warning("run %s: not copied to the store (%s)", rid, os_message(exc))
            except DamagedFile as exc:  # changed while copied: the store stays without it
                log.warning("run %s: not copied to the store (%s)", rid, exc)
        return path

    def fail(self, code, message, own_dir=True):
        """Print the one line; write it to the run directory's error.txt (not when
        ``own_dir`` is False: the directory is another run's): a sweep's report lists the
        run as failed with it, and a run alone's directory says why it holds no records.
        Returns ``code``."""
        print(f"rffbench: error: {message}", file=sys.stderr)
        if own_dir:
            try:
                write_text_atomic(self.out / ERROR_FILE, message.splitlines()[0] + "\n")
            except OSError:
                pass  # the directory itself is the problem: the line above is all we can do
        return code

    def os_failed(self, exc):
        """An OSError writing the run or job directory: its line; code 2."""
        return self.fail(2, os_message(exc), own_dir=self.claim is not None)

    def interrupted(self):
        """Ctrl-C: a sweep's claimed run says so (resumable); the one line."""
        if self.claim is not None and self.in_sweep:
            try:
                write_text_atomic(self.out / INTERRUPTED_FILE, "interrupted by Ctrl-C\n")
            except OSError:
                pass
        where = "" if self.rid is None else f" run {self.rid}"
        print(f"rffbench: interrupted:{where} stopped before its records were written; "
              + ("re-run the same command to resume" if self.in_sweep else
                 "nothing was written"), file=sys.stderr)

    def release(self):
        """Release the store's claim and the run's."""
        if self.stored is not None:
            self.stored.release()
        if self.claim is not None:
            self.claim.release()
