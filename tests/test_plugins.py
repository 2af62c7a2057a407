"""Plugins: discovery through a real installed entry point, building without custom_imports, broken plugins."""
import os
import os.path as osp
import shutil
import sys
import textwrap

import pytest

from helpers.common import REPO, python, run

# one worker makes the module's fixtures (a pip install and a fresh interpreter: seconds each)
pytestmark = pytest.mark.xdist_group('plugins')

EXAMPLE = osp.join(REPO, 'plugins', 'vastmat-example')


def _write_plugin(root, dist_name, module, body):
    """A minimal installable plugin distribution whose entry point ``<dist_name>`` names ``module``."""
    os.makedirs(osp.join(root, module))
    with open(osp.join(root, 'setup.cfg'), 'w') as f:
        f.write(textwrap.dedent(f'''
            [metadata]
            name = {dist_name}
            version = 0.0.1
            [options]
            packages = {module}
            [options.entry_points]
            vastmat.plugins =
                {dist_name} = {module}.plugin
        '''))
    with open(osp.join(root, 'setup.py'), 'w') as f:
        f.write('from setuptools import setup\nsetup()\n')
    open(osp.join(root, module, '__init__.py'), 'w').close()
    with open(osp.join(root, module, 'plugin.py'), 'w') as f:
        f.write(textwrap.dedent(body))


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    """The example plugin and two broken ones, installed by pip into a private site directory."""
    tmp = tmp_path_factory.mktemp('plugins')
    broken_import = str(tmp / 'src_import')
    _write_plugin(broken_import, 'broken-import', 'broken_import_plugin',
                  'import a_module_that_does_not_exist  # noqa\n')
    broken_register = str(tmp / 'src_register')
    _write_plugin(broken_register, 'broken-register', 'broken_register_plugin', '''
        from vastmat.plugins import hookimpl

        @hookimpl
        def vastmat_register_modules(registries):
            raise RuntimeError('cannot find my weights')
    ''')
    # built from a copy: pip builds in the source tree (build/), and the xdist workers each make this fixture at
    # the same time, so two builds of the repository's folder would race on it
    example = str(tmp / 'src_example')
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns('build', '*.egg-info', '__pycache__'))
    target = str(tmp / 'site')
    run([sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps', '--no-build-isolation',
         '--disable-pip-version-check', '--target', target, example, broken_import, broken_register])
    return target


@pytest.fixture(scope='module')
def fresh_process(site):
    """What a fresh interpreter with the plugins' site on its path prints: a hook of the example plugin built by
    mmengine's root registry from a config without custom_imports, the plugins' load state, a config the example's
    adjust_config hook changed, ``python -m vastmat.plugins``'s listing and exit status (run as ``-m`` runs it; one
    interpreter for the tests below: each start costs seconds)."""
    return python('-c', textwrap.dedent('''
        from mmengine.config import Config
        from mmengine.registry import HOOKS, DefaultScope
        DefaultScope.get_instance('plugin_test', scope_name='vastmat')
        cfg = Config(dict(custom_hooks=[dict(type='WeightStatsHook', interval=3)]))
        assert 'custom_imports' not in cfg
        hook = HOOKS.build(cfg.custom_hooks[0])   # mmengine's root registry, as the runner builds hooks
        print('HOOK', type(hook).__module__, hook.interval)

        from vastmat.plugins import adjust_config, load_plugins
        state = load_plugins()
        print('LOADED', sorted(state.loaded))
        for name, error in sorted(state.failed.items()):
            print('FAILED', name, '|', error)

        print('ADJUSTED', adjust_config(Config(dict(log_weight_stats=5))).custom_hooks)

        import runpy
        try:
            runpy.run_module('vastmat.plugins', run_name='__main__', alter_sys=True)
        except SystemExit as exit:
            print('LISTING EXIT', exit.code)
    '''), env={'PYTHONPATH': os.pathsep.join([site, REPO])}).stdout


def test_example_plugin_is_discovered_and_builds_without_custom_imports(fresh_process):
    assert 'HOOK vastmat_example.weight_stats_hook 3' in fresh_process


def test_broken_plugins_are_reported_and_do_not_take_the_others_down(fresh_process):
    assert "LOADED ['example']" in fresh_process
    assert ("FAILED broken-import | import: ModuleNotFoundError: No module named 'a_module_that_does_not_exist'"
            in fresh_process)
    assert 'FAILED broken-register | register its modules: RuntimeError: cannot find my weights' in fresh_process
    # The warning in the log names the plugin too.
    assert "vastmat plugin 'broken-import' failed to import" in fresh_process

    listing = fresh_process.partition('ADJUSTED')[2]  # python -m vastmat.plugins
    assert 'LISTING EXIT 1' in listing
    assert 'ok      example' in listing and 'FAILED  broken-register' in listing


def test_adjust_config_hook(fresh_process):
    assert "ADJUSTED [{'type': 'WeightStatsHook', 'interval': 5}]" in fresh_process


def test_weight_stats_values():
    sys.path.insert(0, EXAMPLE)
    try:
        import torch

        from vastmat_example.weight_stats_hook import WeightStatsHook
        layer = torch.nn.Linear(2, 1, bias=True)
        with torch.no_grad():
            layer.weight.copy_(torch.tensor([[3.0, -4.0]]))
            layer.bias.fill_(12.0)
        assert WeightStatsHook.weight_stats(layer) == {'weight_norm': 13.0, 'weight_absmax': 12.0}
        with pytest.raises(ValueError, match='interval'):
            WeightStatsHook(interval=0)
    finally:
        sys.path.remove(EXAMPLE)
        from vastmat.registry import HOOKS
        HOOKS._module_dict.pop('WeightStatsHook', None)
