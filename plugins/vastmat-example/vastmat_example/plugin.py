"""The plugin's hook implementations; the entry point `vastmat.plugins: example` names this module."""
from vastmat.plugins import hookimpl


@hookimpl
def vastmat_register_modules(registries):
    """Importing the module runs its ``@registries.HOOKS.register_module()`` decorator."""
    from . import weight_stats_hook  # noqa: F401


@hookimpl
def vastmat_adjust_config(cfg):
    """``log_weight_stats = N`` in a config (or ``--cfg-options log_weight_stats=N``) adds the hook every N iters."""
    interval = cfg.get('log_weight_stats')
    if not interval:
        return
    hooks = list(cfg.get('custom_hooks', []))
    if not any(h.get('type') == 'WeightStatsHook' for h in hooks):
        hooks.append(dict(type='WeightStatsHook', interval=int(interval)))
    cfg.custom_hooks = hooks
