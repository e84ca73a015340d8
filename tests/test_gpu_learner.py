"""The learner on a GPU (``batched.device``): where torch sees CUDA, a run's updates happen there and
land close to the CPU run's (float sums are ordered differently on a GPU, so not bit for bit); on
every machine, ``auto`` picks the CPU when there is no GPU and a CPU run is unchanged."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch as th

from experiments.config import ConfigError
from experiments.training.networks import resolve_device
from experiments.training.trainer import train
from tests.test_batched_ppo import _arrays, tiny_config

cuda = pytest.mark.skipif(not th.cuda.is_available(), reason="needs a CUDA GPU")


def test_auto_is_the_cpu_without_a_gpu_and_cuda_without_one_is_one_line():
    assert resolve_device("cpu") == th.device("cpu")
    if th.cuda.is_available():
        assert resolve_device("auto").type == "cuda"
        return
    assert resolve_device("auto") == th.device("cpu")
    with pytest.raises(ConfigError, match="batched.device: cuda, but torch sees no GPU"):
        resolve_device("cuda")


def test_a_cpu_run_is_the_same_with_device_cpu_and_auto_on_a_machine_without_a_gpu(tmp_path):
    if th.cuda.is_available():
        pytest.skip("auto is the GPU here")
    runs = [Path(train(tiny_config(tmp_path / d, batched={"device": d}), quiet=True)["run"]) for d in ("cpu", "auto")]
    assert (runs[0] / "metrics.jsonl").read_text() == (runs[1] / "metrics.jsonl").read_text()
    info = json.loads((runs[1] / "run.json").read_text())
    assert info["learner_device"] == "cpu"


@cuda
@pytest.mark.parametrize("backend", ["batched", "dmc"])
def test_a_gpu_run_learns_what_the_cpu_run_learns_up_to_float_rounding(tmp_path, backend):
    over = {"backend": backend}
    if backend == "dmc":
        over.update(dmc={"rollout": 128, "batch_size": 64}, network={"pi": [32, 16], "vf": [8]}, total_timesteps=1400,
                    batched={"games": 2, "samplers": 0, "pipeline": False})
    runs = {}
    for d in ("cpu", "cuda"):
        b = dict(over.get("batched", {"samplers": 0, "pipeline": False}), device=d)
        runs[d] = Path(train(tiny_config(tmp_path / d, **{**over, "batched": b}), quiet=True)["run"])
    info = json.loads((runs["cuda"] / "run.json").read_text())
    assert info["learner_device"].startswith("cuda") and info["learner_gpu"]
    a, b = _arrays(runs["cpu"] / "final" / "learner.npz"), _arrays(runs["cuda"] / "final" / "learner.npz")
    assert a.keys() == b.keys()
    for k in a:
        if k.startswith("model/"):
            np.testing.assert_allclose(a[k], b[k], rtol=1e-3, atol=1e-4, err_msg=k)
    # the checkpoint written on the GPU resumes on the CPU
    from experiments.training.cli import train_main
    steps = json.loads((runs["cuda"] / "final" / "trainer.json").read_text())["num_timesteps"]
    assert train_main(["--resume", str(runs["cuda"]), "--set", "batched.device=cpu",
                       "--set", f"total_timesteps={int(steps) + 128}", "--quiet"]) == 0
