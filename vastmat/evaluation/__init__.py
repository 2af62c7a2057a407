"""Evaluation: tracking and detection metrics and the paper's analyses."""
from .metrics import VastMATDetMetric, VastMATMetric

__all__ = ['VastMATDetMetric', 'VastMATMetric']
