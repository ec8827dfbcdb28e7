"""The errors of an object store's client library (botocore's, such as missing credentials
or an endpoint that does not answer, or aiohttp's): s3fs passes them on as they are, not as
OSErrors, so the CLI and the corpus stage's checks name them here in one line."""
from __future__ import annotations

from contextlib import contextmanager

CLIENT_LIBRARIES = ("botocore", "aiobotocore", "aiohttp")


def is_storage_client_error(exc: BaseException) -> bool:
    """Told by the class's module, so that none of the libraries is imported here."""
    return any(c.__module__.split(".")[0] in CLIENT_LIBRARIES for c in type(exc).__mro__)


def describe(exc: BaseException) -> str:
    """The error on one line, with what to do when it is about credentials."""
    line = f"{type(exc).__name__}: {' '.join(str(exc).split())}".rstrip(": ")
    if "Credentials" in type(exc).__name__:   # NoCredentialsError, PartialCredentialsError
        line += " (give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or name AWS_PROFILE)"
    return line


def unusable_lake(lake: str, exc: BaseException, verb: str = "use") -> str:
    """The line for a lake the store's client cannot use: what the CLI prints after
    ``warclake: error:``, and what a flow run's Failed state says."""
    return f"cannot {verb} the lake at {lake}: {describe(exc)}"


@contextmanager
def lake_client_errors(lake: str, verb: str = "use"):
    """An error of the store's client inside, raised as an OSError of one line naming the
    lake (``unusable_lake``), which the flows' checks turn into a Failed state instead of
    letting the client's exception crash the run with a traceback."""
    try:
        yield
    except Exception as exc:
        if not is_storage_client_error(exc):
            raise
        raise OSError(unusable_lake(lake, exc, verb)) from exc
