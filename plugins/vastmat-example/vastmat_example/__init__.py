"""Example VastMAT plugin (see README.md)."""
