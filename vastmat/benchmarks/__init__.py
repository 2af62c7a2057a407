"""What the project measures itself with: speed, convergence and spread benchmarks, checks of the shipped configs,
studies of its own matchers, and the code that runs other people's trackers beside ours. Above
:mod:`vastmat.experiments` (it may import the experiments, never the other way round); the scripts of
``tools/benchmark/`` and a few of ``tools/analysis/`` are its thin wrappers. A user's workflow (training, testing,
sweeps, tuning, the zoo, the report) never imports it."""
