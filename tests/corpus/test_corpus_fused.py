"""The corpus stage's per-archive step run inside extraction (``--corpus-signatures``): the
bytes the separate step writes, archives the stage then finds done (and redoes under other
signature settings), failed archives left unsigned, a crash in the middle of an archive
leaving nothing that looks done, a lake in an object store, and the flow's follow-up."""
from __future__ import annotations

import glob
import gzip
import json
import os
import posixpath
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from support.s3_lake import s3_fixture
from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
from warclake.tasks.corpus.settings import SignatureConfig
from warclake.tasks.corpus.signals.archive_step import STEP, archive_key, sign_archive
from warclake.tasks.corpus.signals.summaries import finished_archives
from warclake.tasks.corpus.stage import StageOptions, run_stage
from warclake.tasks.extract import archive as extraction
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import archive_name
from warclake.tasks.sample_dump import make_dump

DUMP = "CC-MAIN-2099-01"
SMALL_BATCH = 7   # documents per row group: every archive gives several to sign one by one
OUTPUTS = ("paragraphs", "docsigs")
s3 = s3_fixture("warclake-fused")


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> list[str]:
    """Three archives (the last truncated: salvaged) and one that is no archive (failed)."""
    d = str(tmp_path_factory.mktemp("dump"))
    paths = make_dump(d, files=3, pages_per_file=40, dump=DUMP, truncate_last=True)
    bad = os.path.join(d, f"{DUMP}-garbage.warc.gz")
    with open(bad, "wb") as fh:
        fh.write(gzip.compress(b"<html>not an archive</html>\n" * 50))
    return paths + [bad]


def extract(paths, lake: str, fused: bool) -> list[dict]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(extraction, "DOC_BATCH", SMALL_BATCH)
        config = ExtractConfig.from_langs("all", corpus_signatures=fused)
        return [extraction.extract_archive(p, DUMP, lake, config) for p in paths]


@pytest.fixture(scope="module")
def reference(archives, tmp_path_factory) -> dict:
    """A lake extracted without the option, then signed by the separate step."""
    lake = str(tmp_path_factory.mktemp("ref") / "lake")
    extract(archives, lake, fused=False)
    assert not os.path.exists(os.path.join(lake, "corpus"))
    done = [sign_archive(lake, DUMP, w, s) for w, s in finished_archives(lake, DUMP)]
    assert [r["done"] for r in done] == ["signed"] * 3
    return {"lake": lake, "outputs": outputs(lake)}


def outputs(lake: str) -> dict[str, bytes]:
    """{table/archive: bytes} of the step's outputs in a local lake."""
    found = {}
    for table in OUTPUTS:
        for p in sorted(glob.glob(os.path.join(lake, "corpus", table, f"dump={DUMP}", "*.parquet"))):
            with open(p, "rb") as fh:
                found[f"{table}/{os.path.basename(p)}"] = fh.read()
    return found


def hidden_files(root: str) -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.startswith(".")]


def stage(lake: str, sig: SignatureConfig | None = None) -> dict:
    dumps = dumps_to_process(lake, None)
    return run_stage(lake, dumps, check_inputs(lake, dumps), StageOptions(sig=sig or SignatureConfig()))


