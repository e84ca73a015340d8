"""``handfoot bench``: throughput and memory of the engine, the envs and the training env, beside
OpenSpiel and RLCard."""
