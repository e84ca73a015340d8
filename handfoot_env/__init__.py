"""handfoot: a Hand and Foot environment for reinforcement-learning research."""
from .config import RuleConfig, RuleConfigError, load_rules
from .engine import Game, IllegalActionError

__version__ = "0.1.0"
__all__ = ["Game", "IllegalActionError", "RuleConfig", "RuleConfigError", "load_rules", "__version__"]
