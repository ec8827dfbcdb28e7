"""Serve per-dump deployments (and one for the newest dump) from this box.

    ./dev python -m warclake.deployments.serve [--config deployments/dumps.toml] [--limit N] [--check]

Reads a TOML file (see deployments/dumps.toml), registers one deployment per ``[[dump]]``
of the ``extract-dump`` flow and, with a ``[newest]`` table, one of ``extract-newest-dump``,
each with its cron schedule and parameters, then runs their flow runs here until stopped
(Ctrl-C pauses these deployments). Needs a Prefect server: set PREFECT_API_URL.

Relative local paths in the file (inputs, lake, root, report_dir) are taken relative to the
directory the command is started from and stored absolute, so runs do not depend on it.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tomllib
from dataclasses import dataclass, field

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dumps.toml")

# Keys that shape the deployment itself; every other key must be a parameter of the flow.
DEPLOYMENT_KEYS = {"name", "cron", "timezone", "tags", "description", "paused", "dask"}
PATH_KEYS = {"lake", "root", "report_dir"}


@dataclass
class DeploymentSpec:
    flow_name: str  # "extract-dump" or "extract-newest-dump"
    name: str
    parameters: dict
    cron: str | None = None
    timezone: str | None = None
    tags: list[str] = field(default_factory=list)
    description: str | None = None
    paused: bool = False
    dask: str | None = None


def _flow_params(fn) -> set[str]:
    return set(inspect.signature(fn).parameters)


def _absolute(value: str, base: str) -> str:
    if "://" in value or os.path.isabs(value):
        return value
    return os.path.normpath(os.path.join(base, value))


def _paths_absolute(params: dict, base: str) -> dict:
    out = dict(params)
    for key in PATH_KEYS & out.keys():
        if isinstance(out[key], str):
            out[key] = _absolute(out[key], base)
    if "inputs" in out:
        out["inputs"] = [_absolute(p, base) for p in out["inputs"]]
    return out


def _spec(flow_name: str, flow_fn, table: dict, defaults: dict, default_name: str, base: str,
          where: str) -> DeploymentSpec:
    allowed = _flow_params(flow_fn)
    # shared defaults apply where the flow takes them (the newest-dump flow has no "dump")
    merged = {**{k: v for k, v in defaults.items() if k in allowed or k in DEPLOYMENT_KEYS}, **table}
    unknown = sorted(k for k in merged if k not in allowed and k not in DEPLOYMENT_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; flow parameters are {sorted(allowed)}")
    params = {k: v for k, v in merged.items() if k in allowed}
    if isinstance(params.get("inputs"), str):
        params["inputs"] = [params["inputs"]]
    sig = inspect.signature(flow_fn)
    missing = [n for n, p in sig.parameters.items() if p.default is inspect.Parameter.empty and n not in params]
    if missing:
        raise ValueError(f"{where}: missing {missing}")
    check_parameters(params, merged.get("dask"), where)
    tags = merged.get("tags", [])
    return DeploymentSpec(
        flow_name=flow_name, name=str(merged.get("name") or default_name),
        parameters=_paths_absolute(params, base), cron=merged.get("cron"), timezone=merged.get("timezone"),
        tags=["warclake", *([tags] if isinstance(tags, str) else tags)],
        description=merged.get("description"), paused=bool(merged.get("paused", False)),
        # a flow with its own "dask" parameter gets it as a parameter; otherwise the task runner is set here
        dask=merged.get("dask") if "dask" not in allowed else None)


def check_parameters(params: dict, dask: str | None, where: str) -> None:
    """The values a run would refuse, refused when the file is read: langs, boilerplate mode,
    counts, the corpus stage's options (a Dask address is checked by each run: the cluster may start after serve)."""
    from warclake.tasks.runtime.run_checks import check_counts, extract_config

    try:
        extract_config(params.get("langs"), boilerplate=params.get("boilerplate"))
        check_counts(params.get("workers"), params.get("max_in_flight"))
        if params.get("corpus_options"):
            from warclake.flows.corpus_flow import check_options

            check_options(params["corpus_options"])
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if dask is not None and not isinstance(dask, str):
        raise ValueError(f"{where}: dask {dask!r} is not a scheduler address")


