"""Self-play training: one Trainer for every backend, the learners (SB3, batched PPO, DMC, RLlib) and their games."""
