"""Versioned entry point of the Hand and Foot AEC environment (see :mod:`handfoot_env.env`)."""
from .env import env, raw_env

__all__ = ["env", "raw_env"]
