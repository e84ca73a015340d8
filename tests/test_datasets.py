"""Minari datasets (``handfoot dataset``) and behaviour cloning (``backend: bc``): a dataset's round trip
through Minari's own API, replay exactness on both cores, the refused inputs, and BC on a tiny dataset."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import torch

minari = pytest.importorskip("minari", reason="the data extra (bash scripts/setup.sh data)")

from experiments.datasets.cli import dataset_main  # noqa: E402
from experiments.datasets.episodes import seat_kwargs  # noqa: E402
from experiments.datasets.minari_store import decisions, handfoot_metadata  # noqa: E402
from handfoot_env.record import ACTION_INDEX, load_record, positions  # noqa: E402
from handfoot_env.observation import encode_observation, mask_of  # noqa: E402

#: the small dataset kept in the repository (3 games of strategic and greedy, seat 0):
#: MINARI_DATASETS_PATH=tests/datasets handfoot dataset collect --agents strategic greedy --games 3 --seed 7
#:     --seats 0 --id handfoot/tiny-v0
REPO_DATASETS = Path(__file__).parent / "datasets"
TINY = "handfoot/tiny-v0"


@pytest.fixture()
def root(tmp_path, monkeypatch):
    """An empty MINARI_DATASETS_PATH for the test."""
    path = tmp_path / "datasets"
    path.mkdir()
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(path))
    return path


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """Two games of strategic (team 0) against greedy, seats 0 and 1 recorded, with two workers."""
    path = tmp_path_factory.mktemp("minari")
    mp = pytest.MonkeyPatch()
    mp.setenv("MINARI_DATASETS_PATH", str(path))
    assert dataset_main(["collect", "--agents", "strategic", "greedy", "--games", "2", "--seed", "11", "--seats",
                         "0", "1", "--id", "handfoot/pair-v0", "--workers", "2", "--no-progress"]) == 0
    yield minari.load_dataset("handfoot/pair-v0"), path
    mp.undo()


def _episodes(ds):
    return list(zip(ds.iterate_episodes(), ds.storage.get_episode_metadata(range(ds.total_episodes))))


def test_a_collected_dataset_reads_back_through_minari(collected):
    ds, _ = collected
    meta = handfoot_metadata(ds)
    assert ds.total_episodes == 4 and meta["agents"] == ["strategic", "greedy", "strategic", "greedy"]
    assert meta["seats"] == [0, 1] and meta["seed"] == 11 and meta["source"] == "collect"
    assert ds.total_steps == meta["decisions"] == sum(len(ep.actions) for ep in ds.iterate_episodes())
    assert ds.observation_space.shape == (170,) and ds.action_space.n == 705
    env = ds.recover_environment()
    assert type(env.unwrapped).__name__ == "SingleSeatEnv"
    for ep, em in _episodes(ds):
        n = len(ep.actions)
        assert set(ep.infos) == {"action_mask", "seat", "round", "game"}
        assert all(len(v) == n + 1 for v in ep.infos.values()) and len(ep.observations) == n + 1
        assert (ep.infos["seat"] == em["seat"]).all() and (ep.infos["game"] == em["game"]).all()
        mask = ep.infos["action_mask"]
        assert mask.dtype == np.int8 and not mask[-1].any()          # the terminal observation: nothing legal
        assert mask[np.arange(n), ep.actions].all()                   # every recorded action is legal
        assert ep.terminations[-1] and not ep.terminations[:-1].any() and not ep.truncations.any()
        assert em["decisions"] == n and em["winner"] in (0, 1)
    # the two seats of one game are the same deal
    seeds = [(int(em["game"]), int(em["seed"])) for _, em in _episodes(ds)]
    assert seeds[0][1] == seeds[1][1] != seeds[2][1]


@pytest.mark.parametrize("core", ["reference", "compiled"])
def test_a_collected_episode_replays_exactly_in_the_recovered_env(collected, core):
    ds, _ = collected
    meta = handfoot_metadata(ds)
    for ep, em in _episodes(ds)[:3]:
        env = ds.recover_environment(core=core, **seat_kwargs(int(em["seat"]), json.loads(em["seats"]),
                                                              meta["rules"]))
        obs, info = env.reset(seed=int(em["seed"]))
        assert np.array_equal(obs, ep.observations[0]) and np.array_equal(info["action_mask"],
                                                                            ep.infos["action_mask"][0])
        for t, a in enumerate(ep.actions):
            obs, r, te, tr, info = env.step(int(a))
            assert np.array_equal(obs, ep.observations[t + 1]), (core, ep.id, t)
            assert np.array_equal(info["action_mask"], ep.infos["action_mask"][t + 1])
            assert (r, te, tr) == (ep.rewards[t], ep.terminations[t], ep.truncations[t])
        assert list(info["scores"]) == list(em["scores"])


def test_the_same_command_gives_the_same_dataset(collected, root):
    ds, _ = collected
    assert dataset_main(["collect", "--agents", "strategic", "greedy", "--games", "2", "--seed", "11", "--seats",
                         "0", "1", "--id", "handfoot/again-v0", "--core", "reference", "--no-progress"]) == 0
    again = minari.load_dataset("handfoot/again-v0")
    for (a, ma), (b, mb) in zip(_episodes(ds), _episodes(again)):
        for name in ("observations", "actions", "rewards", "terminations", "truncations"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
        assert all(np.array_equal(a.infos[k], b.infos[k]) for k in a.infos)
        assert {k: str(v) for k, v in ma.items()} == {k: str(v) for k, v in mb.items()}
    drop = ("command", "core", "env_kwargs")
    assert ({k: v for k, v in handfoot_metadata(ds).items() if k not in drop}
            == {k: v for k, v in handfoot_metadata(again).items() if k not in drop})


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    from experiments.evaluation.cli import evaluate_main
    out = tmp_path_factory.mktemp("eval") / "run"
    assert evaluate_main(["--agents", "greedy", "random", "--deals", "1", "--seed", "3", "--records", "--out",
                          str(out), "--workers", "1", "--no-progress"]) == 0
    return out


def test_from_records_replays_each_seat_as_the_rules_engine_saw_it(evaluated, root):
    assert dataset_main(["from-records", str(evaluated), "--id", "handfoot/eval-v0"]) == 0
    ds = minari.load_dataset("handfoot/eval-v0")
    meta = handfoot_metadata(ds)
    files = sorted((evaluated / "records").glob("*.json"))
    assert meta["games"] == 2 and ds.total_episodes == 8
    assert meta["seats_by_game"][0]["seats"] == ["greedy", "random", "greedy", "random"]
    eps = _episodes(ds)
    for g, f in enumerate(files):
        rec = load_record(f)
        pos = positions(rec)
        for seat in range(4):
            ep, em = eps[4 * g + seat]
            assert (int(em["game"]), int(em["seat"])) == (g, seat)
            mine = [(k, ACTION_INDEX[name]) for k, (p, name) in enumerate(rec["actions"]) if p == seat]
            assert list(ep.actions) == [a for _, a in mine]
            for t, (k, _) in enumerate(mine):          # the rules engine before the seat's t-th action
                game = pos[k].game
                legal = game.legal_actions()
                assert np.array_equal(ep.observations[t], encode_observation(game, seat, legal)), (g, seat, t)
                assert np.array_equal(ep.infos["action_mask"][t], mask_of(legal))


def _table_db(path: Path, record_file: Path, offered: bool = True, finished: bool = True, cut: int = 0) -> None:
    from experiments.apps.web.store import Store, TableRow
    rec = load_record(record_file)
    store = Store(path)
    store.add_table(TableRow(id="t1", created=time.time(), rules="pagat", seats=["human", "greedy", "human", "random"],
                             seed=int(rec["seed"]), pace_ms=0, token_digests=["x", None, "y", None],
                             finished=finished, offered=offered))
    for i, (p, name) in enumerate(rec["actions"][:len(rec["actions"]) - cut]):
        store.add_action("t1", i, p, name, stand_in=(i == 5))
    store.close()


def test_from_records_reads_the_tables_database_and_marks_persons(evaluated, root, tmp_path):
    db = tmp_path / "tables.sqlite"
    _table_db(db, sorted((evaluated / "records").glob("*.json"))[0])
    assert dataset_main(["from-records", str(db), "--id", "handfoot/table-v0"]) == 0
    ds = minari.load_dataset("handfoot/table-v0")
    seats = handfoot_metadata(ds)["seats_by_game"][0]
    assert seats["seats"] == ["person", "greedy", "person", "random"] and ds.total_episodes == 4
    assert sum(seats["stand_in_actions"].values()) == 1


def test_a_table_not_offered_for_datasets_is_left_out(evaluated, root, tmp_path, capsys):
    db = tmp_path / "tables.sqlite"
    _table_db(db, sorted((evaluated / "records").glob("*.json"))[0], offered=False)
    assert dataset_main(["from-records", str(db), "--id", "handfoot/none-v0"]) == 2
    assert "no finished game offered for datasets (0 in play, 1 not offered)" in capsys.readouterr().err
    assert not (root / "handfoot" / "none-v0").exists()


def _refused(args, capsys, root, words):
    assert dataset_main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err, err
    assert not any(p.name.startswith("bad") for p in (root / "handfoot").glob("*")) if (root / "handfoot").exists() \
        else True


def test_refused_inputs_are_one_line_and_write_nothing(evaluated, root, tmp_path, capsys):
    files = sorted((evaluated / "records").glob("*.json"))
    tampered = tmp_path / "tampered"
    shutil.copytree(evaluated / "records", tampered)
    rec = json.loads((tampered / files[0].name).read_text())
    rec["scores"][0] += 5
    (tampered / files[0].name).write_text(json.dumps(rec))
    _refused(["from-records", str(tampered), "--id", "handfoot/bad1-v0"], capsys, root, "fails handfoot replay --check")
    unfinished = tmp_path / "unfinished.json"
    rec = load_record(files[1])
    rec["actions"] = rec["actions"][:100]
    rec["round_scores"], rec["scores"], rec["game_over"], rec["winner"] = [], [0, 0], False, None
    unfinished.write_text(json.dumps(rec))
    _refused(["from-records", str(unfinished), "--id", "handfoot/bad2-v0"], capsys, root, "not finished")
    db = tmp_path / "unfinished.sqlite"
    _table_db(db, files[0], cut=50)
    _refused(["from-records", str(db), "--id", "handfoot/bad3-v0"], capsys, root, "not finished")
    other = tmp_path / "other.sqlite"
    import sqlite3
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE tables (id TEXT)")
    _refused(["from-records", str(other), "--id", "handfoot/bad4-v0"], capsys, root,
             "not the browser table's database")
    (tmp_path / "notes.txt").write_text("hello")
    _refused(["from-records", str(tmp_path / "notes.txt"), "--id", "handfoot/bad5-v0"], capsys, root,
             "neither a game record")
    _refused(["collect", "--agents", "nosuchagent", "--games", "1", "--seed", "0", "--id", "handfoot/bad6-v0"],
             capsys, root, "--agents nosuchagent")
    _refused(["collect", "--agents", "random", "--games", "1", "--seed", "0", "--seats", "7", "--id",
              "handfoot/bad7-v0"], capsys, root, "--seats")
    for bad in ("no version", "handfoot/strategic", "handfoot/strategic-q0"):
        _refused(["collect", "--agents", "random", "--games", "1", "--seed", "0", "--id", bad], capsys, root,
                 "not a Minari dataset id")
    assert dataset_main(["collect", "--agents", "random", "--games", "1", "--seed", "0", "--seats", "0", "--id",
                         "handfoot/once-v0", "--no-progress"]) == 0
    capsys.readouterr()
    _refused(["collect", "--agents", "random", "--games", "1", "--seed", "0", "--id", "handfoot/once-v0"], capsys, root,
             "exists already")
    assert sorted(p.name for p in (root / "handfoot").iterdir() if p.is_dir()) == ["once-v0"]


# --------------------------------------------------------------------------- the repository's dataset and BC
@pytest.fixture()
def tiny(monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(REPO_DATASETS.resolve()))
    return minari.load_dataset(TINY)


@pytest.mark.parametrize("core", ["reference", "compiled"])
def test_the_repository_dataset_still_replays(tiny, core):
    meta = handfoot_metadata(tiny)
    ep, em = _episodes(tiny)[0]
    env = tiny.recover_environment(core=core, **seat_kwargs(int(em["seat"]), json.loads(em["seats"]), meta["rules"]))
    obs, info = env.reset(seed=int(em["seed"]))
    for t, a in enumerate(ep.actions):
        assert np.array_equal(obs, ep.observations[t]) and np.array_equal(info["action_mask"],
                                                                            ep.infos["action_mask"][t])
        obs, r, te, tr, info = env.step(int(a))
        assert r == ep.rewards[t]
    assert te and tiny.total_episodes == 3


def _bc_config(tmp_path, **bc):
    from experiments.training.config import TrainConfig, load_train_config
    cfg = load_train_config("configs/train/bc.yaml")
    cfg.bc.dataset = TINY
    for k, v in bc.items():
        setattr(cfg.bc, k, v)
    cfg.run_dir, cfg.progress, cfg.checkpoint_every = str(tmp_path), False, 0
    cfg.evaluation.every_timesteps, cfg.evaluation.final_deals = 0, 0
    cfg.network.pi = [256]
    assert isinstance(cfg, TrainConfig)
    return cfg.validate()


def test_bc_learns_a_tiny_dataset_to_near_perfect_agreement(tiny, tmp_path):
    """773 decisions of one seat, 25 passes: a few seconds on an idle core."""
    from experiments.training.bc import BCLearner
    from experiments.training.learner import RunContext
    cfg = _bc_config(tmp_path, holdout=0.0, iteration=773, batch_size=64, learning_rate=3e-3)
    learner = BCLearner(cfg)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                        # as the trainer runs it (torch_threads: 1)
    try:
        learner.setup(RunContext(seed=0), None)
        t0 = time.perf_counter()
        first = learner.agreement(learner.train_rows)["heldout_agreement"]   # (no game held out: its own decisions)
        for _ in range(25):
            learner.iterate(773, None)
        several = learner.agreement(learner.train_rows)["heldout_agreement"]
        took = time.perf_counter() - t0
    finally:
        torch.set_num_threads(threads)
    assert first < 0.5 and several >= 0.98, (first, several, took)


def test_a_bc_run_is_a_training_run_and_plays_as_a_policy(tiny, tmp_path):
    from agents.registry import make_agent
    from experiments.training.trainer import train
    cfg = _bc_config(tmp_path, holdout=0.34, iteration=500, batch_size=64)
    cfg.total_timesteps = 1000
    result = train(cfg, quiet=True)
    run = Path(result["run"])
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    updates = [r for r in rows if r["kind"] == "update"]
    assert len(updates) == 2 and all(0.0 <= r["heldout_agreement"] <= 1.0 for r in updates)
    bc = json.loads((run / "final" / "trainer.json").read_text())["bc"]
    assert bc["heldout_games"] >= 1 and bc["train_decisions"] + bc["heldout_decisions"] == 773
    agent = make_agent(f"policy:{run / 'final'}", 0)
    data = decisions(tiny, [0])
    obs, mask = data["obs"][3], np.unpackbits(data["mask"][3], count=705)
    assert mask[agent.act({"observation": obs, "action_mask": mask}, None)] == 1


def test_bc_refuses_a_missing_dataset(tmp_path, root):
    from experiments.config import ConfigError
    from experiments.training.trainer import train
    cfg = _bc_config(tmp_path)
    cfg.bc.dataset = "handfoot/nothing-v0"
    with pytest.raises(ConfigError, match="bc.dataset: dataset 'handfoot/nothing-v0': not found"):
        train(cfg, quiet=True)
    cfg.bc.dataset = None
    with pytest.raises(ConfigError, match="bc.dataset"):
        cfg.validate()


def test_a_server_marks_its_tables_offered_or_not_and_an_old_file_offers_none(tmp_path):
    import sqlite3

    from experiments.apps.web.store import Store
    from experiments.apps.web.tables import Tables
    body = {"rules": "pagat", "seats": ["human", "greedy", "greedy", "greedy"], "pace_ms": 0}
    for offer in (True, False):
        store = Store(tmp_path / f"t{offer}.sqlite")
        tables = Tables(store, offer_games=offer)
        tables.create(body, "c")
        assert [row.offered for row in store.tables()] == [offer]
        store.close()
    old = tmp_path / "old.sqlite"                   # a file written before the column existed
    with sqlite3.connect(old) as c:
        c.execute("CREATE TABLE tables (id TEXT PRIMARY KEY, created REAL NOT NULL, rules TEXT NOT NULL, seats TEXT "
                  "NOT NULL, seed INTEGER NOT NULL, pace_ms INTEGER NOT NULL, token_digests TEXT NOT NULL, finished "
                  "INTEGER NOT NULL DEFAULT 0)")
        c.execute("INSERT INTO tables VALUES ('a', 1.0, 'pagat', '[\"human\",\"greedy\",\"greedy\",\"greedy\"]', 5, 0, "
                  "'[\"d\",null,null,null]', 1)")
    store = Store(old)
    assert [row.offered for row in store.tables()] == [False]
    store.close()
