"""Where and how the corpus stage keeps its tables: layout and atomic writes, manifests, the
DuckDB engine, the catalogue's views, the run lock and a remote lake's listing."""
