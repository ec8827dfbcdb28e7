"""warclake's extraction library: plain functions, usable without Prefect."""