def state(lake: str, warc: str) -> dict | None:
    path = os.path.join(lake, "corpus", "state", STEP, f"dump={DUMP}", warc + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def test_extraction_writes_the_bytes_the_separate_step_writes_and_the_stage_skips_them(archives, reference, tmp_path):
    lake = str(tmp_path / "lake")
    summaries = {s["warc_file"]: s for s in extract(archives, lake, fused=True)}
    assert sorted(s["status"] for s in summaries.values()) == ["complete", "complete", "failed", "salvaged"]
    got = outputs(lake)
    assert got == reference["outputs"] and len(got) == 2 * 3
    for warc, s in summaries.items():
        if s["status"] == "failed":   # as the stage: a failed archive is not signed
            assert state(lake, warc) is None and not any(warc in k for k in got)
            continue
        docs = os.path.join(lake, "documents", f"dump={DUMP}", warc + ".parquet")
        assert pq.ParquetFile(docs).num_row_groups > 1   # signed one row group at a time
        st = state(lake, warc)
        assert st["key"] == archive_key(docs, s, SignatureConfig())
        assert st["documents"] == s["documents"] > 0
        assert s["stages"]["signatures"]["count"] == s["documents"]
    assert hidden_files(os.path.join(lake, "corpus")) == []

    assert stage(lake)["signed"] == 0
    assert outputs(lake) == got
    assert stage(lake, SignatureConfig(partitions=4))["signed"] == 0   # partitions: only the global steps'
    assert stage(lake, SignatureConfig(num_perm=60, bands=12, rows=5))["signed"] == 3   # other signatures: redone


def test_an_extraction_without_the_option_writes_no_corpus_outputs(archives, tmp_path):
    lake = str(tmp_path / "lake")
    (s,) = extract(archives[:1], lake, fused=False)
    assert not os.path.exists(os.path.join(lake, "corpus"))
    assert list(s["stages"]) == ["read", "charset", "language", "parse", "boilerplate", "write"]


def test_a_row_group_the_step_cannot_sign_leaves_the_archive_to_the_stage(archives, reference, tmp_path, monkeypatch):
    """The step failing inside extraction (here: its third row group raises) costs nothing of
    the extraction, leaves no output or temporary, and the stage signs the archive later."""
    from warclake.tasks.corpus.signals import archive_step

    calls = []
    real = archive_step.signatures_of

    def third_fails(docs, sig, *rest):
        calls.append(docs.num_rows)
        if len(calls) == 3:
            raise MemoryError("no memory for this row group")
        return real(docs, sig, *rest)

    monkeypatch.setattr(archive_step, "signatures_of", third_fails)
    lake = str(tmp_path / "lake")
    (s,) = extract(archives[:1], lake, fused=True)
    assert s["status"] == "complete" and s["documents"] > 3 * SMALL_BATCH and len(calls) == 3
    assert hidden_files(lake) == []
    assert outputs(lake) == {} and state(lake, s["warc_file"]) is None
    monkeypatch.undo()
    assert stage(lake)["signed"] == 1
    assert all(v == reference["outputs"][k] for k, v in outputs(lake).items()) and len(outputs(lake)) == 2


def crash_marker(archives: list[str], index: int, nth: int = 25) -> str:
    """The URL of the ``nth`` response of archive ``index``, found in no other archive."""
    from warcio.archiveiterator import ArchiveIterator

    with open(archives[index], "rb") as fh:
        urls = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh) if r.rec_type == "response"]
    url = urls[nth]
    for i, p in enumerate(archives):
        with gzip.open(p, "rb") as fh:
            try:
                n = fh.read().count(url.encode())
            except EOFError:   # the truncated archive: what it holds was read
                n = 0
        assert (n > 0) == (i == index), (url, p)
    return url


