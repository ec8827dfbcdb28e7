"""`warclake --version` names every compiled module and whether it runs."""
import os
import subprocess
import sys

from conftest import REPO
from warclake.tasks import native

NAMES = ("paragraph walk", "sieve features", "sieve structure", "corpus signatures", "corpus quality metrics",
         "corpus per-archive pass", "first-pass language scores", "page pre-scan",
         "language text scans", "fastText scorer")


def version(**env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warclake", "--version"], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env=dict(os.environ, **env))


def test_version_lists_every_module_the_loader_checked():
    text = native.describe_all()
    # (tooling loaded earlier in this process, e.g. the training histograms, is listed after)
    assert {"lexbor_walk", "sieve_features", "corpus_signatures", "corpus_quality",
            "language_trigrams", "page_scan", "language_text"} <= set(native.LOADED)
    parts = dict(p.split(": ", 1) for p in text.split("; "))
    assert tuple(parts)[:len(NAMES)] == NAMES
    for name, (what, status, _) in native.LOADED.items():
        assert parts[native._LABELS.get(name, what)].split(" ")[0] == status
    # a fresh process lists the same ten, each compiled or python with its reason
    out = version().stdout
    assert out.startswith("warclake ")
    listed = dict(p.split(": ", 1) for p in out[out.index("(") + 1:out.rindex(")")].split("; "))
    assert tuple(listed) == NAMES
    assert all(v == "compiled" or v.startswith("python (") for v in listed.values()), listed


def test_the_switch_turns_every_module_to_python_and_says_so():
    p = version(WARCLAKE_NATIVE="0")
    assert p.returncode == 0 and p.stderr == ""
    for name in NAMES:
        assert f"{name}: python (WARCLAKE_NATIVE=0)" in p.stdout
