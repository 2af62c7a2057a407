"""Datasets: gt.txt / det.txt formats, categories, rendered demo data."""
