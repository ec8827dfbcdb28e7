"""The ``ja`` gold format: drafted main text of pages that stay in the development data.

One JSON object per line:

* ``id`` — the page id (``ja/<name>``),
* ``path`` — the page's file relative to the data root (``../shared/data``),
* ``record_id`` — for a WARC file, the ``WARC-Record-ID`` of the response record; null for a
  plain HTML file,
* ``sha256`` — of the page bytes (the file, or the record's decoded HTTP payload); a page whose
  bytes differ is an error, not a skip: its truth was drafted on other bytes,
* ``charset`` — the true charset where known, ``url``, ``kind`` (blog, news, shop product...),
  ``group`` (a site, or one product: pages of one group share a side of the split),
* ``split`` — ``tuning`` or ``heldout``, fixed in the file before any tuning,
* ``text`` — the main text, one block per line.

A page kept in a public git repository instead names ``repo`` (``owner/name``), ``commit`` (40
hex digits) and ``path`` inside that commit; its bytes are read with ``git cat-file`` from a
copy of the repository under the repositories' root (``REPOS_ENV`` or the root given after the
file): ``ROOT/owner+name`` or ``ROOT/name``, a bare repository, a clone, or a folder holding
the git directory as ``repo``. The sha256 check is the same.

The page's charset hint is what a crawler would see: the WARC record's HTTP Content-Type,
none for a plain file (the cascade sniffs, as it would on a page without headers).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from warclake.tasks.evaluation.gold import GoldPage, normalise_gold

SPLITS = ("heldout", "tuning", "all")
REPOS_ENV = "WARCLAKE_REPOS"   # the folder holding copies of the repositories pages name


def data_root(gold_file: Path, given: str = "") -> Path:
    """The folder page paths are relative to: given, ``$WARCLAKE_DATA``, else ``../shared/data``
    beside the working directory or beside the checkout holding the gold file."""
    if given:
        return Path(given)
    if os.environ.get("WARCLAKE_DATA"):
        return Path(os.environ["WARCLAKE_DATA"])
    for base in (Path.cwd(), *gold_file.resolve().parents):
        cand = base.parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return Path.cwd().parent / "shared" / "data"


def read_entries(gold_file: str | Path) -> list[dict]:
    with open(gold_file, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _warc_payloads(path: Path, wanted: set[str]) -> dict[str, tuple[bytes, str]]:
    """{record id: (HTTP payload, Content-Type)} of the wanted response records."""
    from warclake.tasks.archive.reader import ArchiveReader

    found = {}
    with open(path, "rb") as f:
        for rec in ArchiveReader(f):
            if rec.rec_type == "response" and rec.record_id in wanted:
                body, _ = rec.read_payload()
                found[rec.record_id] = (body, (rec.http_headers or {}).get("content-type") or "")
    return found


def repos_root(given: str = "") -> Path:
    """The folder holding copies of the repositories pages name: given, else ``$WARCLAKE_REPOS``."""
    if given:
        return Path(given)
    if os.environ.get(REPOS_ENV):
        return Path(os.environ[REPOS_ENV])
    raise FileNotFoundError(f"pages kept in git repositories need their copies: give FILE,REPOS_ROOT "
                            f"or ${REPOS_ENV} (see tools/gold/README.md)")


def git_dir(root: Path, repo: str) -> Path:
    """The git directory of ``owner/name`` under ``root``."""
    owner, _, name = repo.partition("/")
    for base in (root / f"{owner}+{name}", root / name):
        for cand in (base / "repo", base / ".git", base):
            if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
                return cand
    raise FileNotFoundError(f"no copy of {repo} under {root} (as {owner}+{name} or {name})")


def git_blob(gdir: Path, commit: str, path: str) -> bytes:
    got = subprocess.run(["git", "--git-dir", str(gdir), "cat-file", "blob", f"{commit}:{path}"],
                         capture_output=True)
    if got.returncode:
        raise FileNotFoundError(f"{path} at {commit[:12]} not in {gdir}: "
                                f"{got.stderr.decode('utf-8', 'replace').strip()}")
    return got.stdout


def read_ja(spec: str | Path, split: str = "all") -> list[GoldPage]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    file_part, _, root_part = str(spec).partition(",")
    gold_file = Path(file_part)
    if not gold_file.is_file():
        raise FileNotFoundError(f"ja gold file {gold_file} does not exist")
    entries = [e for e in read_entries(gold_file) if split == "all" or e["split"] == split]
    in_repos = any(e.get("repo") for e in entries)
    in_data = any(not e.get("repo") for e in entries)
    root = data_root(gold_file, root_part) if in_data else Path()
    if in_data and not root.is_dir():
        raise FileNotFoundError(f"data root {root} does not exist (give FILE,DATA_ROOT or $WARCLAKE_DATA)")
    repos = repos_root(root_part) if in_repos else Path()
    gdirs = {r: git_dir(repos, r) for r in sorted({e["repo"] for e in entries if e.get("repo")})}
    warcs: dict[str, set[str]] = {}
    for e in entries:
        if e.get("record_id"):
            warcs.setdefault(e["path"], set()).add(e["record_id"])
    payloads = {p: _warc_payloads(root / p, ids) for p, ids in warcs.items()}
    pages = []
    for e in entries:
        if e.get("repo"):
            body, ctype = git_blob(gdirs[e["repo"]], e["commit"], e["path"]), ""
        elif e.get("record_id"):
            if e["record_id"] not in payloads[e["path"]]:
                raise ValueError(f"{e['id']}: no response record {e['record_id']} in {e['path']}")
            body, ctype = payloads[e["path"]][e["record_id"]]
        else:
            body, ctype = (root / e["path"]).read_bytes(), ""
        digest = hashlib.sha256(body).hexdigest()
        if digest != e["sha256"]:
            raise ValueError(f"{e['id']}: page bytes of {e['path']} have sha256 {digest}, "
                             f"the gold was drafted on {e['sha256']}")
        pages.append(GoldPage(e["id"], body, normalise_gold(e["text"]), e.get("url") or "", ctype))
    return pages
