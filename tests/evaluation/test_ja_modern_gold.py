"""The Japanese pages of the modern web (tools/gold/ja_modern.jsonl): pages read from copies of
public git repositories, their split by site, and that every page loads where the copies are."""
import hashlib
import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from warclake.tasks.evaluation.gold import read_gold
from warclake.tasks.evaluation.ja_gold import REPOS_ENV, read_entries, read_ja

GOLD = Path(__file__).resolve().parents[2] / "tools" / "gold" / "ja_modern.jsonl"


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def _repo_with_page(tmp_path, body: bytes) -> tuple[Path, str]:
    """A clone-like copy of ``someone/pages`` under ``tmp_path/repos`` holding fixtures/a.html."""
    work = tmp_path / "repos" / "someone+pages"
    (work / "fixtures").mkdir(parents=True)
    (work / "fixtures" / "a.html").write_bytes(body)
    _git("init", "-q", cwd=work)
    _git("add", "fixtures/a.html", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "page", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    # the page changes after the commit: the reader reads the commit, not the work tree
    (work / "fixtures" / "a.html").write_bytes(b"<p>edited later</p>")
    return tmp_path / "repos", commit


def _gold(tmp_path, commit: str, sha: str, repo: str = "someone/pages") -> Path:
    gold = tmp_path / "g.jsonl"
    row = {"id": "ja-modern/a", "repo": repo, "commit": commit, "path": "fixtures/a.html",
           "sha256": sha, "charset": "utf-8", "url": "https://a.example/1", "kind": "news",
           "group": "a.example", "split": "tuning", "text": "見出し\n本文です。"}
    gold.write_text(json.dumps(row, ensure_ascii=False) + "\n", "utf-8")
    return gold


def test_a_page_kept_in_a_git_repository_is_read_at_its_commit(tmp_path):
    body = "<html><body><h1>見出し</h1><p>本文です。</p></body></html>".encode()
    repos, commit = _repo_with_page(tmp_path, body)
    gold = _gold(tmp_path, commit, hashlib.sha256(body).hexdigest())
    pages = read_gold(f"ja:{gold},{repos}", "tuning")
    assert [p.id for p in pages] == ["ja-modern/a"]
    assert pages[0].html == body and pages[0].gold == "見出し\n本文です。"
    assert pages[0].url == "https://a.example/1" and pages[0].content_type == ""
    assert read_ja(f"{gold},{repos}", "heldout") == []


def test_the_repositories_root_may_come_from_the_environment(tmp_path, monkeypatch):
    body = b"<p>x</p>"
    repos, commit = _repo_with_page(tmp_path, body)
    gold = _gold(tmp_path, commit, hashlib.sha256(body).hexdigest())
    monkeypatch.setenv(REPOS_ENV, str(repos))
    assert [p.html for p in read_ja(str(gold))] == [body]
    monkeypatch.delenv(REPOS_ENV)
    with pytest.raises(FileNotFoundError, match=REPOS_ENV):
        read_ja(str(gold))


def test_changed_bytes_a_missing_copy_or_commit_are_errors(tmp_path):
    body = b"<p>x</p>"
    repos, commit = _repo_with_page(tmp_path, body)
    with pytest.raises(ValueError, match="sha256"):
        read_ja(f"{_gold(tmp_path, commit, '0' * 64)},{repos}")
    with pytest.raises(FileNotFoundError, match="no copy of other/pages"):
        read_ja(f"{_gold(tmp_path, commit, '0' * 64, repo='other/pages')},{repos}")
    with pytest.raises(FileNotFoundError, match="not in"):
        read_ja(f"{_gold(tmp_path, 'f' * 40, '0' * 64)},{repos}")


def test_modern_set_is_split_by_site_with_a_third_in_the_final_part():
    entries = read_entries(GOLD)
    sides = defaultdict(set)
    for e in entries:
        sides[e["group"]].add(e["split"])
        assert e["text"].strip() and len(e["sha256"]) == 64 and len(e["commit"]) == 40
        assert e["repo"] in {"postlight/parser", "adbar/htmldate"}
        # the final part (split "heldout") is fixed by a hash of the site, not chosen
        final = int(hashlib.sha1(e["group"].encode()).hexdigest(), 16) % 3 == 0
        assert e["split"] == ("heldout" if final else "tuning")
    assert all(len(s) == 1 for s in sides.values())
    assert len(entries) >= 30 and len({e["id"] for e in entries}) == len(entries)
    n_final = sum(e["split"] == "heldout" for e in entries)
    assert 0.2 <= n_final / len(entries) <= 0.45


@pytest.mark.skipif(not os.environ.get(REPOS_ENV), reason=f"${REPOS_ENV} names no copies of the repositories")
def test_every_modern_page_loads_with_its_verified_bytes():
    pages = read_ja(str(GOLD))
    assert len(pages) == len(read_entries(GOLD))
    assert all(any("\u3040" <= c <= "\u309f" for c in p.gold) for p in pages)   # Japanese text