def load_config(path: str, base: str | None = None) -> list[DeploymentSpec]:
    """The deployments a config file describes; errors name the offending table and key."""
    from warclake.deployments.newest import extract_newest_dump
    from warclake.flows.dump_flow import extract_dump

    base = base or os.getcwd()
    with open(path, "rb") as fh:
        cfg = tomllib.load(fh)
    unknown = sorted(set(cfg) - {"defaults", "dump", "newest"})
    if unknown:
        raise ValueError(f"{path}: unknown table(s) {unknown}; expected [defaults], [[dump]], [newest]")
    defaults = cfg.get("defaults", {})
    known = _flow_params(extract_dump.fn) | _flow_params(extract_newest_dump.fn) | DEPLOYMENT_KEYS
    unknown = sorted(set(defaults) - known)
    if unknown:
        raise ValueError(f"{path}: [defaults]: unknown key(s) {unknown}")
    specs = []
    for i, table in enumerate(cfg.get("dump", [])):
        where = f"{path}: [[dump]] #{i + 1}"
        if "dump" not in table:
            raise ValueError(f"{where}: needs a 'dump' name")
        specs.append(_spec("extract-dump", extract_dump.fn, table, defaults, table["dump"], base, where))
    if "newest" in cfg:
        specs.append(_spec("extract-newest-dump", extract_newest_dump.fn, cfg["newest"], defaults, "newest", base,
                           f"{path}: [newest]"))
    names = [(s.flow_name, s.name) for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{path}: duplicate deployment names {dupes}")
    return specs


def pause_without_root(specs: list[DeploymentSpec]) -> list[str]:
    """A newest-dump deployment whose local root folder does not exist would fail at every
    scheduled run: it is served paused instead, with a warning (returned) saying why."""
    warnings = []
    for spec in specs:
        root = spec.parameters.get("root")
        if spec.flow_name == "extract-newest-dump" and isinstance(root, str) and "://" not in root \
                and not os.path.isdir(root) and not spec.paused:
            spec.paused = True
            warnings.append(f"{spec.flow_name}/{spec.name}: its root folder {root} does not exist; "
                            "served paused (create the folder, then resume it in the UI or restart serve)")
    return warnings


def flow_and_options(spec: DeploymentSpec):
    """The flow object to serve and the keyword arguments of ``to_deployment``/``Runner.add_flow``."""
    from prefect.schedules import Cron
    from prefect.types.entrypoint import EntrypointType

    from warclake.deployments.newest import extract_newest_dump
    from warclake.flows.dump_flow import extract_dump

    flow_obj = extract_newest_dump if spec.flow_name == "extract-newest-dump" else extract_dump
    params = dict(spec.parameters)
    if spec.dask:
        from warclake.flows.dask_runner import on_cluster

        # Dask workers are processes already: extract inline in them unless told otherwise.
        flow_obj = flow_obj.with_options(task_runner=on_cluster(spec.dask))
        params.setdefault("workers", 0)
    schedules = [Cron(spec.cron, timezone=spec.timezone)] if spec.cron else None
    # A module entrypoint, not a file path: a flow module loaded from its file cannot be
    # re-imported by the spawned extraction processes.
    return flow_obj, dict(name=spec.name, schedules=schedules, parameters=params, tags=spec.tags,
                          description=spec.description, paused=spec.paused,
                          entrypoint_type=EntrypointType.MODULE_PATH)


def serve(specs: list[DeploymentSpec], limit: int | None) -> None:
    """Register the deployments and run their flow runs here until Ctrl-C.

    As ``prefect.serve`` does, each run starts in a fresh ``python -m prefect.engine`` that
    imports the flow from its module, like a worker would. A deployment with a Dask address
    is registered with its flow object instead (``Runner.add_flow``), since the task runner
    set on that object is not part of the entrypoint; the runner then starts its runs in a
    child process from that object.
    """
    import asyncio

    from prefect.runner import Runner

    runner = Runner(name="warclake-serve", limit=limit, pause_on_shutdown=True)
    for spec in specs:
        flow_obj, options = flow_and_options(spec)
        if spec.dask:
            runner.add_flow(flow_obj, **options)
        else:
            runner.add_deployment(flow_obj.to_deployment(**options))
        when = f"cron {spec.cron!r}" if spec.cron else "no schedule"
        print(f"serving {spec.flow_name}/{spec.name} ({when}{', paused' if spec.paused else ''})", flush=True)
    print("start a run: prefect deployment run 'FLOW/NAME'; stop with Ctrl-C (pauses these deployments)",
          flush=True)
    try:
        asyncio.run(runner.start())
    except KeyboardInterrupt:
        pass  # the runner paused the deployments on its way out


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    ap = argparse.ArgumentParser(prog="python -m warclake.deployments.serve", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=DEFAULT_CONFIG, help="TOML file of dumps (default: deployments/dumps.toml)")
    ap.add_argument("--limit", type=int, default=1,
                    help="flow runs at once on this box (default 1: each run already uses all cores)")
    ap.add_argument("--check", action="store_true", help="print the deployments as JSON and exit, without serving")
    args = ap.parse_args(argv)
    try:
        specs = load_config(args.config)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        print(f"warclake.deployments.serve: error: {exc}", file=sys.stderr)
        return 2
    if not specs:
        print(f"warclake.deployments.serve: error: {args.config} defines no deployment", file=sys.stderr)
        return 2
    for warning in pause_without_root(specs):
        print(f"warclake.deployments.serve: warning: {warning}", file=sys.stderr)
    if args.check:
        json.dump([vars(s) for s in specs], sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0

    serve(specs, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
