"""Every archive's task run recorded by Prefect's server, as `warclake run` leaves it: a real run
on a few hundred tiny archives (the task runs come ~1,000 times faster than real archives'),
with the server the run starts for itself when no PREFECT_API_URL is set. The same against
a running ``prefect server``: tests/flows/test_deployments.py."""
import os
import sqlite3
import subprocess
import sys

from warclake.tasks.sample_dump import make_dump

ARCHIVES = 300
DUMP = "CC-MAIN-2099-05"


def recorded(db: str) -> dict[str, int]:
    """The archive task runs in a Prefect database, by state type."""
    with sqlite3.connect(db) as con:
        return dict(con.execute("SELECT state_type, count(*) FROM task_run WHERE name LIKE 'extract %' "
                                "GROUP BY state_type").fetchall())


def test_every_archive_task_run_is_recorded_by_the_runs_own_server(tmp_path):
    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=ARCHIVES, pages_per_file=2, dump=DUMP, truncate_last=False)
    home = tmp_path / "prefect-home"
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_LOGGING_LEVEL": "INFO"}
    env.pop("PREFECT_API_URL", None)   # no server configured: the run starts its own
    env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
    p = subprocess.run([sys.executable, "-m", "warclake.cli.main", "run", "--dump", DUMP, "--lake",
                        str(tmp_path / "lake"), "--langs", "all", "--workers", "1", "-q", "--no-report",
                        str(dump_dir)], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"{ARCHIVES} extracted" in p.stdout
    assert recorded(str(home / "prefect.db")) == {"COMPLETED": ARCHIVES}
    # the flow's log: one line per archive, none from Prefect's "Finished in state" or a print
    lines = [line for line in p.stderr.splitlines() if f"{DUMP}-00007.warc.gz" in line]
    assert len(lines) == 1 and "complete, " in lines[0], lines
    # the flow's first own line says which paragraph walk runs (Prefect's engine says "Beginning", "View at")
    ours = [line for line in p.stderr.splitlines() if f"[extract {DUMP}]" in line and " View at " not in line]
    assert "paragraph walk: " in ours[0], ours[:3]
