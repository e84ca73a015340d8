"""handfoot: a Hand and Foot environment for reinforcement-learning research.

``from handfoot_env import handfoot_v0`` gives the PettingZoo AEC environment,
``from handfoot_env import single_seat_v0`` one seat against agents as a ``gymnasium.Env``;
:class:`Game` is the rules engine underneath them.
"""
import gymnasium
import pettingzoo

from . import handfoot_v0, single_seat_v0
from .config import RuleConfig, RuleConfigError, load_rules
from .engine import Game, IllegalActionError

__version__ = "0.1.0"
ENV_ID = "handfoot/hand_and_foot-v0"
SINGLE_SEAT_ID = "handfoot/SingleSeat-v0"


def _register() -> None:
    """Register the AEC env with PettingZoo's registry (PettingZoo >= 1.27 has one) and the single-seat env
    with Gymnasium's, on ``import handfoot_env``."""
    if SINGLE_SEAT_ID not in gymnasium.registry:
        # the outermost layer of gymnasium.make gives action_masks() (Gymnasium 1.x wrappers forward nothing)
        masks = gymnasium.envs.registration.WrapperSpec("ActionMasks", "handfoot_env.single_seat:ActionMasks", {})
        gymnasium.register(SINGLE_SEAT_ID, entry_point="handfoot_env.single_seat_v0:env", additional_wrappers=(masks,))
    try:
        from pettingzoo.env_registry.registration import aec_registry
    except ImportError:  # pragma: no cover - older PettingZoo without a registry
        return
    if ENV_ID not in aec_registry and hasattr(pettingzoo, "register"):
        pettingzoo.register("aec", ENV_ID, entry_point="handfoot_env.handfoot_v0:env")


_register()


__all__ = ["Game", "IllegalActionError", "RuleConfig", "RuleConfigError", "load_rules", "handfoot_v0",
           "single_seat_v0", "ENV_ID", "SINGLE_SEAT_ID",
           "__version__"]
