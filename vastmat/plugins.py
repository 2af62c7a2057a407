"""Plugins: third-party packages that add trackers, matchers or any other component to VastMAT.

A plugin is an installed distribution with an entry point in the group ``vastmat.plugins`` whose target (a module
or an object) implements some of the hooks below with ``@vastmat.plugins.hookimpl``::

    # setup.cfg of the plugin
    [options.entry_points]
    vastmat.plugins =
        my_tracker = my_tracker_pkg.plugin

    # my_tracker_pkg/plugin.py
    from vastmat.plugins import hookimpl

    @hookimpl
    def vastmat_register_modules(registries):
        from . import tracker  # its @registries.MODELS.register_module() decorators run here

Plugins are loaded once per process, by the CLIs and on the first lookup in any VastMAT registry. A plugin that
fails to load is reported by name with its error and skipped; the others still load.
"""
from __future__ import annotations

import argparse
import sys
import threading
import traceback
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

import pluggy
from mmengine.logging import print_log

from . import registry

ENTRY_POINT_GROUP = 'vastmat.plugins'
PROJECT_NAME = 'vastmat'

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class VastMATHookSpecs:
    """The hooks a plugin may implement."""

    @hookspec
    def vastmat_register_modules(self, registries: Any) -> None:
        """Register the plugin's components.

        ``registries`` is the module :mod:`vastmat.registry` (``registries.MODELS``, ``registries.MATCHERS``, ...).
        Importing the modules that hold ``@registries.X.register_module()`` decorators is enough.
        """

    @hookspec
    def vastmat_adjust_config(self, cfg: Any) -> None:
        """Change ``cfg`` (an ``mmengine.Config``) in place after the command line is applied and before the runner
        is built, e.g. to add a hook or fill in a default the plugin's components need."""


@dataclass
class PluginState:
    """What happened when the plugins were loaded in this process."""

    manager: pluggy.PluginManager
    loaded: dict[str, str] = field(default_factory=dict)  # entry-point name -> 'distribution version'
    failed: dict[str, str] = field(default_factory=dict)  # entry-point name -> error message


_state: PluginState | None = None
_lock = threading.RLock()


def _new_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(VastMATHookSpecs)
    return manager


def _report_failure(state: PluginState, name: str, stage: str, exc: BaseException) -> None:
    message = f'{type(exc).__name__}: {exc}'
    state.failed[name] = f'{stage}: {message}'
    print_log(f"vastmat plugin '{name}' failed to {stage} and is skipped: {message}\n"
              f'{"".join(traceback.format_exception(exc)).rstrip()}',
              logger='current', level=30)


def load_plugins(reload: bool = False) -> PluginState:
    """Load every ``vastmat.plugins`` entry point once and let each register its modules.

    Args:
        reload: forget what was loaded before and look at the installed entry points again.

    Returns:
        The plugin state: the pluggy manager, the loaded plugins and the failures (name -> error).
    """
    global _state
    with _lock:
        if _state is not None and not reload:
            return _state
        # Set before loading so that a registry lookup made by a plugin while it loads does not recurse.
        state = _state = PluginState(manager=_new_manager())
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin must not take the others down
                _report_failure(state, ep.name, 'import', exc)
                continue
            try:
                state.manager.register(plugin, name=ep.name)
            except Exception as exc:
                _report_failure(state, ep.name, 'register its hooks', exc)
                continue
            others = [p for p in state.manager.get_plugins() if p is not plugin]
            try:
                state.manager.subset_hook_caller('vastmat_register_modules', remove_plugins=others)(
                    registries=registry)
            except Exception as exc:
                state.manager.unregister(plugin)
                _report_failure(state, ep.name, 'register its modules', exc)
                continue
            dist = ep.dist
            state.loaded[ep.name] = f'{dist.name} {dist.version}' if dist is not None else ep.value
        return state


def adjust_config(cfg: Any) -> Any:
    """Let every loaded plugin adjust ``cfg`` in place; returns ``cfg``.

    Unlike a failure to load, an error here stops the run (naming the plugin): a config that one plugin meant to
    change but could not would otherwise run silently with the wrong settings.
    """
    state = load_plugins()
    for name, plugin in state.manager.list_name_plugin():
        caller = state.manager.subset_hook_caller(
            'vastmat_adjust_config', remove_plugins=[p for p in state.manager.get_plugins() if p is not plugin])
        try:
            caller(cfg=cfg)
        except Exception as exc:
            raise RuntimeError(f"vastmat plugin '{name}' failed to adjust the config: "
                               f'{type(exc).__name__}: {exc}') from exc
    return cfg


# every VastMAT registry lists this module among its locations: the first lookup loads the plugins
if load_plugins not in registry.FIRST_LOOKUP_CALLBACKS:
    registry.FIRST_LOOKUP_CALLBACKS.append(load_plugins)


def main(argv: list[str] | None = None) -> int:
    """``vastmat-plugins``: list the installed plugins and whether they loaded."""
    argparse.ArgumentParser(description=main.__doc__).parse_args(argv)
    state = load_plugins()
    for name, where in state.loaded.items():
        print(f'ok      {name:24s} {where}')
    for name, error in state.failed.items():
        print(f'FAILED  {name:24s} {error}')
    if not state.loaded and not state.failed:
        print(f'no plugins installed (entry-point group {ENTRY_POINT_GROUP!r})')
    return 1 if state.failed else 0


if __name__ == '__main__':
    sys.exit(main())
