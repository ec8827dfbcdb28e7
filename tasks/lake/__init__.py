"""The lake: its layout and atomic writes, parquet schemas, which archives still need work, the
DuckDB catalogue, the locks and the owners of temporaries, storage errors."""
