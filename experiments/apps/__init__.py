"""The command line and its applications: play, replay, demo, the replay viewer, the experiment pipeline,
score sheets."""
