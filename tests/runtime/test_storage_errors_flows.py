"""A flow run started as a deployment starts it (the flow function, no CLI before it) on an S3
lake the client cannot use -- no credentials anywhere, or an endpoint where nothing listens --
ends Failed at once: no task run, and the state's message is the one line the CLI prints for
the same lake (after its ``warclake: error:``), not the storage client's traceback. Both
flows: ``corpus-dump``, and ``extract-dump`` with its corpus follow-up (what the project's
deployments run). Real Prefect flow runs; moto's S3 server on 127.0.0.1."""
from __future__ import annotations

import os

import pytest

from support import procs
from support.s3_lake import ONE_CLIENT_ATTEMPT, server_and_archive_fixtures

pytestmark = pytest.mark.usefixtures("prefect_harness")

DUMP = "CC-MAIN-2099-01"
LAKE = "s3://warclake-unusable/lake"


server, archive = server_and_archive_fixtures(DUMP)


@pytest.fixture(params=["no credentials", "dead endpoint"])
def unusable(request, server, tmp_path, monkeypatch):
    """This process's environment with the cause in place: no AWS setting but the endpoint
    (a live server) and files that are not there, or keys and an endpoint nobody listens on.
    The client tries each request once (its own retries change nothing here but the time)."""
    import s3fs

    for k in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(k)
    env = dict(ONE_CLIENT_ATTEMPT, AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"), AWS_CONFIG_FILE=str(tmp_path / "no-config"))
    if request.param == "no credentials":
        env["AWS_ENDPOINT_URL"] = server["AWS_ENDPOINT_URL"]
    else:
        env.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{procs.free_port()}", AWS_ACCESS_KEY_ID="testing",
                   AWS_SECRET_ACCESS_KEY="testing")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    s3fs.S3FileSystem.clear_instance_cache()   # a filesystem made under other settings
    yield request.param
    s3fs.S3FileSystem.clear_instance_cache()


def cli_line(capsys, args: list[str]) -> str:
    """What the CLI says of this lake: its one line, less ``warclake: error: ``."""
    from warclake.cli.main import main

    capsys.readouterr()
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warclake: error: "), lines
    return lines[0][len("warclake: error: "):]


def task_runs_of(state) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    flow_run = FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
    with get_client(sync_client=True) as client:
        return client.read_task_runs(flow_run_filter=flow_run)


def test_the_corpus_flow_fails_at_once_with_the_cli_s_line(unusable, capsys):
    from warclake.flows.corpus_flow import CorpusFailed, corpus_flow

    said = cli_line(capsys, ["corpus", "--lake", LAKE, "--no-report", "-q", "--flow"])
    state = corpus_flow(lake=LAKE, report=False, return_state=True)
    assert state.is_failed() and isinstance(state.result(raise_on_failure=False), CorpusFailed), state
    assert state.message == said and LAKE in said, (state.message, said)
    assert ("Unable to locate credentials" if unusable == "no credentials" else "Could not connect") in said
    assert task_runs_of(state) == []


def test_an_extraction_with_its_corpus_follow_up_fails_at_once_with_the_cli_s_line(unusable, archive, capsys):
    from warclake.flows.dump_flow import DumpFailed, extract_dump

    said = cli_line(capsys, ["run", "--dump", DUMP, "--lake", LAKE, "--workers", "0", "-q", "--corpus", archive])
    state = extract_dump(dump=DUMP, inputs=[archive], lake=LAKE, workers=0, report=False, corpus=True,
                         return_state=True)
    assert state.is_failed() and isinstance(state.result(raise_on_failure=False), DumpFailed), state
    assert state.message == f"{DUMP}: {said}" and LAKE in said, (state.message, said)
    assert ("Unable to locate credentials" if unusable == "no credentials" else "Could not connect") in said
    assert task_runs_of(state) == []
