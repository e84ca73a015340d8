"""Sweeps: many seeds of many variants of one experiment or evaluation, and statistics across seeds.

* :mod:`experiments.sweeps.config` reads and checks a sweep config (``configs/sweeps/*.yaml``) and
  expands it into trials;
* :mod:`experiments.sweeps.trial` runs one trial (a ``handfoot experiment`` or ``handfoot
  evaluate`` in its own run folder, as a subprocess) and reads its result;
* :mod:`experiments.sweeps.runner` runs the trials on this machine (``--parallel N``), and
  :mod:`experiments.sweeps.tune` runs them as Ray Tune trials (``--ray``);
* :mod:`experiments.sweeps.stats` holds the statistics across seeds (IQM, bootstrap intervals,
  probability of improvement, performance profiles) and :mod:`experiments.sweeps.report` writes
  ``sweep.json``, ``summary.csv``, ``report.md``, the plots and TensorBoard's HParams view;
* :mod:`experiments.sweeps.cli` is ``handfoot sweep``.
"""
