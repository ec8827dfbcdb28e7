"""docId: the WARC-Record-ID's UUID, or a stable UUID derived from where the record lives."""
from __future__ import annotations

import uuid

_NAMESPACE = uuid.UUID("6f1b2d8e-4c1a-5e3b-9a77-2c0f4d1e8b55")  # warclake's own namespace


def doc_id(record_id: str | None, warc_name: str, offset: int) -> str:
    """``<urn:uuid:...>`` -> the UUID; otherwise uuid5(warc name, offset).

    Uzushio draws a random UUID when the header is missing; a derived one keeps
    re-runs of the same archive idempotent (same document, same id).
    """
    if record_id:
        rid = record_id.strip().strip("<>")
        if rid.lower().startswith("urn:uuid:"):
            rid = rid[9:]
        try:
            return str(uuid.UUID(rid))
        except ValueError:
            pass
    return str(uuid.uuid5(_NAMESPACE, f"{warc_name}@{offset}"))
