"""Test-run settings shared by the suite.

Under a mutation run (docs/testing.md) mutmut runs, for each mutant, the tests that call the mutated
function, stopping at the first failure; it sets ``MUTANT_UNDER_TEST`` to the mutant's name.  Those
tests are then ordered fastest first, by the durations mutmut recorded in ``mutmut-stats.json``, so
that a mutant a quick test catches is not first put through the slow ones, and each test gets a time
limit of 20 s plus ten times its recorded duration (SIGALRM): a mutant that makes a game run forever
(an action that never ends a turn) fails the test at the limit instead of holding a worker until
mutmut's own CPU limit, thirty times the estimated time of all the mutant's tests.

The mutated modules keep some results between calls (the observation encoder's per-table-size
packers and tables, the meld module's ``lru_cache`` tables).  mutmut forks each mutant's run from a
process that has run the tests, so such a cache would hand a mutant the unmutated function's
results, and its record of which tests call a function would name only the first test to fill it.
Under a mutation run these caches are emptied before every test.  Outside a mutation run this file
changes nothing.
"""
from __future__ import annotations

import json
import math
import os
import signal
from pathlib import Path

import pytest

_DURATIONS: dict = {}


def _under_mutant() -> bool:
    return "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", "")


def pytest_collection_modifyitems(config, items):
    if not _under_mutant():
        return
    stats = Path("mutmut-stats.json")           # mutmut runs the tests from its mutants/ folder
    if not stats.is_file():
        return
    try:
        durations = json.loads(stats.read_text()).get("duration_by_test", {})
    except (OSError, ValueError):
        return
    _DURATIONS.update(durations)
    items.sort(key=lambda item: durations.get(item.nodeid, float("inf")))


class MutantTimeout(BaseException):
    """A test ran past its time limit under a mutant (a BaseException, so that code which catches
    ``Exception`` does not swallow it)."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The time limit covers the test's set-up too (a module fixture that plays a game)."""
    if not _under_mutant():
        yield
        return
    limit = 20 + math.ceil(10 * _DURATIONS.get(item.nodeid, 6.0))

    def expire(signum, frame):
        raise MutantTimeout(f"{item.nodeid}: over {limit} s under {os.environ['MUTANT_UNDER_TEST']}")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def _empty_module_caches():
    if "MUTANT_UNDER_TEST" not in os.environ:
        yield
        return
    from handfoot_env import melds, observation
    for cache in (observation._CONTEXTS, observation._PHASE_TURN, observation._PACKERS):
        cache.clear()
    for value in vars(melds).values():
        clear = getattr(value, "cache_clear", None)
        if clear is not None:
            clear()
    yield


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright, one per test module (the browser tests' pages)."""
    from tests.test_viewer import CHROMIUM_FLAGS, _browser
    pw_api, exe = _browser()
    with pw_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()
