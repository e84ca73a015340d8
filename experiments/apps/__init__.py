"""The command line and its applications: play, replay, demo, the experiment pipeline, score sheets."""
