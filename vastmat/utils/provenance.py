"""Where a result came from: the code's commit, a file's content hash, the time now."""
from __future__ import annotations

import hashlib
import os.path as osp
import subprocess
from datetime import datetime, timezone

PACKAGE_ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


def code_commit(root: str = PACKAGE_ROOT) -> str | None:
    """The git commit of the checkout ``root`` (``+dirty`` when it has uncommitted changes), or None outside git."""
    try:
        commit = subprocess.run(['git', '-C', root, 'rev-parse', 'HEAD'], capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        status = subprocess.run(['git', '-C', root, 'status', '--porcelain', '--untracked-files=no'],
                                capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ('+dirty' if status else '')


def file_sha256(path: str) -> str | None:
    """The first 12 hex digits of the SHA-256 of ``path``'s bytes, or None when it is not a file."""
    if not osp.isfile(path):
        return None
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()[:12]


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()
