"""The fixed set of per-record outcomes written to the ledger.

Every record read from an archive gets exactly one of these, so that
records in == sum of outcomes for each input file.
"""
from enum import Enum


class Outcome(str, Enum):
    KEPT = "kept"                      # became a document
    NOT_RESPONSE = "not_response"      # request, warcinfo, metadata, revisit, ... records
    HTTP_STATUS = "http_status"        # HTTP status other than 200
    NOT_TEXT = "not_text"              # content type is not HTML/XHTML/text-like
    WARC_TRUNCATED = "warc_truncated"  # record carries a WARC-Truncated header
    OVERSIZE = "oversize"              # payload above the configured limit
    HTTP_PARSE_ERROR = "http_parse_error"  # HTTP head or payload could not be read
    CONTENT_ENCODING_FAILED = "content_encoding_failed"  # unknown Content-Encoding, or its data does not decode
    CHARSET_FAILED = "charset_failed"  # no candidate encoding decoded the window strictly
    LANG_REJECTED = "lang_rejected"    # language found, not among the targets (or no target's script)
    LANG_UNDETERMINED = "lang_undetermined"  # too little evidence: no letters (named targets),
                                       # or below min_chars / min_lang_score
    HTML_PARSE_ERROR = "html_parse_error"  # the HTML parser or paragraph walk failed
    TOO_COMPLEX = "too_complex"        # past max_depth / max_paragraphs / max_text_chars
    EMPTY = "empty"                    # no paragraph with text
    METADATA = "metadata"              # WAT metadata record: parsed, carries no text
    RECORD_BROKEN = "record_broken"    # the archive broke inside this record (salvaged file)
    # The record stopped its extraction worker; reading went on after it (salvaged file):
    WORKER_CRASHED = "worker_crashed"  # the worker died on it twice (a crash in compiled code...)
    TIMED_OUT = "timed_out"            # past record_seconds on it: the worker was stopped
    OUT_OF_MEMORY = "out_of_memory"    # the worker grew past worker_memory_mb on it: stopped

    def __str__(self) -> str:  # so f-strings and parquet columns show the plain value
        return self.value


ALL_OUTCOMES = [o.value for o in Outcome]
