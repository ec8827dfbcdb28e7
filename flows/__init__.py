"""warclake's Prefect flows and command line: a thin layer over ``tasks``."""
