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

# Unique per row: a dictionary of them is built, found too large and dropped for every page
# of every row group, and min/max statistics of a page's text help no reader skip anything.
# Written plain, the documents cost about a tenth less CPU to write and are the same size
# (the project's dump); docId and url keep their statistics (a look-up by id may use them).
DOCUMENTS_NO_DICTIONARY = frozenset({"text", "docId", "url"})
DOCUMENTS_NO_STATISTICS = frozenset({"text"})

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


def leaf_paths(f: pa.Field) -> list[str]:
    """The parquet columns of a field (a writer's per-column options name a list's leaves)."""
    if pa.types.is_list(f.type):
        return [f"{f.name}.list.element"]
    return [f.name]


def writer_options(sch: pa.Schema, no_dictionary=frozenset(), no_statistics=frozenset()) -> dict:
    """``ParquetWriter`` options: dictionary and statistics for every column but those named."""
    leaves = [(f.name, leaf) for f in sch for leaf in leaf_paths(f)]
    return {"use_dictionary": [p for n, p in leaves if n not in no_dictionary],
            "write_statistics": [p for n, p in leaves if n not in no_statistics]}
