"""The lab's durable state (``lab serve --state PATH``): an SQLite database that every acknowledged write reaches first.

This plays etcd's part under the store: etcd never loses a write it acknowledged and never issues a revision twice,
and neither does a lab with ``--state``.

* **One transaction per write.** :meth:`StateDatabase.record` runs as the store's ``journal``: inside
  :meth:`~observatory.lab.store.Store._commit`, before the change reaches any watcher, any listener or the HTTP
  answer, it writes the object (or removes it, for DELETED) and the store's resourceVersion counter in one
  transaction and commits it. The answer is sent only after the commit returned; a write the database refuses is
  undone in memory and answered ``500 InternalError`` (see ``Store._write_ahead``).
* **The resourceVersion counter is stored with the objects**, in the same transaction, so a restarted lab continues
  after the last RV it ever handed out (a DELETE's RV too, which no stored object carries). It never reissues one.
* **A restart starts the watch history at the restored RV**: :meth:`~observatory.lab.store.Store.restore` marks
  everything up to it compacted, so a watch resuming from an older RV gets ``410 Expired`` ``too old resource
  version: <rv> (<restored rv>)``, as kube-apiserver's watch cache answers after its initial list at that RV
  (``oldest = listResourceVersion + 1``; ``resourceVersion < oldest-1`` is expired: ``getAllEventsSinceLocked``
  in ``staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go``). Clients relist; none skips silently. A
  resume at exactly the restored RV is served.

What ``synchronous`` guarantees, in WAL mode (``PRAGMA journal_mode=WAL``):

* ``NORMAL`` (the default, :data:`SYNCHRONOUS`): a commit is one ``write()`` of the changed pages to the
  ``PATH-wal`` file, without ``fsync``. Once ``write()`` returns, the kernel holds the bytes, so **a crash of the
  process (``kill -9``, an exception, the OOM killer) loses nothing that was committed**: the next open replays the
  WAL. A **power loss or kernel crash** may roll back the last commits before the WAL's next ``fsync`` (at each
  checkpoint), but never corrupts the database; the resourceVersions of those commits are then issued again.
  Measured on the project's 2-core machines (``bench/durable_bench.py``, ``bench/results/durable.md``): a write
  through the registry takes about 213 µs instead of 132 µs, an HTTP write 1.06 ms instead of 0.85 ms (1.25 times).
* ``FULL`` (``OBSERVATORY_LAB__STATE_SYNCHRONOUS=full``): each commit also fsyncs the WAL, so an acknowledged
  write survives power loss too, as etcd's does (etcd fdatasyncs its WAL before it acknowledges an entry). On the
  same machines a registry write takes about 503 µs (3.8 times no ``--state``) and an HTTP write 1.26 ms (1.49
  times), all of it on the lab's event loop.

The bar the lab sets is the process crash, so NORMAL is the default; FULL is there for a lab kept on a machine that
may lose power.

The file is opened in ``locking_mode=EXCLUSIVE``: a second lab on the same ``--state`` is refused at start (the
lock goes with the process, also after ``kill -9``). An older lab's JSON state file (``{"resourceVersion": N,
"objects": {resource: [obj, ...]}}``) is migrated once: kept as ``PATH.json-backup`` and replaced by a database
holding the same objects and RV (see :func:`migrate_json`). Migrating rather than refusing keeps a restarted lab
losing nothing across the upgrade too: that file is all there is of the earlier lab's state, and the backup keeps
it as it was. Anything else that cannot be read raises :class:`StateError` with one readable paragraph.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from observatory.lab.store import Change, Store

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "SYNCHRONOUS", "StateDatabase", "StateError", "migrate_json"]

Synchronous = Literal["normal", "full"]
SYNCHRONOUS: Synchronous = "normal"
"""The default ``PRAGMA synchronous``: durable against a process crash (see the module docstring)."""

APPLICATION_ID = 0x6F627376
"""``PRAGMA application_id`` of a lab state database ("obsv"), so another program's SQLite file is not mistaken
for one."""
SCHEMA_VERSION = 1
"""``PRAGMA user_version``: the layout below. A database with a higher one was written by a newer observatory."""

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file (sqlite.org/fileformat.html, "The Database Header")."""

_SCHEMA = (
    "CREATE TABLE objects (resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY (resource, namespace, name)) WITHOUT ROWID",
    "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
)
_RV = "resourceVersion"


class StateError(Exception):
    """A ``--state`` file the lab cannot use (corrupt, another program's, locked by another lab, unwritable). The
    message is one paragraph that names the file and what to do."""


