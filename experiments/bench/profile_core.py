"""The compiled core's kernels timed one by one, in and out of the CPU's cache.

    python -m experiments.bench.profile_core                    # pagat, 256 games, 600 steps of random play
    python -m experiments.bench.profile_core --rules bicycle --hot 16

Random legal play fills a ``CoreBatch``; every 20th step its rows are kept, giving a few thousand
mid-game states.  Each kernel then runs over all of them, once row after row (``cold``: each row
is fetched from memory, as in a batch step over many games) and once over the first ``--hot`` rows
again and again (``hot``: the rows stay in the cache).  Process CPU time, best of five, in
microseconds per state.  ``legal`` is ``legal_into``, ``observe`` ``observe_into`` (the acting
seat, pile test skipped), ``acting`` both with the mask (what a batch step writes), ``apply``
the legal list and one legal action.

``--batches 16,256`` then times ``CoreBatch.step`` itself at each batch size: random legal play for
``--seconds`` of process CPU time, the actions chosen (and finished games dealt again) outside the
timed call; microseconds per action played.  A batch of 16 games holds 0.56 MB of rows (they stay
in the core's 1 MB L2 cache), one of 256 games 9 MB.

``--perf-map SECONDS`` is for Linux ``perf``, which sees compiled kernels only as addresses: the
kernels are compiled afresh (into a temporary cache: code loaded from a cache carries no names),
``/tmp/perf-<pid>.map`` names each one, and random play over ``--games`` games runs for SECONDS
of wall time while ``perf record -p <pid>`` (in another shell) samples it; ``perf report --sort
sym`` then shows the time per kernel, Numba's reference counting (``NRT_incref``) among them.
"""
from __future__ import annotations

import argparse
import time
from typing import List, Optional

import numpy as np

from experiments.config import seed_arg


def _pick(b, rng):
    """A uniformly random legal action for every game of ``b`` (-2: a finished game, left alone)."""
    acts, _ = b.random_actions(rng)
    return acts, acts == -2


def _redeal(b, over, nxt: int) -> int:
    """Deal the finished games again from the next seeds; returns the next unused seed."""
    if over.any():
        idx = np.flatnonzero(over)
        b.reset(list(range(nxt, nxt + len(idx))), games=idx)
        nxt += len(idx)
    return nxt


def _states(rules: str, games: int, steps: int, seed: int):
    from handfoot_env.compiled import load
    b = load().CoreBatch(rules, games)
    b.reset(list(range(seed * 100_003, seed * 100_003 + games)))
    rng = np.random.default_rng(seed)
    rows, nxt = [], seed * 100_003 + games
    for t in range(steps):
        acts, over = _pick(b, rng)
        b.step(acts)
        nxt = _redeal(b, over, nxt)
        if t % 20 == 0:
            rows.append(b.S.copy())
    return b, np.concatenate(rows)


def _kernels():
    import numba
    from handfoot_env.compiled import encode as E, play as P, rules as RU
    from handfoot_env.compiled.layout import CURRENT

    @numba.njit
    def legal(idx, S, R, obs, mask, buf, ro, wo):
        c = 0
        for g in idx:
            c += RU.legal_into(S[g], R, buf, ro, wo)
        return c

    @numba.njit
    def observe(idx, S, R, obs, mask, buf, ro, wo):
        c = 0
        for g in idx:
            c += E.observe_into(S[g], R, S[g][CURRENT], obs, True, False, ro, wo)
        return c

    @numba.njit
    def acting(idx, S, R, obs, mask, buf, ro, wo):
        c = 0
        for g in idx:
            c += E.observe_acting(S[g], R, obs, mask, buf, ro, wo)
        return c

    @numba.njit
    def apply(idx, S, R, obs, mask, buf, ro, wo):
        c = 0
        for g in idx:
            n = RU.legal_into(S[g], R, buf, ro, wo)
            if n > 0:
                P.apply_legal(S[g], R, buf[g % n], ro, wo)
                c += 1
        return c

    return {"legal": legal, "observe": observe, "acting": acting, "apply": apply}


