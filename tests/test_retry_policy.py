"""Which errors the flow retries: the network and storage that may recover, never our own
full disk, a read-only place, or an input that is not there."""
import errno

import pytest

from warclake.flows.dump_flow import is_transient
from warclake.tasks.warc_reader import TransientInputError


@pytest.mark.parametrize("exc", [TransientInputError("reset"), ConnectionResetError(), TimeoutError(),
                                 OSError(errno.EIO, "I/O error on a network mount")])
def test_network_and_storage_hiccups_are_retried(exc):
    assert is_transient(exc)


@pytest.mark.parametrize("exc", [FileNotFoundError(errno.ENOENT, "gone"), PermissionError(errno.EACCES, "no"),
                                 OSError(errno.ENOSPC, "No space left on device"),
                                 OSError(errno.EROFS, "Read-only file system"),
                                 OSError(errno.EDQUOT, "Disk quota exceeded"), ValueError("bad"), None])
def test_what_no_retry_can_fix_is_not_retried(exc):
    assert not is_transient(exc)
