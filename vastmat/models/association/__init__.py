"""Association modules (registered in ``vastmat.registry.MATCHERS``)."""