def _perf_map(rules: str, games: int, seconds: float, seed: int) -> int:
    """Compile afresh, write ``/tmp/perf-<pid>.map``, then play for ``seconds`` (see the docstring)."""
    import os
    import re
    import tempfile
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="handfoot-perf-")
    import numba
    from handfoot_env.compiled import encode, load, play, rng, rules as rules_mod, searches
    b = load().CoreBatch(rules, games)
    b.reset(list(range(seed * 100_003, seed * 100_003 + games)))
    gen = np.random.default_rng(seed)
    nxt = seed * 100_003 + games
    for _ in range(200):                         # compiles every kernel a batch step reaches
        acts, over = _pick(b, gen)
        b.step(acts)
        nxt = _redeal(b, over, nxt)
    names = {}
    for mod in (rng, searches, rules_mod, play, encode):
        for obj in vars(mod).values():
            if isinstance(obj, numba.core.registry.CPUDispatcher):
                for cres in obj.overloads.values():
                    lib = cres.library
                    for name in re.findall(r'^define [^@]*@"?([^"(]+)"?\(', lib.get_llvm_str(), re.M):
                        addr = lib.get_pointer_to_function(name)
                        if addr:
                            names[addr] = name
    addrs = sorted(names)
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as fh:
        for a, nx in zip(addrs, addrs[1:] + [addrs[-1] + 4096]):
            fh.write(f"{a:x} {min(nx - a, 1 << 16):x} {names[a]}\n")
    print(f"{len(addrs)} compiled functions named in {path}; playing for {seconds:g} s: "
          f"perf record -p {os.getpid()}", flush=True)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        acts, over = _pick(b, gen)
        b.step(acts)
        nxt = _redeal(b, over, nxt)
    return 0


def _step_cost(rules: str, games: int, seconds: float, seed: int) -> float:
    """Microseconds of ``CoreBatch.step`` per action played, over random legal play."""
    from handfoot_env.compiled import load
    b = load().CoreBatch(rules, games)
    b.reset(list(range(seed * 100_003, seed * 100_003 + games)))
    b.step(np.full(games, -1, dtype=np.int64))
    rng = np.random.default_rng(seed)
    nxt = seed * 100_003 + games
    spent, played = 0.0, 0
    while spent < seconds:
        acts, over = _pick(b, rng)
        t0 = time.process_time()
        b.step(acts)
        spent += time.process_time() - t0
        played += games - int(over.sum())
        nxt = _redeal(b, over, nxt)
    return spent / played * 1e6


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.profile_core", description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="pagat", help="rules preset (default pagat)")
    p.add_argument("--games", type=int, default=256, help="games of the batch that makes the states (default 256)")
    p.add_argument("--steps", type=int, default=600, help="batch steps of random play (default 600)")
    p.add_argument("--hot", type=int, default=16, help="rows of the in-cache pass (default 16)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed (default 0)")
    p.add_argument("--batches", default="", help="batch sizes whose CoreBatch.step is timed, e.g. 16,256")
    p.add_argument("--seconds", type=float, default=5.0, help="CPU seconds per batch size (default 5)")
    p.add_argument("--perf-map", type=float, default=0.0, metavar="SECONDS",
                   help="name the compiled kernels for Linux perf and play for SECONDS (see the module docstring)")
    args = p.parse_args(argv)
    if args.perf_map < 0:
        p.error(f"--perf-map: seconds must be positive, got {args.perf_map}")
    if args.perf_map:
        return _perf_map(args.rules, args.games, args.perf_map, args.seed)
    try:
        sizes = [int(x) for x in args.batches.split(",") if x.strip()]
    except ValueError:
        p.error(f"--batches: comma-separated batch sizes, got {args.batches!r}")
    if any(x < 1 for x in sizes):
        p.error(f"--batches: sizes must be at least 1, got {args.batches!r}")
    b, S = _states(args.rules, args.games, args.steps, args.seed)
    n = len(S)
    obs, mask = np.zeros(b.obs.shape[1], np.float32), np.zeros(b.mask.shape[1], np.int8)
    buf = np.zeros(b.mask.shape[1], np.int64)
    cold = np.arange(n)
    hot = np.tile(np.arange(min(args.hot, n)), max(1, n // max(1, args.hot)))
    print(f"{n} mid-game states of {args.rules}; us per state, best of 5 (process CPU time)")
    print(f"{'kernel':8s} {'cold':>8s} {'hot':>8s}")
    for name, fn in _kernels().items():
        out = []
        for idx in (cold, hot):
            best = float("inf")
            for _ in range(5):
                S2 = S.copy() if name == "apply" else S
                fn(idx[:2], S2, b.R, obs, mask, buf, b.ro, b.wo)
                t0 = time.process_time()
                fn(idx, S2, b.R, obs, mask, buf, b.ro, b.wo)
                best = min(best, time.process_time() - t0)
            out.append(best / len(idx) * 1e6)
        print(f"{name:8s} {out[0]:8.3f} {out[1]:8.3f}")
    for games in sizes:
        us = _step_cost(args.rules, games, args.seconds, args.seed)
        print(f"CoreBatch.step x{games}: {us:.3f} us per action ({1 / us:.2f} million actions/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
