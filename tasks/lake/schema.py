"""Arrow schemas of the lake's parquet files (the data contract: sql/README.md)."""
import pyarrow as pa

DOCUMENTS = pa.schema([
    # Uzushio-compatible columns first
    ("text", pa.string()),
    ("docId", pa.string()),
    ("url", pa.string()),
    ("charset", pa.string()),
    ("lang", pa.string()),
    ("date", pa.timestamp("us", tz="UTC")),
    # warclake's own
    ("dump", pa.string()),
    ("warc_file", pa.string()),
    ("warc_offset", pa.int64()),
    ("charset_source", pa.string()),
    ("lang_score", pa.float32()),
    ("boilerplate", pa.string()),
    ("paragraph_labels", pa.list_(pa.string())),
])

LEDGER = pa.schema([
    ("dump", pa.string()),
    ("warc_file", pa.string()),
    ("warc_offset", pa.int64()),
    ("record_type", pa.string()),
    ("url", pa.string()),
    ("outcome", pa.string()),
    ("charset", pa.string()),
    ("charset_source", pa.string()),
    ("lang", pa.string()),
    ("bytes_in", pa.int64()),        # the record's WARC Content-Length, every outcome
    ("payload_bytes", pa.int64()),   # the payload's length, when it was read in full
    ("quirks", pa.string()),         # other writers' quirks read past, comma-separated; null: none
])
