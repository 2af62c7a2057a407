"""SORT for VastMAT (see README.md)."""
