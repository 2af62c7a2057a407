"""Shields against third-party packages that break the stack's imports (a leaf module: imported first by
``vastmat/__init__.py``, it imports nothing of vastmat).

mmpretrain 1.2.0 (which mmdet 3.3's ReID components import) enables its multi-modal models when the ``transformers``
distribution is installed at 4.28 or newer. With transformers 5 their guarded imports fail and leave
``PreTrainedModel`` as ``None``, so ``import mmpretrain`` (and with it ``import mmdet.models``) ends with
``TypeError: NoneType takes no arguments`` in its BLIP module. VastMAT uses none of those models, so when
transformers 5 or newer is installed, mmpretrain is imported once with transformers hidden from its dependency check:
its multi-modal models are then registered as placeholders that say what they need, as on a machine without
transformers. Nothing else sees transformers hidden, and nothing is done when it is absent or older.
"""
from __future__ import annotations

import importlib.metadata
import sys

# the first transformers release whose modules mmpretrain 1.2.0's multi-modal models cannot import
BREAKING_TRANSFORMERS_MAJOR = 5


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def transformers_breaks_mmpretrain(version: str | None) -> bool:
    """Whether a transformers ``version`` breaks mmpretrain 1.2.0's import (major 5 or newer)."""
    if not version:
        return False
    major = version.split('.', 1)[0]
    return major.isdigit() and int(major) >= BREAKING_TRANSFORMERS_MAJOR


def shield_mmpretrain_from_transformers() -> bool:
    """Import mmpretrain without its multi-modal models where the installed transformers would break it (see the
    module docstring). Returns True where the shield was applied; False where it was not needed (no transformers 5,
    no mmpretrain, or mmpretrain already imported)."""
    if 'mmpretrain' in sys.modules or not transformers_breaks_mmpretrain(installed_version('transformers')):
        return False
    if installed_version('mmpretrain') is None:
        return False
    # mmpretrain.utils.dependency binds importlib_metadata.distribution when it is first imported, and computes
    # WITH_MULTIMODAL with it at once; it keeps the hiding function, so transformers stays hidden from mmpretrain only
    import importlib_metadata

    original = importlib_metadata.distribution

    def distribution_without_transformers(name: str):  # noqa: ANN202 (importlib_metadata's Distribution)
        if name.split('>')[0].split('=')[0].strip().lower() == 'transformers':
            raise importlib_metadata.PackageNotFoundError(name)
        return original(name)

    importlib_metadata.distribution = distribution_without_transformers
    try:
        import mmpretrain  # noqa: F401
    finally:
        importlib_metadata.distribution = original
    return True
