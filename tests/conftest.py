"""Test-run settings shared by the suite.

Under a mutation run (docs/testing.md) mutmut runs, for each mutant, the tests that call the mutated
function, stopping at the first failure; it sets ``MUTANT_UNDER_TEST`` to the mutant's name.  Those
tests are then ordered fastest first, by the durations mutmut recorded in ``mutmut-stats.json``, so
that a mutant a quick test catches is not first put through the slow ones.  Outside a mutation run
this file changes nothing.
"""
from __future__ import annotations

import json
import os
from pathlib import Path


def pytest_collection_modifyitems(config, items):
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    stats = Path("mutmut-stats.json")           # mutmut runs the tests from its mutants/ folder
    if not stats.is_file():
        return
    try:
        durations = json.loads(stats.read_text()).get("duration_by_test", {})
    except (OSError, ValueError):
        return
    items.sort(key=lambda item: durations.get(item.nodeid, float("inf")))
