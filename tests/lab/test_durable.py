"""The lab's durable state (``--state``): every committed write is in the database before anyone sees it, the
resourceVersion counter goes with it, resumes from before a restart get 410, and files the lab cannot use are
refused with one paragraph.

These run the store and :class:`~observatory.lab.persistence.StateDatabase` in-process (no HTTP). A crash is
:func:`crashed`: the database file and its WAL copied while the lab still holds them open, which is what a killed
process leaves on disk (nothing is checkpointed or closed). The kill -9 tests against ``observatory lab serve`` are
in test_durable_crash.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from observatory.lab import errors
from observatory.lab.persistence import StateDatabase, StateError
from observatory.lab.store import Store


def pod(name: str, ns: str = "default", **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": {"nodeName": ""}}


def durable_store(path) -> tuple[Store, StateDatabase]:
    """A store filled from (or, when new, initialized into) the database at ``path``, with the database attached."""
    db = StateDatabase.open(path)
    store = Store()
    snapshot = db.load()
    if snapshot is None:
        db.initialize(store.snapshot())
    else:
        store.restore(snapshot)
    db.attach(store)
    return store, db


def crashed(path: Path, db: StateDatabase) -> Path:
    """The files a lab killed now would leave: ``path`` and ``path-wal`` copied as they are, then the lab's
    connection dropped without a checkpoint. Returns the copy's path, for the next lab."""
    after = path.with_name("after-crash.db")
    shutil.copyfile(path, after)
    wal = Path(f"{path}-wal")
    if wal.exists():
        shutil.copyfile(wal, Path(f"{after}-wal"))
    db.close()
    return after


def test_each_write_is_in_the_database_when_the_store_returns(tmp_path):
    path = tmp_path / "state.db"
    store, db = durable_store(path)
    a = store.create("pods", pod("a"))
    b = store.create("pods", pod("b"))
    a2 = store.update("pods", {**a, "metadata": {**a["metadata"], "labels": {"gen": "2"}}})
    store.delete("pods", "default", "b")
    assert Path(f"{path}-wal").stat().st_size > 0  # the writes are in the WAL, not yet in the database file
    again, db2 = durable_store(crashed(path, db))
    try:
        assert again.get("pods", "default", "a") == a2
        assert again.get("pods", "default", "b") is None
        assert again.resource_version == 4
        assert int(b["metadata"]["resourceVersion"]) < again.resource_version
    finally:
        db2.close()


def test_a_delete_is_the_last_write_and_its_resource_version_is_not_issued_again(tmp_path):
    """No stored object carries a DELETE's RV: the counter row must, or the next lab would hand it out again."""
    path = tmp_path / "state.db"
    store, db = durable_store(path)
    store.create("pods", pod("a"))
    gone = store.delete("pods", "default", "a")
    again, db2 = durable_store(crashed(path, db))
    try:
        assert again.create("pods", pod("b"))["metadata"]["resourceVersion"] == "3"
        assert gone["metadata"]["resourceVersion"] == "2"
    finally:
        db2.close()


def test_a_write_is_committed_before_the_store_returns_or_a_watcher_sees_it(tmp_path):
    """The journal runs first in the commit: when a watcher's event is queued, the transaction holding the write
    is already committed (no transaction open) and the counter row has its RV."""
    path = tmp_path / "state.db"
    store, db = durable_store(path)
    try:
        seen = []

        class Spy:
            """A watcher stand-in that records the database's state when the fan-out reaches it."""

            def offer(self, change):
                seen.append((db.in_transaction, db.stored_resource_version(), change.rv))

        store._watchers.add(Spy())  # type: ignore[arg-type]
        store.create("pods", pod("a"))
        store.delete("pods", "default", "a")
        assert seen == [(False, 1, 1), (False, 2, 2)]
    finally:
        db.close()


def test_a_resume_from_before_the_restart_gets_410_and_one_at_the_restored_rv_is_served(tmp_path):
    path = tmp_path / "state.db"
    store, db = durable_store(path)
    for name in "abc":
        store.create("pods", pod(name))
    again, db2 = durable_store(crashed(path, db))
    try:
        with pytest.raises(errors.StatusError) as exc:
            again.watch("pods", None, None, since_rv=2)
        assert (exc.value.code, exc.value.reason, exc.value.message) == (
            410, "Expired", "too old resource version: 2 (3)")
        watcher = again.watch("pods", None, None, since_rv=3)
        again.create("pods", pod("d"))
        change = watcher.queue.get_nowait()
        assert (change.type, change.key, change.rv) == ("ADDED", ("pods", "default", "d"), 4)
    finally:
        db2.close()


def test_a_write_the_database_refuses_is_undone_and_answered_500(tmp_path):
    store, db = durable_store(tmp_path / "state.db")
    try:
        a = store.create("pods", pod("a"))
        watcher = store.watch("pods", None, None, since_rv=None)

        def refuse(change):
            raise sqlite3.OperationalError("disk I/O error")

        store.journal = refuse
        for write in (lambda: store.create("pods", pod("b")),
                      lambda: store.update("pods", {**a, "spec": {"nodeName": "n1"}}),
                      lambda: store.delete("pods", "default", "a")):
            with pytest.raises(errors.StatusError) as exc:
                write()
            assert (exc.value.code, exc.value.reason) == (500, "InternalError")
            assert exc.value.message == ("Internal error occurred: the lab state database refused the write: "
                                         "disk I/O error")
        assert [o["metadata"]["name"] for o in store.iter("pods")] == ["a"]
        assert store.get("pods", "default", "a") == a
        assert store.resource_version == 1 and watcher.queue.empty()
        db.attach(store)
        assert store.create("pods", pod("c"))["metadata"]["resourceVersion"] == "2"
    finally:
        db.close()


