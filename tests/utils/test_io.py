"""vastmat.utils.io: a function of a file computed once per version of the file (file_digest, the zoo's config
reads)."""
import hashlib
import os

from vastmat.utils.io import file_digest, once_per_file_version


def test_once_per_file_version_reads_a_file_again_only_when_it_changes(tmp_path, monkeypatch):
    calls = []

    @once_per_file_version()
    def size_of(path: str) -> int:
        calls.append(path)
        return os.path.getsize(path)

    path = tmp_path / 'a.txt'
    path.write_text('abc')
    monkeypatch.chdir(tmp_path)
    assert size_of('a.txt') == size_of(str(path)) == 3 and calls == [str(path)]  # one key for both spellings
    path.write_text('abcdef')
    assert size_of(str(path)) == 6 and len(calls) == 2
    assert file_digest(str(path)) == hashlib.sha1(b'abcdef').hexdigest()
