"""Every result table in README.md and docs/ is traced to committed result files.

A result table (one whose cells hold a rate, an interval or a ratio: ``61.3%``, ``[54.3%, 67.7%]``,
``6.07x``) is announced by a comment on the line above it (blank lines allowed between)::

    <!-- results: docs/results/quickstart/experiment.json docs/results/quickstart/report.md -->

naming the committed files (globs allowed) whose numbers it shows; every number in its cells must
then be found in one of them at the precision shown (as is or as a percentage).  A table whose run
kept no file says so with ``<!-- unrecorded: why -->`` and a visible line that says "no committed
record".  Tables are found by file and by their comment, never by position, so a section moved
from README into docs/ keeps its check.
"""
from __future__ import annotations

import csv
import glob
import json
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULT_CELL = re.compile(r"\d%(?!\s*(CI|confidence|interval))|\[[-+]?[\d,.]+%?, [-+]?[\d,.]+%?\]|\b\d+(\.\d+)?x\b")
NOTE = re.compile(r"<!--\s*(results|unrecorded):\s*(.*?)\s*-->")
NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:[kM](?!\w))?")
#: pages written whole by a command, checked against the files that command wrote beside them
GENERATED = {"docs/leaderboard.md": ["docs/leaderboard.json"]}


def _documents() -> List[Path]:
    docs = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    return [p for p in docs if "results" not in p.relative_to(ROOT).parts[1:-1] and p.parent.name != "results"]


def tables(path: Path) -> Iterator[Tuple[int, List[str], str, str, str]]:
    """``(line, rows, note kind, note text, text above)`` of every table of a markdown file."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        note = NOTE.search(lines[j]) if j >= 0 else None
        above = "\n".join(lines[max(0, j - 6):j + 1])
        yield (start + 1, lines[start:i], note.group(1) if note else "", note.group(2) if note else "", above)


def _cells(rows: List[str]) -> List[str]:
    body = [r for k, r in enumerate(rows) if k != 1 or not re.fullmatch(r"[|:\- ]+", r)]
    return [c.strip() for r in body[1:] for c in r.strip().strip("|").split("|")]


def is_result_table(rows: List[str]) -> bool:
    return any(RESULT_CELL.search(re.sub(r"`[^`]*`", "", c)) for c in _cells(rows))


def _numbers_of(value, out: List[float]) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        out.append(float(value))
    elif isinstance(value, dict):
        for v in value.values():
            _numbers_of(v, out)
    elif isinstance(value, list):
        for v in value:
            _numbers_of(v, out)
    elif isinstance(value, str):
        for tok in NUMBER.findall(value):
            out.append(_shown(tok)[0])


_CACHE: Dict[Path, Set[float]] = {}


def source_numbers(path: Path) -> Set[float]:
    """Every number in a committed result file (JSON, JSON lines, CSV, markdown or text)."""
    if path not in _CACHE:
        out: List[float] = []
        text = path.read_text()
        if path.suffix == ".json":
            _numbers_of(json.loads(text), out)
        elif path.suffix == ".jsonl":
            for line in text.splitlines():
                if line.strip():
                    _numbers_of(json.loads(line), out)
        elif path.suffix == ".csv":
            for row in csv.reader(text.splitlines()):
                _numbers_of(row, out)
        else:
            _numbers_of(text, out)
        _CACHE[path] = set(out)
    return _CACHE[path]


def _shown(token: str) -> Tuple[float, int, float]:
    """A printed number's value, decimals and unit (``1.5M``: 1.5, 1, 1e6)."""
    unit = {"k": 1e3, "M": 1e6}.get(token[-1], 1.0)
    t = token.replace(",", "").rstrip("kM")
    return float(t) * unit, len(t.split(".")[1]) if "." in t else 0, unit


def found(token: str, numbers: Set[float]) -> bool:
    """``token`` (as printed: ``61.3``, ``+1,530``, ``6.07``, ``1.5M``) equals a source number, or a
    source number times 100, rounded to the decimals shown."""
    if token.endswith(" min"):                    # minutes shown, seconds recorded
        return found(token[:-4], {v / 60.0 for v in numbers})
    value, decimals, unit = _shown(token)
    tol = (0.5 * 10 ** -decimals + 1e-9) * unit
    return any(abs(v - value) <= tol or abs(100 * v - value) <= tol for v in numbers)


def table_numbers(rows: List[str]) -> List[str]:
    out = []
    for c in _cells(rows):
        c = re.sub(r"`[^`]*`|\([^)]*\bseed[^)]*\)|\[[^\]]*\]\([^)]*\)", "", c)   # code, links
        out += [m.group(0) + (" min" if c[m.end():].startswith(" min") else "") for m in NUMBER.finditer(c)]
    return out


DOCUMENTS = _documents()


def test_documents_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in DOCUMENTS}
    assert "README.md" in names and "docs/benchmarks.md" in names
    assert not any(n.startswith("docs/results/") for n in names)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_result_table_is_traced_to_committed_files(path):
    problems = []
    rel = path.relative_to(ROOT).as_posix()
    for line, rows, kind, note, above in tables(path):
        if rel in GENERATED:
            kind, note = "results", " ".join(GENERATED[rel])
        if not kind:
            if is_result_table(rows):
                problems.append(f"{rel}:{line}: a result table without a <!-- results: FILES --> comment above it")
            continue
        if kind == "unrecorded":
            if "no committed record" not in above.lower():
                problems.append(f"{rel}:{line}: an unrecorded table must say 'no committed record' above it")
            continue
        files = [Path(f) for pattern in note.split() for f in sorted(glob.glob(str(ROOT / pattern)))]
        if not files:
            problems.append(f"{rel}:{line}: no committed file matches {note!r}")
            continue
        numbers = set().union(*(source_numbers(f) for f in files))
        missing = [t for t in table_numbers(rows) if not found(t, numbers)]
        if missing:
            problems.append(f"{rel}:{line}: not in {note}: {', '.join(missing[:8])}")
    assert not problems, "\n".join(problems)


def test_the_checker_catches_a_changed_figure(tmp_path):
    src = tmp_path / "r.json"
    src.write_text(json.dumps({"win_rate": 0.6125, "ci": [0.5668, 0.658], "adp": 1530.2}))
    rows = ["| vs | win rate | 95% CI | ADP |", "|---|---:|---|---:|",
            "| strategic | 61.3% | [56.7%, 65.8%] | +1,530 |"]
    assert is_result_table(rows)
    nums = source_numbers(src)
    assert all(found(t, nums) for t in table_numbers(rows))
    assert not found("61.4", nums) and not found("1,531", nums) and found("61.25", nums)
    assert found("1.5M", {1502321.0}) and not found("2M", {1000321.0}) and found("500k", {500321.0})
    assert not is_result_table(["| command | what |", "|---|---|", "| `handfoot play` | its win rate (95% CI) |"])
