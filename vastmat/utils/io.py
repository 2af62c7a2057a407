"""Small I/O helpers: results are written to a temporary file and renamed, never left half-written."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import os.path as osp
import tempfile
from typing import IO, Any, Callable, Iterator, TypeVar

T = TypeVar('T')


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


@contextlib.contextmanager
def atomic_write(path: str, mode: str = 'w') -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success rename it to ``path``, on error remove it."""
    directory = osp.dirname(osp.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix='.' + osp.basename(path), suffix='.tmp', dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes the file private (0600); a result file is not
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        if osp.exists(tmp):
            os.unlink(tmp)
        raise


def to_jsonable(obj: Any) -> Any:
    """Numbers, strings, lists and dicts only (numpy and torch scalars become Python numbers)."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, 'item') and callable(obj.item):
        return obj.item()
    return obj


def write_json_atomic(obj: Any, path: str) -> None:
    """Write ``obj`` as indented JSON (keys sorted) without ever leaving a half-written file."""
    with atomic_write(path) as f:
        json.dump(to_jsonable(obj), f, indent=2, sort_keys=True)
        f.write('\n')


def write_lines_atomic(lines: list[str], path: str) -> None:
    """Write one string a line."""
    with atomic_write(path) as f:
        f.write(''.join(f'{line}\n' for line in lines))


def save_figure_atomic(fig: Any, path: str, dpi: int = 110) -> None:
    """Save a matplotlib figure as PNG without ever leaving a half-written file, then close it."""
    import matplotlib.pyplot as plt
    try:
        with atomic_write(path, 'wb') as f:
            fig.savefig(f, format='png', dpi=dpi)
    finally:
        plt.close(fig)


def once_per_file_version(maxsize: int | None = None) -> Callable[[Callable[[str], T]], Callable[[str], T]]:
    """Decorate ``function(path)`` to run once per version of the file (its absolute path, size and modification
    time) in this process, keeping ``maxsize`` results (None: all); a changed file is read again. The cached result
    is shared between callers: one that changes it takes a copy."""
    def decorate(function: Callable[[str], T]) -> Callable[[str], T]:
        @functools.lru_cache(maxsize=maxsize)
        def of_version(path: str, size: int, mtime_ns: int) -> T:
            return function(path)

        @functools.wraps(function)
        def once(path: str) -> T:
            status = os.stat(path)
            return of_version(osp.abspath(path), status.st_size, status.st_mtime_ns)
        return once
    return decorate


@once_per_file_version(maxsize=256)
def file_digest(path: str) -> str:
    """The SHA-1 of a file's content (read once per version of the file)."""
    digest = hashlib.sha1()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()
