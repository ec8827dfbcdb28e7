"""warclake as a user installs it: the wheel, in a fresh virtualenv, used outside the checkout."""
import json
import os
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import REPO, shared_data
from support.procs import run_installed as run

pytestmark = pytest.mark.slow


def lake_documents(lake: Path) -> int:
    return sum(pq.read_metadata(f).num_rows for f in lake.glob("documents/dump=*/*.parquet"))


def test_the_wheel_installs_one_import_name_with_its_data(wheel_env):
    names = zipfile.ZipFile(wheel_env["wheel"]).namelist()
    dist_info = next(n.split("/")[0] for n in names if ".dist-info/" in n)
    assert {n.split("/")[0] for n in names} == {"warclake", dist_info}
    top_level = zipfile.ZipFile(wheel_env["wheel"]).read(f"{dist_info}/top_level.txt").decode().split()
    assert top_level == ["warclake"]
    assert any(n.startswith("warclake/tasks/corpus/signals/unicode_tables_") and n.endswith(".bin") for n in names)
    for needed in ("warclake/sql/views.sql", "warclake/tasks/extract/boilerplate/sieve.json",
                   "warclake/tasks/extract/boilerplate/stoplists/en.txt", "warclake/deployments/dumps.toml",
                   "warclake/tasks/sample_dump.py", "warclake/tasks/evaluation/gold.py",
                   "warclake/tasks/reporting/templates/report.html.j2", "warclake/__main__.py"):
        assert needed in names
    # what users run, not the development tools: no tests, tools, fuzzers or trainers
    assert not [n for n in names if n.startswith(("warclake/tests/", "warclake/reports/", "warclake/tools/"))]
    assert "warclake/setup.py" not in names   # the build script, not a module of the package
    assert not [n for n in names if any(w in n for w in ("fuzz", "train", "tooling", "fault_server"))]


def test_the_wheel_carries_the_compiled_modules_stubs_and_the_typed_marker(wheel_env):
    names = zipfile.ZipFile(wheel_env["wheel"]).namelist()
    native = "warclake/tasks/native/"
    stubs = {n[len(native):-len(".pyi")] for n in names if n.startswith(native) and n.endswith(".pyi")}
    built = {n[len(native):].split(".")[0] for n in names if n.startswith(native) and n.endswith((".so", ".pyd"))}
    assert stubs == {p.stem for p in (Path(REPO) / "tasks" / "native").glob("*.pyx")}
    assert built <= stubs and "warclake/py.typed" in names


def test_import_finds_the_wheel_and_shadows_no_common_name(wheel_env):
    code = ("import importlib.util as u, warclake; print(warclake.__file__); "
            "print([n for n in ('tasks', 'flows', 'deployments', 'cli', 'sql') if u.find_spec(n)])")
    where, shadowed = run(wheel_env, wheel_env["python"], "-c", code).stdout.splitlines()
    assert where.startswith(str(wheel_env["venv"]))
    assert shadowed == "[]"
    version = run(wheel_env, wheel_env["python"], "-m", "warclake", "--version").stdout
    assert version.startswith("warclake ") and "unknown" not in version


def test_demo_report_sql_corpus_and_deployments_from_the_wheel(wheel_env):
    exe = os.path.join(wheel_env["bin"], "warclake")
    work = wheel_env["work"]
    demo = run(wheel_env, exe, "demo", "--dir", "demo", "--corpus").stdout
    lake = work / "demo" / "lake"
    docs = lake_documents(lake)
    assert docs > 100 and f"{docs} documents" in demo
    assert f"  query:   warclake sql --lake {lake}" in demo  # installed: no ./dev to name
    assert (work / "demo" / "report" / "report.html").is_file()

    run(wheel_env, exe, "report", "--lake", lake, "--out", "again")
    html = (work / "again" / "report.html").read_text()
    assert "CC-MAIN-2099-01" in html and (work / "again" / "encoding_share.csv").is_file()

    out = run(wheel_env, exe, "sql", "--lake", lake, "--csv", "-c", "SELECT count(*) AS n FROM documents").stdout
    assert out.split() == ["n", str(docs)]
    kept = run(wheel_env, exe, "sql", "--lake", lake, "--csv", "-c",
               "SELECT count(*) FILTER (WHERE kept) AS kept, count(*) AS judged FROM document_decisions").stdout
    k, judged = map(int, kept.split()[1].split(","))
    assert judged == docs and 0 < k < docs   # the corpus stage judged every document, dropped some

    run(wheel_env, exe, "export", "--lake", lake, "--out", "exported", "--format", "jsonl")
    assert sum(1 for f in (work / "exported").glob("*.jsonl") for _ in open(f, "rb")) == k

    checked = json.loads(run(wheel_env, wheel_env["python"], "-m", "warclake.deployments.serve", "--check").stdout)
    names = {(d["flow_name"], d["name"]) for d in checked}
    assert ("extract-dump", "CC-MAIN-2099-01") in names and any(f == "extract-newest-dump" for f, _ in names)


@pytest.mark.shared_data("gold", "dragnet")
def test_eval_from_the_wheel(wheel_env):
    gold = shared_data("gold", "dragnet")
    out = run(wheel_env, os.path.join(wheel_env["bin"], "warclake"), "eval", "--gold", f"dragnet:{gold}",
              "--extractor", "sieve", "--limit", "20", "--quiet", "--markdown", "eval.md").stdout
    table = (wheel_env["work"] / "eval.md").read_text()
    assert "sieve" in table and "dragnet" in table, out
