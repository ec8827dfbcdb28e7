"""Development tools, run from a checkout (``python -m tools.NAME``) and not shipped in the
wheel: fuzzers, measurements of single parts, fault servers, model training, dump generators."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the development data beside a checkout (``$WARCLAKE_DATA`` where a tool reads it)
SHARED_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
