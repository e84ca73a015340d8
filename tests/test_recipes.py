"""The presets and recipes shipped inside the package are the files of configs/ (one source each:
configs/ is where users copy and edit them, the package is what commands fall back on)."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments.config import ConfigError
from experiments.recipes import RECIPES_DIR, find_config, recipe_names
from experiments.training.config import load_train_config
from handfoot_env.config import PRESET_NAMES, PRESETS_DIR

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [(PRESETS_DIR / f"{n}.yaml", ROOT / "configs" / "rules" / f"{n}.yaml") for n in PRESET_NAMES]
SHIPPED += [(p, ROOT / "configs" / p.relative_to(RECIPES_DIR)) for p in sorted(RECIPES_DIR.glob("*/*.yaml"))]


@pytest.mark.parametrize("shipped,config", SHIPPED, ids=lambda p: p.name)
def test_each_shipped_file_equals_its_copy_in_configs(shipped, config):
    assert config.is_file(), f"{config} is missing"
    assert shipped.read_text() == config.read_text(), f"{shipped} and {config} differ: change both"


def test_every_rule_file_of_configs_is_a_shipped_preset():
    assert sorted(p.stem for p in (ROOT / "configs" / "rules").glob("*.yaml")) == sorted(PRESET_NAMES)
    assert sorted(p.stem for p in PRESETS_DIR.glob("*.yaml")) == sorted(PRESET_NAMES)


def test_recipes_are_found_by_name_and_by_their_configs_path(tmp_path, monkeypatch):
    assert {"quickstart", "long", "dmc", "rllib_selfplay"} <= set(recipe_names("train"))
    monkeypatch.chdir(tmp_path)                 # a folder without configs/
    assert find_config("quickstart", "train") == RECIPES_DIR / "train" / "quickstart.yaml"
    assert find_config("configs/train/quickstart.yaml", "train") == RECIPES_DIR / "train" / "quickstart.yaml"
    assert find_config("quick", "bench") == RECIPES_DIR / "bench" / "quick.yaml"
    assert find_config("elsewhere/quickstart.yaml", "train") is None
    assert load_train_config("quickstart").name == "quickstart"
    (tmp_path / "quickstart").write_text("name: mine\n")        # a file that exists comes first
    assert load_train_config("quickstart").name == "mine"
    with pytest.raises(ConfigError, match="not found"):
        load_train_config("nonesuch")
