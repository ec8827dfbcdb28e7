"""warclake: Common Crawl archives to an Uzushio-format parquet text lake.

``warclake.tasks`` is the extraction library (no Prefect), ``warclake.flows`` the Prefect
flows over it, ``warclake.cli`` the ``warclake`` command, ``warclake.deployments`` the
Prefect deployments; the SQL of the catalogue and reports ships in ``warclake/sql``.
"""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("warclake")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
