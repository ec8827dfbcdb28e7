import os
import sys

import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
sys.path.insert(0, HERE)  # test helpers (lakegen, http_server) import as plain modules


def shared_data(*parts: str) -> str:
    """A path under the shared development data; tests using it skip when it is absent."""
    return os.path.join(SHARED_DATA, *parts)


@pytest.fixture(scope="session")
def prefect_harness():
    """A real, temporary Prefect API and database for the whole session (~5 s to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=60):
        yield