class StateDatabase:
    """One open state database. :meth:`open`, then :meth:`load` or :meth:`initialize`, :meth:`record` per write,
    :meth:`close`."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection
        self.writes = 0
        """Transactions committed by :meth:`record` since :meth:`open`."""

    @classmethod
    def open(cls, path: Path, synchronous: Synchronous = SYNCHRONOUS) -> StateDatabase:
        """Open (or create) the database at ``path``; an older lab's JSON state file there is migrated first.

        Raises StateError for a file that is neither, a corrupt database, another program's database, one written
        by a newer observatory, or one another running lab holds.
        """
        kind = _file_kind(path)
        if kind == "json":
            migrate_json(path)
        elif kind == "other":
            raise StateError(
                f"{path} is not a lab state database: it is neither an SQLite database nor an earlier lab's JSON "
                f"state file. Give --state a new path (the lab creates the database), or move that file away.")
        unwritable = _unwritable(path)
        if unwritable is not None:
            raise StateError(
                f"{path}: the lab cannot write its state there ({unwritable}). The lab commits every write it "
                f"acknowledges to that database and keeps SQLite's write-ahead log beside it, so both the file and "
                f"its folder must be writable. Give --state a path in a writable folder.")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=0)
        except (OSError, sqlite3.Error) as exc:
            raise StateError(f"{path}: cannot open the lab state database ({exc}). Check that the folder exists "
                             f"and is writable.") from None
        try:
            _configure(db, path, synchronous)
            _check(db, path)
        except BaseException:
            db.close()
            raise
        return cls(path, db)

    def load(self) -> dict[str, Any] | None:
        """The stored state as a :meth:`~observatory.lab.store.Store.snapshot` (``{"resourceVersion": int,
        "objects": {resource: [obj, ...]}}``), or None for a database that was never initialized."""
        try:
            row = self._db.execute("SELECT value FROM counters WHERE name = ?", (_RV,)).fetchone()
            if row is None:
                return None
            objects: dict[str, list[dict[str, Any]]] = {}
            for resource, body in self._db.execute(
                    "SELECT resource, body FROM objects ORDER BY resource, namespace, name"):
                objects.setdefault(resource, []).append(json.loads(body))
        except (sqlite3.Error, ValueError) as exc:
            raise _corrupt(self.path, exc) from None
        return {"resourceVersion": int(row[0]), "objects": objects}

    def initialize(self, snapshot: dict[str, Any]) -> None:
        """Store a whole :meth:`~observatory.lab.store.Store.snapshot` (a freshly loaded scenario) in one
        transaction, replacing whatever the database held."""
        try:
            with self._transaction():
                self._db.execute("DELETE FROM objects")
                _insert_snapshot(self._db, snapshot)
        except sqlite3.Error as exc:
            raise StateError(f"{self.path}: cannot write the lab state database ({exc}).") from None

    def record(self, change: Change) -> None:
        """Commit one store change: the object upserted (or deleted) and the RV counter, in one transaction.

        The store's ``journal``; it runs before the change is visible to anyone. Raises sqlite3.Error when the
        write did not reach the database (then nothing of it did).
        """
        resource, namespace, name = change.key
        with self._transaction():
            if change.type == "DELETED":
                self._db.execute("DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?",
                                 (resource, namespace, name))
            else:
                self._db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?)",
                                 (resource, namespace, name, json.dumps(change.obj, separators=(",", ":"))))
            self._db.execute("UPDATE counters SET value = ? WHERE name = ?", (change.rv, _RV))
        self.writes += 1

    @property
    def in_transaction(self) -> bool:
        """A transaction is open (only ever inside :meth:`record` or :meth:`initialize`)."""
        return self._db.in_transaction

    def stored_resource_version(self) -> int | None:
        """The committed resourceVersion counter (None before :meth:`initialize`)."""
        row = self._db.execute("SELECT value FROM counters WHERE name = ?", (_RV,)).fetchone()
        return None if row is None else int(row[0])

    def attach(self, store: Store) -> None:
        """Make this database the store's write-ahead journal: every later commit goes through :meth:`record`."""
        store.journal = self.record

    def close(self) -> None:
        """Checkpoint and close (a clean stop leaves the WAL folded into the database file)."""
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

    @contextlib.contextmanager
    def _transaction(self) -> Any:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


