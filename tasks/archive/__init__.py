"""Bytes to records: the archive reader (WARC, WET, WAT, ARC; plain or per-record gzip), its line
reader, rewind store and digests, archived bodies' encodings, remote streams, and finding a
dump's archives."""
