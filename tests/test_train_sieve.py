"""The shipped sieve model is what its recorded training command produces, byte for byte."""
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.slow
@pytest.mark.timeout(3600)   # about 3.5 CPU minutes, several times that on a loaded machine
@pytest.mark.shared_data("gold", "dragnet")
@pytest.mark.shared_data("gold", "wceb_modern_1000")
@pytest.mark.shared_data("gold", "cleaneval", "cleaneval-dev")
@pytest.mark.shared_data("gold", "mozilla_readability_testpages")
def test_the_recorded_training_command_reproduces_the_shipped_model():
    with open(os.path.join(REPO, "tasks", "boilerplate", "sieve.json"), encoding="utf-8") as f:
        command = json.load(f)["meta"]["command"]
    assert command[:1] == ["--gold"] and "--cutoff-gold" in command
    p = subprocess.run([sys.executable, "-m", "tools.train_sieve", "--check"],
                       cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "reproduced byte for byte" in p.stdout
