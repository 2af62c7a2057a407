"""Evaluation: tracking and detection metrics and the paper's analyses."""
