"""Ray: starting or joining a cluster, and running evaluation tasks on it.

Imported only where Ray is used (``backend: rllib``, ``--ray-address``); :func:`have_ray` tells
whether it is installed without importing it.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence

from agents.files import TRUST_ENV, pickle_trusted


def have_ray() -> bool:
    try:
        import ray  # noqa: F401
        import ray.rllib  # noqa: F401
    except ImportError:
        return False
    return True


def require_ray() -> None:
    if not have_ray():
        raise ImportError("the RLlib backend needs Ray: pip install -e '.[ray]' (ray[rllib]==2.60.0)")


def resolve_address(address: Optional[str] = None) -> Optional[str]:
    """The cluster to join: ``address``, else ``RAY_ADDRESS``; ``None`` or ``local``: a private local Ray."""
    addr = address if address not in (None, "") else os.environ.get("RAY_ADDRESS") or None
    if addr is not None and str(addr).strip().lower() == "local":
        return None
    return addr


def init_ray(address: Optional[str] = None, num_cpus: Optional[int] = None, quiet: bool = False,
             ship_code: bool = False) -> bool:
    """Start or join Ray; ``True`` when this call started it (the caller then shuts it down).

    An address (argument, else ``RAY_ADDRESS``) joins that cluster and never
    passes ``num_cpus`` (the cluster's nodes declare their own resources);
    otherwise a private local instance is started with
    ``ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=False)``.
    ``ship_code`` sends this checkout to the workers as the job's ``working_dir``
    (for clusters whose nodes do not have handfoot installed).
    """
    require_ray()
    import ray
    if ray.is_initialized():
        return False
    addr = resolve_address(address)
    env_vars = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if pickle_trusted():                  # the user's trust switch reaches the workers that load agents
        env_vars[TRUST_ENV] = "1"
    runtime_env: Dict[str, Any] = {"env_vars": env_vars}
    if ship_code:
        from pathlib import Path
        root = Path(__file__).resolve().parent.parent
        runtime_env.update(working_dir=str(root), excludes=[".venv", "runs", ".git", "notebooks", "*.egg-info",
                                                            "__pycache__", ".pytest_cache", ".ruff_cache"])
    kw: Dict[str, Any] = dict(runtime_env=runtime_env, log_to_driver=not quiet,
                              logging_level="ERROR" if quiet else "WARNING")
    if quiet:
        import logging
        for name in ("ray", "ray.rllib", "ray.tune"):
            logging.getLogger(name).setLevel(logging.ERROR)
    if addr is None:
        ray.init(address="local", num_cpus=int(num_cpus or os.cpu_count() or 1), include_dashboard=False, **kw)
        return True
    try:
        ray.init(address=addr, **kw)
    except ConnectionError as e:
        if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
            raise ConnectionError(
                f"{e}. Ray 2.60 clusters use token authentication by default: set RAY_AUTH_MODE=token and make "
                "the cluster's token available (~/.ray/auth_token, RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN); "
                "see docs/scaling_out.md") from e
        raise
    return True


def shutdown_ray() -> None:
    import ray
    if ray.is_initialized():
        ray.shutdown()


def ray_task_runner(address: Optional[str] = None, workers: int = 0, progress: bool = False):
    """``(task_runner, workers)`` for ``experiments.evaluation.harness.run_evaluation(cfg, task_runner=...)``.

    Starts or joins Ray now (``address``, else ``RAY_ADDRESS``, else a private
    local Ray).  ``workers`` is the parallelism the harness should chunk the deals
    for: ``workers`` if it is above 1, else the cluster's CPU count.  The runner
    runs every chunk as a Ray task (:func:`run_tasks_on_ray`) and shuts down a
    Ray that was started here once the chunks are back.
    """
    started = init_ray(address, quiet=True)
    import ray
    n = int(workers) if workers and workers > 1 else max(1, int(ray.cluster_resources().get("CPU", 1)))

    def runner(fn: Callable[[Any], Any], tasks: Sequence[Any]) -> List[Any]:
        bar = None
        if progress:
            import sys

            from tqdm import tqdm
            bar = tqdm(total=len(tasks), unit="chunk", desc=f"evaluate (Ray, {n} CPUs)", file=sys.stderr,
                       dynamic_ncols=True)
        try:
            return run_tasks_on_ray(fn, tasks, address, progress=(lambda i, r: bar.update(1)) if bar else None)
        finally:
            if bar is not None:
                bar.close()
            if started:
                shutdown_ray()

    return runner, n


def run_tasks_on_ray(fn: Callable[[Any], Any], tasks: Sequence[Any], address: Optional[str] = None,
                     progress: Optional[Callable[[int, Any], None]] = None) -> List[Any]:
    """``[fn(t) for t in tasks]`` with every call a Ray task (1 CPU); results in task order.

    ``fn`` must be importable by name on the workers (e.g. ``experiments.evaluation._play_chunk``).
    ``progress(i, result)`` is called as tasks finish (in completion order).
    Ray is started (``address`` / ``RAY_ADDRESS`` / local) if it is not running; a
    Ray started here is shut down at the end.
    """
    started = init_ray(address, quiet=True)
    import ray
    try:
        remote = ray.remote(num_cpus=1, max_retries=2)(fn)
        refs = [remote.remote(t) for t in tasks]
        index = {r.hex(): i for i, r in enumerate(refs)}
        results: List[Any] = [None] * len(refs)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = index[ref.hex()]
                results[i] = ray.get(ref)
                if progress is not None:
                    progress(i, results[i])
        return results
    finally:
        if started:
            shutdown_ray()
