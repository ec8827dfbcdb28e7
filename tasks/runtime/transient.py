"""Which errors are worth a retry: the network's or the storage's, not the input's bytes or
our own side's (a full disk, a forbidden place). Used by the flows' retry conditions and
by the corpus stage's own retries when it runs without Prefect."""
from __future__ import annotations

import errno

from warclake.tasks.archive.reader import TransientInputError

# Errors worth retrying: the network or storage, not the bytes of the archive.
TRANSIENT = (TransientInputError, ConnectionError, TimeoutError)


# Errors of our own side that waiting does not fix: a full disk or quota, a read-only or
# forbidden place.
PERMANENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


def is_transient(exc: BaseException | None) -> bool:
    if exc is None or isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
        return False
    if isinstance(exc, OSError) and exc.errno in PERMANENT_ERRNOS:
        return False
    if isinstance(exc, TRANSIENT):
        return True
    name = type(exc).__name__
    # aiohttp / fsspec HTTP and botocore errors, without importing them
    return name in {"ClientError", "ClientConnectorError", "ServerDisconnectedError", "ClientPayloadError",
                    "ClientResponseError", "FSTimeoutError", "EndpointConnectionError", "ReadTimeoutError"} \
        or (isinstance(exc, OSError) and not isinstance(exc, (FileNotFoundError, NotADirectoryError)))
