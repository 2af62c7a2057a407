"""Experiments built on the lower layers: the model zoo's trainings and runs (library code the tools call)."""