def warclake(*args, env=None, batch: int | None = None) -> subprocess.CompletedProcess:
    """The CLI in a process of its own (``batch``: documents per row group)."""
    code = ("import sys; import warclake.tasks.extract.archive as e; "
            + (f"e.DOC_BATCH = {batch}; " if batch else "")
            + "from warclake.cli.main import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **(env or {})))


def test_a_crash_in_the_middle_of_an_archive_leaves_nothing_that_looks_done(archives, reference, tmp_path):
    lake = str(tmp_path / "lake")
    good = archives[:3]
    names = [archive_name(p) for p in good]
    args = ["extract", "--dump", DUMP, "--lake", lake, "--langs", "all", "-q", "--corpus-signatures"]
    # the process ends at once (as if killed) on a page of the second archive, after some of
    # its row groups were signed and written to the outputs' temporaries
    crashed = warclake(*args, "--workers", "0", *good, batch=SMALL_BATCH,
                       env={"WARCLAKE_TEST_FAULT": f"crash:{crash_marker(good, 1)}"})
    assert crashed.returncode == 70, crashed.stderr
    assert state(lake, names[0]) is not None
    assert state(lake, names[1]) is None
    assert not os.path.exists(os.path.join(lake, "files", f"dump={DUMP}", names[1] + ".json"))
    left = hidden_files(os.path.join(lake, "corpus"))
    assert any(f"/paragraphs/dump={DUMP}/" in p for p in left) and all(p.endswith(".tmp") for p in left)
    assert sorted(outputs(lake)) == sorted(f"{t}/{names[0]}.parquet" for t in OUTPUTS)

    # the next run (in a watched worker, the default) cleans up and does the rest
    again = warclake(*args, *good)
    assert again.returncode == 0, again.stderr
    assert "1 of 3 archives done already" in again.stdout
    assert hidden_files(lake) == []
    for name in names:
        assert state(lake, name) is not None
    got = outputs(lake)
    assert sorted(got) == sorted(reference["outputs"])
    for key in got:   # the same rows (the re-run's default row groups are larger: values, not bytes)
        assert rows(lake, key) == rows(reference["lake"], key), key
    assert stage(lake)["signed"] == 0


def rows(lake: str, key: str) -> str:
    """An output's rows, as text (a metric may be NaN, which equals nothing, not even itself)."""
    return repr(pq.read_table(os.path.join(lake, "corpus", key.replace("/", f"/dump={DUMP}/"))).to_pylist())


def test_a_remote_lake_gets_the_same_outputs(archives, reference, s3):
    fs = s3["fs"]
    url = "s3://warclake-fused/lake"
    summaries = extract(archives, url, fused=True)
    root = "warclake-fused/lake/corpus"
    fs.invalidate_cache()
    got = {f"{t}/{posixpath.basename(p)}": fs.cat_file(p)
           for t in OUTPUTS for p in sorted(fs.find(f"{root}/{t}"))}
    assert got == reference["outputs"]
    for s in summaries:
        if s["status"] != "failed":
            st = json.loads(fs.cat_file(f"{root}/state/{STEP}/dump={DUMP}/{s['warc_file']}.json"))
            assert st["key"]["documents_bytes"] == s["documents_bytes"] and st["key"]["finished"] == s["finished"]
    assert stage(url)["signed"] == 0


@pytest.mark.usefixtures("prefect_harness")
def test_the_flow_s_corpus_follow_up_finds_the_archives_signed(archives, tmp_path):
    from warclake.flows.dump_flow import extract_dump

    lake = str(tmp_path / "lake")
    st = extract_dump(dump=DUMP, inputs=archives[:2], lake=lake, langs="all", workers=1, report=False,
                      corpus=True, return_state=True)
    assert st.is_completed(), st.message
    assert st.result()["corpus"]["signed"] == 0   # extraction signed both, in its worker processes
    for p in archives[:2]:
        assert state(lake, archive_name(p)) is not None


def test_the_options_of_extract_and_run():
    from warclake.cli.extract import config_from_args
    from warclake.cli.main import build_parser

    def fused(*argv):
        args = build_parser().parse_args([*argv, "--dump", DUMP, "--lake", "L", "x.warc.gz"])
        return config_from_args(args).corpus_signatures

    assert fused("extract") is False and fused("extract", "--corpus-signatures") is True
    assert fused("run") is False and fused("run", "--corpus-signatures") is True
    assert fused("run", "--corpus") is True and fused("run", "--corpus", "--no-corpus-signatures") is False
    # what else is written, not what the documents are: archives done without it stay done
    assert (ExtractConfig.from_langs("all", corpus_signatures=True).fingerprint()
            == ExtractConfig.from_langs("all").fingerprint())
