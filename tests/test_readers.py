"""rffbench/readers.py: bounded, checked reading of files someone else wrote: anything but a
regular file refused at once, by every reader."""
import os
import re

import pytest


def test_readers_refuse_every_kind_of_file_but_a_regular_one_without_blocking(tmp_path):
    """A FIFO, a character device, a socket and a directory: DamagedFile naming what it is
    from every reader (the bounded bytes, the digest, the pickle reader), at once."""
    import socket

    from rffbench.published.safe import load_numbers
    from rffbench.readers import DamagedFile, read_bytes, regular_file
    from rffbench.store import file_digest

    os.mkfifo(tmp_path / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    (tmp_path / "dir").mkdir()
    kinds = {tmp_path / "fifo": "a FIFO (named pipe)", "/dev/zero": "a character device",
             tmp_path / "sock": "a socket", tmp_path / "dir": "a directory"}
    try:
        for path, kind in kinds.items():
            with pytest.raises(DamagedFile, match=re.escape(f"{kind}, not a regular file")):
                regular_file(path)
            for reader in (lambda p: read_bytes(p, 100), file_digest, load_numbers):
                try:
                    reader(path)
                except DamagedFile as exc:
                    assert f"{kind}, not a regular file" in str(exc)
                except OSError as exc:  # a socket cannot be opened at all: its own line
                    assert kind == "a socket" and exc.errno is not None
                else:
                    raise AssertionError(f"{reader} read {path}")
    finally:
        sock.close()
    (tmp_path / "file").write_bytes(b"12")
    assert read_bytes(tmp_path / "file", 100) == b"12"
