"""Everything above the game and the agents: training, evaluation, the command line and benchmarks.

``experiments.config`` (configs as dataclasses) and ``experiments.runs`` (run folders) serve
every sub-package; ``training`` builds on ``evaluation``; ``apps`` and ``bench`` sit on top.
docs/architecture.md draws the layers.
"""
