"""Packaging (metadata in setup.cfg). A built wheel also carries the repository's ``configs/`` as
``vastmat/.mim/configs``, where MMDetection ships its own; ``vastmat.utils.package_configs.config_dir`` finds them
there, and an editable install reads the checkout's ``configs/`` instead."""
import os.path as osp
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

CONFIGS = osp.join(osp.dirname(osp.abspath(__file__)), 'configs')


class BuildPyWithConfigs(build_py):
    """``build_py`` that copies ``configs/`` into the built package's ``.mim/configs`` (not in editable mode)."""

    def run(self):
        super().run()
        if getattr(self, 'editable_mode', False):
            return
        if not osp.isdir(CONFIGS):
            raise FileNotFoundError(f'no {CONFIGS}: a wheel of vastmat must carry its configs (MANIFEST.in grafts '
                                    'them into the sdist)')
        target = osp.join(self.build_lib, 'vastmat', '.mim', 'configs')
        shutil.rmtree(target, ignore_errors=True)  # no stale configs from an earlier build
        shutil.copytree(CONFIGS, target, ignore=shutil.ignore_patterns('__pycache__', '*.py[co]'))


setup(cmdclass={'build_py': BuildPyWithConfigs})
