"""Datasets: gt.txt / det.txt formats, categories, sequences, statistics, the VastMAT dataset, demo data."""
from .vastmat_dataset import VastMATDataset
from .transforms import LoadVastMATAnnotations, PackVastMATInputs

__all__ = ['VastMATDataset', 'LoadVastMATAnnotations', 'PackVastMATInputs']