def _file_kind(path: Path) -> Literal["missing", "sqlite", "json", "other"]:
    """What is at ``path``: nothing (or an empty file), an SQLite database, a JSON document, or something else."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return "missing"
    except IsADirectoryError:
        return "other"
    except OSError as exc:
        raise StateError(f"{path}: cannot read the lab state file ({exc.strerror or exc}).") from None
    if not head:
        return "missing"
    if head == SQLITE_HEADER:
        return "sqlite"
    return "json" if head.lstrip()[:1] == b"{" else "other"


def _configure(db: sqlite3.Connection, path: Path, synchronous: Synchronous) -> None:
    """Take the file for this lab alone, in WAL mode with the chosen ``synchronous``; create the tables if new."""
    try:
        db.execute("PRAGMA locking_mode = EXCLUSIVE")
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        db.execute(f"PRAGMA synchronous = {'FULL' if synchronous == 'full' else 'NORMAL'}")
        # The exclusive lock is taken by the first write and held until close.
        db.execute("BEGIN IMMEDIATE")
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id == 0 and not tables:
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise StateError(
                f"{path} is in use by another running lab (each --state database belongs to one lab at a time). "
                f"Stop that lab first, or give this one another --state path.") from None
        raise _corrupt(path, exc) from None
    except sqlite3.Error as exc:
        raise _corrupt(path, exc) from None
    if mode.lower() != "wal":
        raise StateError(f"{path}: the file system refused SQLite's WAL mode (journal_mode is {mode}); the lab "
                         f"needs it to keep every acknowledged write. Put --state on a local disk.")


def _check(db: sqlite3.Connection, path: Path) -> None:
    """Refuse another program's database, a newer layout, or a database that fails SQLite's ``quick_check``."""
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise StateError(f"{path} is an SQLite database, but not a lab state database (another program's "
                             f"file?). Give --state a new path, or move that file away.")
        if version > SCHEMA_VERSION:
            raise StateError(f"{path} was written by a newer observatory (state layout {version}; this version "
                             f"reads {SCHEMA_VERSION}). Start the lab with that version, or give --state a new path.")
        problems = [r[0] for r in db.execute("PRAGMA quick_check")]
    except sqlite3.Error as exc:
        raise _corrupt(path, exc) from None
    if problems != ["ok"]:
        raise _corrupt(path, "; ".join(problems[:3]))


def _unwritable(path: Path) -> str | None:
    """Why an existing ``path`` or its existing folder cannot be written (a read-only mount, no permission), or
    None. SQLite opens such a file read-only and then reports "disk I/O error" at the first write, which would
    read as a damaged database."""
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is read-only"
    folder = path.parent
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is read-only"
    return None


def _corrupt(path: Path, why: object) -> StateError:
    return StateError(f"{path}: the lab state database is damaged and cannot be read ({why}). Keep the file for "
                      f"inspection and start the lab with another --state path (or none).")


def _insert_snapshot(db: sqlite3.Connection, snapshot: dict[str, Any]) -> None:
    """Insert every object of ``snapshot`` and set the RV counter (inside the caller's transaction)."""
    rows = []
    for resource, objs in snapshot["objects"].items():
        for obj in objs:
            meta = obj["metadata"]
            rows.append((resource, meta.get("namespace", ""), meta["name"], json.dumps(obj, separators=(",", ":"))))
    db.executemany("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?)", rows)
    db.execute("INSERT OR REPLACE INTO counters VALUES (?, ?)", (_RV, int(snapshot["resourceVersion"])))


def _read_json_snapshot(path: Path) -> dict[str, Any]:
    """An earlier lab's JSON state file, checked for its shape. Raises StateError."""
    try:
        snap = json.loads(path.read_text(encoding="utf-8"))
        rv = snap["resourceVersion"]
        if isinstance(rv, bool) or not isinstance(rv, int) or rv < 0 or not isinstance(snap["objects"], dict):
            raise ValueError("resourceVersion is not a count, or objects is not a map")
        for resource, objs in snap["objects"].items():
            if not isinstance(resource, str) or not isinstance(objs, list):
                raise ValueError(f"objects.{resource} is not a list")
            for obj in objs:
                if not isinstance(obj["metadata"]["name"], str):
                    raise ValueError(f"an object of {resource} has no metadata.name")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StateError(f"{path} looks like an earlier lab's JSON state file, but it cannot be read ({exc}). "
                         f"Give --state a new path, or move that file away.") from None
    return snap


def migrate_json(path: Path) -> Path:
    """Replace an earlier lab's JSON state file at ``path`` by a database with the same objects and resourceVersion.

    The JSON file is copied to ``PATH.json-backup`` first (``PATH.json-backup.N`` when that is taken); the database
    is built beside it and renamed over ``path`` in one step, so a crash midway leaves either the JSON file (migrated
    again at the next start) or the finished database. Returns the backup's path. Raises StateError.
    """
    snap = _read_json_snapshot(path)
    backup = path.with_name(path.name + ".json-backup")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.json-backup.{n}")
        n += 1
    building = path.with_name(f".{path.name}.migrating")
    try:
        shutil.copy2(path, backup)
        for leftover in (building, Path(f"{building}-journal")):
            leftover.unlink(missing_ok=True)
        db = sqlite3.connect(building, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous = FULL")
            db.execute("BEGIN")
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            _insert_snapshot(db, snap)
            db.execute("COMMIT")
        finally:
            db.close()
        os.replace(building, path)
        _fsync_dir(path.parent)
    except (OSError, sqlite3.Error) as exc:
        with contextlib.suppress(OSError):
            building.unlink(missing_ok=True)
        raise StateError(f"{path}: cannot migrate the earlier lab's JSON state file to a database ({exc}). The file "
                         f"is unchanged.") from None
    return backup


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX: fsync the directory)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
