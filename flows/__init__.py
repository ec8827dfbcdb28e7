"""warclake's Prefect flows: a thin orchestration layer over ``warclake.tasks``."""
