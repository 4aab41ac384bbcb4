"""The engine's files are its owner's alone (issue 57): whatever the umask, the data folder is 0700
and the database, its write-ahead log and its shared memory are 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from local_engine import start_engine


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_folder_and_the_database_files_are_the_owners_alone(tmp_path: Path) -> None:
    # Given a permissive umask, as a shared machine's may be
    before = os.umask(0o002)
    try:
        # When the engine starts on a new data folder and writes to its store
        with start_engine(token="private-files", data_dir=tmp_path / "data") as engine:
            with engine.state.store.transaction() as db:
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', '1')")
            data = tmp_path / "data"
            files = [data / "engine.sqlite3", data / "engine.sqlite3-wal", data / "engine.sqlite3-shm"]
            # Then no one but the owner can list the folder or read the files
            assert _mode(data) == 0o700
            assert {f.name: _mode(f) for f in files if f.exists()} == {f.name: 0o600 for f in files if f.exists()}
            assert (data / "engine.sqlite3-wal").exists()
    finally:
        os.umask(before)
