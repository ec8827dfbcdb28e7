"""Prefect deployments of warclake's flows: ``serve`` on one machine, ``prefect.yaml`` for a work pool."""
