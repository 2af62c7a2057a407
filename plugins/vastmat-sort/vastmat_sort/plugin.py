"""The plugin's hook implementations; the entry point `vastmat.plugins: sort` names this module."""
from vastmat.plugins import hookimpl


@hookimpl
def vastmat_register_modules(registries):
    """Importing the module runs its ``@registries.MODELS.register_module()`` decorator (``type='SORT'``)."""
    from . import sort_tracker  # noqa: F401
