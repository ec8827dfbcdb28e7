"""The sieve training reproduces a model from the command it records, on any x86-64 CPU.

The shipped model's full retraining (about 8 CPU minutes) is run by hand:
``python -m tools.train_sieve --check``. Here a small model trained by the same code with
``--pages-per-set`` is checked the same way, on this CPU and with numpy's AVX-512 code off.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO
from tools import train_sieve

SMALL_MODEL = os.path.join(REPO, "tests", "tools", "sieve_small.json")
SHIPPED_MODEL = os.path.join(REPO, "tasks", "extract", "boilerplate", "sieve.json")


def _check(model: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.train_sieve", "--check", "--out", model],
                          cwd=REPO, capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ, **(env or {})))


def _avx512_features() -> list[str]:
    """numpy's dispatch targets of AVX-512 that this CPU has (empty without AVX-512)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f) and (f.startswith("AVX512") or f == "X86_V4")]


@pytest.mark.shared_data("gold", "dragnet")
@pytest.mark.shared_data("gold", "wceb_modern_1000")
@pytest.mark.shared_data("gold", "wcxb_dev")
def test_the_small_models_recorded_command_reproduces_it():
    command = json.load(open(SMALL_MODEL, encoding="utf-8"))["meta"]["command"]
    assert "--pages-per-set" in command and "--cutoff-gold" in command and "--page-kind-types" in command
    p = _check(SMALL_MODEL)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "sieve_small.json reproduced" in p.stdout


@pytest.mark.shared_data("gold", "dragnet")
@pytest.mark.shared_data("gold", "wceb_modern_1000")
@pytest.mark.shared_data("gold", "wcxb_dev")
def test_the_check_passes_with_numpys_avx512_code_switched_off():
    """What a CPU without AVX-512 computes: numpy's exp and log take other code there."""
    off = _avx512_features()
    if not off:
        pytest.skip("this CPU has no AVX-512: the test above is the check of its code paths")
    probe = subprocess.run([sys.executable, "-c", "import numpy as np; print(np.exp(np.linspace(-30, 30, 4097)).tobytes().hex())"],
                           capture_output=True, text=True, check=True,
                           env=dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(off)))
    assert probe.stdout.strip() != np.exp(np.linspace(-30, 30, 4097)).tobytes().hex(), \
        "switching AVX-512 off should change numpy's exp in the last bit somewhere"
    p = _check(SMALL_MODEL, {"NPY_DISABLE_CPU_FEATURES": " ".join(off)})
    assert p.returncode == 0, p.stderr[-2000:]
    assert "sieve_small.json reproduced" in p.stdout


def _rows(model: dict, n: int = 4000) -> np.ndarray:
    """Feature rows spread around the model's thresholds."""
    rng = np.random.default_rng(3)
    thr = np.array(model["threshold"], dtype=float)
    feat = np.array(model["feature"])
    X = rng.normal(size=(n, len(model["features"])))
    for j in range(X.shape[1]):
        t = thr[feat == j]
        t = t[np.isfinite(t)]
        if len(t):
            X[:, j] = rng.choice(t, n) + rng.normal(scale=0.5, size=n)
    return X


def _split_with_a_gap(model: dict, X: np.ndarray) -> tuple[int, int, float]:
    """A used split and a threshold above its own that parts ``X`` the same way."""
    feat, thr = np.array(model["feature"]), np.array(model["threshold"], dtype=float)
    for t, node in zip(*np.nonzero(np.isfinite(thr))):
        col = np.sort(X[:, feat[t, node]])
        above = col[col > thr[t, node]]
        if len(above) and above[0] - thr[t, node] > 1e-6:
            return int(t), int(node), float((thr[t, node] + above[0]) / 2)
    raise AssertionError("no split with a gap")


def test_compare_models_accepts_a_split_moved_within_its_gap_and_refuses_other_decisions():
    shipped = json.load(open(SHIPPED_MODEL, encoding="utf-8"))
    X = _rows(shipped)
    t, node, moved = _split_with_a_gap(shipped, X)
    same = json.loads(json.dumps(shipped))
    same["threshold"][t][node] = moved
    ok, lines = train_sieve.compare_models(shipped, same, X)
    assert ok, lines
    splits = np.size(shipped["feature"])
    assert any(f"1 of {splits} splits differ; decisions differ on 0.0000%" in ln for ln in lines)

    other = json.loads(json.dumps(shipped))
    other["leaf"] = [[-v for v in leaves] for leaves in other["leaf"]]
    ok, lines = train_sieve.compare_models(shipped, other, X)
    assert not ok and "decisions differ on too many paragraphs" in lines

    cut = dict(shipped, cutoff=shipped["cutoff"] + 0.025)
    ok, lines = train_sieve.compare_models(shipped, cut, X)
    assert not ok and "cutoff differs" in lines

    listing = dict(shipped, listing_cutoff=shipped["listing_cutoff"] + 0.05)   # the page-kind trees' cutoff
    ok, lines = train_sieve.compare_models(shipped, listing, X)
    assert not ok and "listing_cutoff differs" in lines
    without = {k: v for k, v in shipped.items() if k not in ("page_kind", "listing_cutoff")}
    ok, lines = train_sieve.compare_models(shipped, without, X)
    assert not ok and "page-kind trees in one model only" in lines

    f1 = json.loads(json.dumps(shipped))
    # the F1 recorded at the cutoff: where it was chosen, or where it was fixed (--cutoff)
    at = f1["meta"].get("cutoff_chosen_on") or f1["meta"]["f1_at_cutoff"]
    name = next(iter(at))
    at[name] -= 0.002
    ok, lines = train_sieve.compare_models(shipped, f1, X)
    assert not ok and f"F1 on {name} differs by more than 0.001" in lines
