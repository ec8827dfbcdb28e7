"""Charset detection and decoding of HTTP bodies: ``decode_body`` runs the cascade described
in cascade.py.

Modules by job: labels (label -> WHATWG name -> Python codec), prescan (BOM, <meta>, XML
declaration, HTTP header), detect (the bytes alone: UTF-8 validity, charset-normalizer,
plausibility checks), latin (Latin code pages by their letters), cjk (CJK encodings by
their everyday characters), eucjp (EUC-JP cells Python lacks), cascade (the order and strict
window decoding).
"""
from warclake.tasks.extract.charset.cascade import SOURCES, DecodeResult, decode_body, decode_strict_window
from warclake.tasks.extract.charset.detect import ascii_compatible_plausible, detect_charset, latin_plausible
from warclake.tasks.extract.charset.labels import normalize_label, report_labels
from warclake.tasks.extract.charset.prescan import (
                                             charset_from_content,
                                             header_charset,
                                             sniff_bom,
                                             sniff_meta,
                                             sniff_xml_declaration,
)

__all__ = [
    "SOURCES", "DecodeResult", "ascii_compatible_plausible", "charset_from_content",
    "decode_body", "decode_strict_window", "detect_charset", "header_charset",
    "latin_plausible", "normalize_label", "report_labels", "sniff_bom", "sniff_meta",
    "sniff_xml_declaration",
]
