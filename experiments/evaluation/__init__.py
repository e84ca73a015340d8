"""Evaluation: duplicate-format matches, their statistics and ratings, reports, and a learner's summary."""
