"""Ship a trained checkpoint as one of the package's champions (``champion_v1``, ``champion_v2``; the spec
``champion`` names the newest), with its provenance.

    python scripts/ship_champion.py runs/champion-go-s7 --name champion_v1 --checkpoint final
    python scripts/ship_champion.py runs/league-s11 --name champion_v2 --checkpoint checkpoints/step_015304160

Copies the checkpoint's ``actor.npz`` (arrays only, checked as an actor) to
``agents/weights/NAME.npz`` and the run's record to ``docs/results/NAME/``: the resolved
training config, the experiment config, ``run.json`` (seeds, versions, git commit, command),
``metrics.jsonl`` (thinned: :func:`experiments.runs.thin_metrics`), ``learning_curve.png``, the
experiment's ``report.md``, ``experiment.json`` and
the results and plots of its evaluation (``experiment_eval/``) when there are any, and
``champion.json`` (source checkpoint, step, SHA-256 of the weights).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.policy import ACTOR_FILE, is_q, load_actor  # noqa: E402
from agents.registry import CHAMPIONS, SHIPPED  # noqa: E402
from experiments.runs import thin_metrics  # noqa: E402

RECORD = ("config.yaml", "experiment.yaml", "run.json", "metrics.jsonl", "learning_curve.png", "report.md",
          "experiment.json")
EVAL_DIR = "experiment_eval"
EVAL_FILES = ("results.json", "results.csv", "winrate.png", "matrix.png", "ratings.png")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="the training run folder")
    ap.add_argument("--checkpoint", default="best", help="checkpoint folder inside the run (default: best)")
    ap.add_argument("--name", required=True, choices=CHAMPIONS, help="shipped agent name")
    ap.add_argument("--docs", help="where the record goes (default: docs/results/NAME)")
    ap.add_argument("--weights", help="where the weights go (default: the package's agents/weights/NAME.npz)")
    a = ap.parse_args(argv)
    run = Path(a.run)
    ck = run / a.checkpoint
    src = ck / ACTOR_FILE
    try:
        weights = load_actor(src)
    except (OSError, ValueError) as e:
        print(f"ship_champion: error: {e}", file=sys.stderr)
        return 2
    try:
        trainer = json.loads((ck / "trainer.json").read_text()) if (ck / "trainer.json").exists() else {}
        if not isinstance(trainer, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        print(f"ship_champion: error: {ck / 'trainer.json'}: not a readable checkpoint record ({e})", file=sys.stderr)
        return 2
    dest = Path(a.weights) if a.weights else ROOT / "agents" / SHIPPED[a.name]
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    docs = Path(a.docs) if a.docs else ROOT / "docs" / "results" / a.name
    docs.mkdir(parents=True, exist_ok=True)
    for name in RECORD + ("champion.json",):     # the record of the agent shipped before goes with it
        (docs / name).unlink(missing_ok=True)
    if (docs / EVAL_DIR).is_dir():
        shutil.rmtree(docs / EVAL_DIR)
    for name in RECORD:
        if name == "metrics.jsonl" and (run / name).is_file():
            thin_metrics(run / name, docs / name)       # every evaluation, the first and every 20th update
        elif (run / name).exists():
            shutil.copyfile(run / name, docs / name)
    for model_dir in sorted((run / EVAL_DIR).glob("*")):
        for name in EVAL_FILES:
            if (model_dir / name).is_file():
                (docs / EVAL_DIR / model_dir.name).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(model_dir / name, docs / EVAL_DIR / model_dir.name / name)
    where = dest.resolve()
    info = {"agent": a.name, "weights": str(where.relative_to(ROOT) if where.is_relative_to(ROOT) else where),
            "source": str(ck),
            "timesteps": trainer.get("num_timesteps"), "backend": trainer.get("backend"),
            "network": "action-value (Q)" if is_q(weights) else "policy",
            "sha256": hashlib.sha256(dest.read_bytes()).hexdigest()}
    (docs / "champion.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"{a.name}: {dest} ({dest.stat().st_size / 1e6:.1f} MB) from {ck}; record in {docs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
