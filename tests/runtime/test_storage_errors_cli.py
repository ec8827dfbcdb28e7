"""An S3 lake the client cannot use -- no credentials anywhere, or an endpoint where nothing
listens -- stops `warclake extract`, `run`, `corpus` (with and without `--flow`), `report` and `sql`
with one line naming the lake and the cause, exit status 2, no traceback, before Prefect
starts a flow. Against moto's S3 server on 127.0.0.1."""
from __future__ import annotations

import os
import subprocess
import sys

from support import procs
from support.s3_lake import ONE_CLIENT_ATTEMPT, server_and_archive_fixtures

DUMP = "CC-MAIN-2099-01"
LAKE = "s3://warclake-no-credentials/lake"


server, archive = server_and_archive_fixtures(DUMP)


def without_credentials(tmp_path, endpoint: str) -> dict:
    """This process's environment less every AWS setting: no keys, no profile files, no
    instance metadata to ask; only the endpoint."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return dict(env, AWS_ENDPOINT_URL=endpoint, AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
                AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"),
                AWS_CONFIG_FILE=str(tmp_path / "no-config"))


def commands(archive: str) -> dict[str, list[str]]:
    return {"extract": ["extract", "--dump", DUMP, "--lake", LAKE, "--workers", "0", "-q", archive],
            "run": ["run", "--dump", DUMP, "--lake", LAKE, "--workers", "0", "-q", "--corpus", archive],
            "corpus": ["corpus", "--lake", LAKE, "--no-report", "-q"],
            "corpus --flow": ["corpus", "--lake", LAKE, "--no-report", "-q", "--flow"],
            "report": ["report", "--lake", LAKE],
            "sql": ["sql", "--lake", LAKE, "-c", "SELECT 1"]}


def cli(args, env):
    return subprocess.run([sys.executable, "-m", "warclake", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_no_credentials_is_one_line_naming_them(server, archive, tmp_path):
    env = without_credentials(tmp_path, server["AWS_ENDPOINT_URL"])
    for name, args in commands(archive).items():
        p = cli(args, env)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and not p.stdout, (name, p.stdout, p.stderr)
        assert lines[0].startswith("warclake: error: cannot ") and LAKE in lines[0], (name, lines)
        assert "Unable to locate credentials" in lines[0] and "AWS_ACCESS_KEY_ID" in lines[0], (name, lines)


def test_with_credentials_the_same_lake_answers(server, archive, tmp_path):
    """The server itself is usable: given the keys, the lake is found missing (report) or written (extract)."""
    env = dict(without_credentials(tmp_path, server["AWS_ENDPOINT_URL"]),
               AWS_ACCESS_KEY_ID=server["AWS_ACCESS_KEY_ID"], AWS_SECRET_ACCESS_KEY=server["AWS_SECRET_ACCESS_KEY"])
    p = cli(commands(archive)["report"], env)
    assert p.returncode == 2 and f"no lake at {LAKE}" in p.stderr, p.stderr
    import s3fs

    s3fs.S3FileSystem(client_kwargs={"endpoint_url": server["AWS_ENDPOINT_URL"]}, skip_instance_cache=True,
                      key=server["AWS_ACCESS_KEY_ID"], secret=server["AWS_SECRET_ACCESS_KEY"]).mkdir(LAKE[5:].split("/")[0])
    p = cli(commands(archive)["extract"], env)
    assert p.returncode == 0, p.stderr
    p = cli(commands(archive)["sql"][:-1] + [f"SELECT count(*) AS archives FROM files WHERE dump = '{DUMP}'", "--csv"],
            env)
    assert p.returncode == 0 and p.stdout.split() == ["archives", "1"], (p.stdout, p.stderr)


def test_an_endpoint_that_does_not_answer_is_one_line(archive, tmp_path):
    """(``corpus`` with a dead endpoint: test_corpus_remote.py)"""
    dead = f"http://127.0.0.1:{procs.free_port()}"   # nothing listens there
    env = dict(without_credentials(tmp_path, dead), AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               **ONE_CLIENT_ATTEMPT)
    for name in ("extract", "run", "corpus --flow"):
        p = cli(commands(archive)[name], env)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and not p.stdout, (name, p.stdout, p.stderr)
        assert LAKE in lines[0] and "Could not connect to the endpoint URL" in lines[0], (name, lines)
