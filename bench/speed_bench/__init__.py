"""What ``bench/bench_speed.py`` times and checks with: the photo sample and timing helpers, a
per-stage clock around ``read_roll``, and one module per section (``--only``, ``--check``)."""
