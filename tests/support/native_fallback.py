"""Checks of a compiled module's fallback: a few lines of Python in a fresh process (the
loader decides once, at first import), with the module hidden or made to disagree."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env=dict(os.environ, **env))


def hiding(module: str) -> str:
    """Python source after which importing ``warclake.tasks.native.<module>`` fails as if
    it had not been built."""
    return ("import sys\nclass Hide:\n def find_spec(self, name, *a):\n"
            f"  if name.endswith('native.{module}'): raise ImportError('not built')\n"
            "sys.meta_path.insert(0, Hide())\n")


def warclake_lines(stderr: str) -> list[str]:
    """The lines warclake itself wrote to standard error (its warnings and errors)."""
    return [ln for ln in stderr.splitlines() if ln.startswith("warclake:")]
