"""What a user runs on top of the lower layers, as library code the tools call: the model zoo (``make demo``), sweeps,
tuning, the browsable report, the matcher table and the launchers (local, Ray, torchrun) they share."""