def test_an_earlier_labs_json_state_file_is_migrated_once_and_kept_as_a_backup(tmp_path):
    path = tmp_path / "state.json"
    old = Store()
    old.create("namespaces", {"metadata": {"name": "default"}})
    old.create("pods", pod("kept"))
    old.delete("pods", "default", "kept")
    old.create("pods", pod("here"))
    text = json.dumps(old.snapshot())
    path.write_text(text)
    store, db = durable_store(path)
    try:
        assert store.get("pods", "default", "here") == old.get("pods", "default", "here")
        assert store.resource_version == 4
        assert (tmp_path / "state.json.json-backup").read_text() == text
        assert path.read_bytes()[:16] == b"SQLite format 3\x00"
        assert store.create("pods", pod("next"))["metadata"]["resourceVersion"] == "5"
    finally:
        db.close()


@pytest.mark.parametrize(("content", "words"), [
    (b"\x00\x01garbage that is no database", "is not a lab state database: it is neither"),
    (b"SQLite format 3\x00" + b"\xff" * 200, "is damaged and cannot be read"),
    (b'{"resourceVersion": "x", "objects": []}', "looks like an earlier lab's JSON state file, but it cannot"),
    (b'{"truncated": ', "looks like an earlier lab's JSON state file, but it cannot"),
], ids=["garbage", "damaged-database", "json-of-another-shape", "truncated-json"])
def test_a_file_that_is_no_usable_state_is_refused_in_one_paragraph(tmp_path, content, words):
    path = tmp_path / "state"
    path.write_bytes(content)
    with pytest.raises(StateError) as exc:
        StateDatabase.open(path)
    message = str(exc.value)
    assert words in message and str(path) in message and "\n" not in message
    assert path.read_bytes() == content


def test_another_programs_database_and_a_newer_layout_are_refused(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StateError, match="an SQLite database, but not a lab state database"):
        StateDatabase.open(other)
    newer = tmp_path / "newer.db"
    StateDatabase.open(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StateError, match=r"written by a newer observatory \(state layout 99"):
        StateDatabase.open(newer)


def test_a_database_another_lab_holds_is_refused(tmp_path):
    path = tmp_path / "state.db"
    first = StateDatabase.open(path)
    try:
        with pytest.raises(StateError, match="is in use by another running lab"):
            StateDatabase.open(path)
    finally:
        first.close()
    StateDatabase.open(path).close()  # free again once the first lab closed it


def test_lab_serve_on_an_earlier_json_state_serves_its_objects_and_continues_its_resource_version(tmp_path):
    """``LabServer.load`` with ``state_path``: the JSON file an earlier lab saved is migrated and restored, not
    replaced by the scenario."""
    from observatory.lab.server import LabServer
    from observatory.settings import LabSettings

    settings = LabSettings(kubelet=False, scheduler=False)
    earlier = LabServer(settings, scenario="pair")
    earlier.load()
    earlier.store.create("pods", pod("from-before", "default"))
    path = tmp_path / "state.json"
    path.write_text(json.dumps(earlier.store.snapshot()))
    lab = LabServer(settings, scenario="manual-binding", state_path=path)
    lab.load()
    try:
        assert lab.store.get("pods", "default", "from-before") == earlier.store.get("pods", "default", "from-before")
        assert lab.store.get("pods", "sched-lab", "manual") is None  # the scenario was not loaded over it
        assert lab.store.resource_version == earlier.store.resource_version
        assert lab.state is not None and lab.store.journal == lab.state.record
    finally:
        lab.close_state()


@pytest.mark.parametrize(("synchronous", "pragma"), [("normal", 1), ("full", 2)])
def test_the_synchronous_setting_reaches_sqlite_in_wal_mode(tmp_path, synchronous, pragma):
    db = StateDatabase.open(tmp_path / "state.db", synchronous)
    try:
        assert db._db.execute("PRAGMA synchronous").fetchone()[0] == pragma
        assert db._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


@pytest.mark.parametrize("read_only", ["file", "folder"])
def test_a_state_file_on_a_read_only_mount_says_so_not_damaged(tmp_path, monkeypatch, read_only):
    """A read-only file or folder (a read-only mount; root passes permission bits, not EROFS) is refused as
    unwritable before SQLite opens it read-only and calls the first write a disk I/O error."""
    path = tmp_path / "state.db"
    db = StateDatabase.open(path)
    db.close()
    denied = path if read_only == "file" else tmp_path
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == denied else real_access(p, mode))
    with pytest.raises(StateError) as exc:
        StateDatabase.open(path)
    message = str(exc.value)
    assert "cannot write its state there" in message and "damaged" not in message
    assert ("the file is read-only" if read_only == "file" else f"the folder {tmp_path} is read-only") in message
