"""The extractor's output is pinned to its fingerprint: a change in what it writes for the
sample dump without a new fingerprint (EXTRACTOR_VERSION, a data file's digest, a library's
version: tasks/extract/config.py) would leave every lake holding outdated documents as done.
Both paragraph walks, compiled and Python, must write the pinned documents."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO
from support.output_digest import digests
from warclake.tasks.extract.config import EXTRACTOR_VERSION

# config fingerprint -> digest of the sample dump's documents and ledger (support/output_digest.py),
# one per boilerplate mode. A new fingerprint gets a new line; a line is never edited.
PINNED = {
    # EXTRACTOR_VERSION "6"; lingua 2.1.1, charset-normalizer 3.5.2, selectolax 1.0.2, warcio 1.8.1
    "92d41004194f0a39": "0dd10132965661819de6fed9",   # none
    "35931e4e8d452103": "6b4938d45711cf6a59632d5e",   # justext
    "a72f6c07857880fe": "9daba91d581f409690052f1e",   # density
    "aeb65b51d782358b": "c8c0e322e106d21dca1115fe",   # bte
    "b6fefa18f1d14be9": "cc9d781dfd64919bfc164104",   # sieve
    # EXTRACTOR_VERSION "7" (tables as rows; the sample dump has no data table); the same libraries
    "172d7fc750a85929": "0dd10132965661819de6fed9",   # none
    "3825a5b7ef0c700a": "6b4938d45711cf6a59632d5e",   # justext
    "977e45ba8bdc2281": "9daba91d581f409690052f1e",   # density
    "1d5ded609e19afc3": "c8c0e322e106d21dca1115fe",   # bte
    "653c4e3a8aefd0ac": "cc9d781dfd64919bfc164104",   # sieve
    # sieve.json retrained with the Japanese pages of the modern web (the sample dump's documents unchanged)
    "c65ae5e712dbd049": "cc9d781dfd64919bfc164104",   # sieve
}


def unpinned(found: dict) -> list[str]:
    """What to do about each mode whose output is not the pinned one, in words."""
    said = []
    for mode, (fingerprint, digest) in found.items():
        if fingerprint not in PINNED:
            said.append(f"{mode}: no digest is pinned for its fingerprint {fingerprint} (a new EXTRACTOR_VERSION, "
                        f"data file or library): add  \"{fingerprint}\": \"{digest}\",   # {mode}  to PINNED in "
                        "tests/extract/test_output_pinned.py")
        elif PINNED[fingerprint] != digest:
            said.append(f"{mode}: the documents changed (digest {digest}, pinned {PINNED[fingerprint]}) but the "
                        f"fingerprint did not, so lakes would keep the old ones as done. Bump EXTRACTOR_VERSION "
                        f"(now {EXTRACTOR_VERSION!r}) in tasks/extract/config.py, then pin the new fingerprints "
                        f"this test names (never edit a pinned line)")
    return said


def test_the_sample_dump_s_documents_are_pinned_to_the_fingerprint(tmp_path):
    problems = unpinned(digests(str(tmp_path)))
    assert not problems, "\n".join(problems)


def test_the_python_paragraph_walk_writes_the_pinned_documents(tmp_path):
    p = subprocess.run([sys.executable, os.path.join("tests", "support", "output_digest.py"), str(tmp_path)],
                       capture_output=True, text=True, timeout=300, cwd=REPO,
                       env=dict(os.environ, WARCLAKE_NATIVE="0", PYTHONPATH=os.path.join(REPO, "tests")))
    assert p.returncode == 0, p.stderr[-3000:]
    said = json.loads(p.stdout.strip().splitlines()[-1])
    assert said["walk"] == "python"
    problems = unpinned({m: tuple(v) for m, v in said["digests"].items()})
    assert not problems, "\n".join(problems)
