"""Datasets: gt.txt / det.txt formats, categories, sequences, statistics, the VastMAT dataset, cached detections,
demo data."""
from .transforms import LoadTrackingDetections, LoadVastMATAnnotations, PackVastMATInputs
from .vastmat_dataset import VastMATDataset

__all__ = ['VastMATDataset', 'LoadVastMATAnnotations', 'LoadTrackingDetections', 'PackVastMATInputs']
