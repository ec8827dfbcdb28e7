"""How work runs, without Prefect: retries, the extraction workers and their supervision, the
per-record watch, run checks, Ctrl-C, and the test-only fault injector."""
