"""Self-play training: the config, the trainer, the SB3, batched and RLlib backends and their envs."""
