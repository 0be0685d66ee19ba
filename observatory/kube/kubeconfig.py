"""Reading kubeconfig files and merging several the way kubectl merges them (client-go ``clientcmd``).

:func:`load_kubeconfig` reads each file (YAML; an empty file counts as an empty configuration) and merges them in
order, as ``ClientConfigLoadingRules.Load`` does:

* ``clusters``, ``users`` and ``contexts``: per name, the **first** file that defines it wins (the whole entry,
  never a field-by-field mix); a name defined twice in one file is an error, as it is for kubectl
  (``duplicate name "x" in list``);
* ``current-context``: the first file with a non-empty one wins;
* relative paths are resolved against the folder of the file that names them (``ResolveLocalPaths``):
  ``certificate-authority`` of a cluster, ``client-certificate``, ``client-key`` and ``tokenFile`` of a user, and an
  exec plugin's ``command`` when it contains a ``/`` (a bare name is looked up on ``PATH``). Like client-go, no
  ``~`` expansion.

:meth:`MergedKubeconfig.view` is what ``kubectl config view -o json --raw`` prints (names sorted, paths as written);
:meth:`MergedKubeconfig.resolved` gives one entry with its paths made absolute, for connecting. Failures are
:class:`~observatory.kube.connect.ConnectError`-ready: :class:`KubeconfigError` carries one sentence and a reason.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "SECTIONS",
    "KubeconfigError",
    "MergedKubeconfig",
    "check_credential_sources",
    "load_kubeconfig",
    "read_kubeconfig",
]

SECTIONS = {"clusters": "cluster", "users": "user", "contexts": "context"}
"""Each named list and the key of an entry's body."""

_PATH_KEYS = {"clusters": ("certificate-authority",), "users": ("client-certificate", "client-key", "tokenFile")}


class KubeconfigError(Exception):
    """A kubeconfig file that cannot be read or merged, or an entry whose credential data or files are unusable.
    ``str()`` is one sentence naming the file; ``reason`` is ``"missing-file"``, ``"unparsable"``,
    ``"bad-certificate"`` or ``"invalid"`` (an unreadable ``tokenFile``)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class MergedKubeconfig:
    """Several kubeconfig files merged as kubectl merges them (module docstring).

    ``files`` in merge order; ``entries[section][name]`` is the winning entry's body as written (``section`` one of
    :data:`SECTIONS`), in first-definition order; ``origins[section][name]`` the file it came from;
    ``current_context`` the first non-empty one ("" when no file sets one); ``documents`` each file's parsed
    mapping (None for an empty file)."""

    files: tuple[str, ...]
    entries: dict[str, dict[str, dict[str, Any]]]
    origins: dict[str, dict[str, str]]
    current_context: str
    documents: tuple[dict[str, Any] | None, ...] = field(repr=False, default=())

    @property
    def empty(self) -> bool:
        """No file defines anything (every file is empty)."""
        return not any(self.documents)

    def names(self, section: str) -> tuple[str, ...]:
        return tuple(self.entries[section])

    def get(self, section: str, name: str) -> dict[str, Any] | None:
        """The body of entry ``name`` as written, or None."""
        return self.entries[section].get(name)

    def resolved(self, section: str, name: str) -> dict[str, Any] | None:
        """A copy of the body of entry ``name`` with its relative paths made absolute against the folder of the file
        that defines it (module docstring), or None."""
        body = self.get(section, name)
        if body is None:
            return None
        base = os.path.dirname(os.path.abspath(self.origins[section][name]))
        out = dict(body)
        for key in _PATH_KEYS.get(section, ()):
            out[key] = _resolve(out.get(key), base)
        if section == "users" and isinstance(out.get("exec"), dict):
            command = out["exec"].get("command")
            if isinstance(command, str) and "/" in command:
                out["exec"] = {**out["exec"], "command": _resolve(command, base)}
        return {k: v for k, v in out.items() if v is not None}

    def view(self, minify_context: str | None = None) -> dict[str, Any]:
        """The merged configuration in the shape ``kubectl config view -o json --raw`` prints: ``clusters``,
        ``users`` and ``contexts`` sorted by name with paths as written, and ``current-context``. With
        ``minify_context`` (``--minify``), only that context and the cluster and user it names."""
        keep: dict[str, set[str]] | None = None
        current = self.current_context
        if minify_context is not None:
            ctx = self.get("contexts", minify_context) or {}
            keep = {"contexts": {minify_context}, "clusters": {str(ctx.get("cluster") or "")},
                    "users": {str(ctx.get("user") or "")}}
            current = minify_context
        out: dict[str, Any] = {}
        for section, body_key in SECTIONS.items():
            out[section] = [{"name": name, body_key: self.entries[section][name]}
                            for name in sorted(self.entries[section]) if keep is None or name in keep[section]]
        out["current-context"] = current
        return out


def load_kubeconfig(files: Sequence[str]) -> MergedKubeconfig:
    """Read and merge ``files`` in order (module docstring). Raises :class:`KubeconfigError` for a file that is
    missing, unreadable, not YAML, not a kubeconfig mapping, or that defines a name twice in one list."""
    docs = tuple(read_kubeconfig(path) for path in files)
    entries: dict[str, dict[str, dict[str, Any]]] = {section: {} for section in SECTIONS}
    origins: dict[str, dict[str, str]] = {section: {} for section in SECTIONS}
    current = ""
    for path, doc in zip(files, docs, strict=True):
        if not doc:
            continue
        if not current and doc.get("current-context"):
            current = str(doc["current-context"])
        for section, body_key in SECTIONS.items():
            for entry in doc.get(section) or []:
                name = entry["name"]
                if name not in entries[section]:
                    body = entry.get(body_key)
                    entries[section][name] = body if isinstance(body, dict) else {}
                    origins[section][name] = path
    return MergedKubeconfig(files=tuple(files), entries=entries, origins=origins, current_context=current,
                            documents=docs)


def read_kubeconfig(path: str) -> dict[str, Any] | None:
    """One file parsed as YAML: a mapping, or None for an empty file. Raises :class:`KubeconfigError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KubeconfigError(f"Cannot load the kubeconfig: the file {path} does not exist.", "missing-file") from None
    except IsADirectoryError:
        raise KubeconfigError(f"Cannot load the kubeconfig: {path} is a directory, not a file.",
                              "missing-file") from None
    except (OSError, UnicodeDecodeError) as exc:
        detail = getattr(exc, "strerror", None) or "it is not UTF-8 text"
        raise KubeconfigError(f"Cannot read the kubeconfig {path}: {detail}.", "missing-file") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "unreadable"
        raise KubeconfigError(f"Cannot load the kubeconfig {path}: it is not valid YAML ({problem}{where}).",
                              "unparsable") from None
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise KubeconfigError(f"Cannot load the kubeconfig {path}: it is YAML but not a kubeconfig (a mapping with "
                              f"clusters, contexts and users was expected, not a {type(doc).__name__}).", "unparsable")
    for section in SECTIONS:
        entries = doc.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str)
                                                    for e in entries):
            raise KubeconfigError(f"Cannot load the kubeconfig {path}: its {section} must be a list of entries, "
                                  "each with a name.", "unparsable")
        seen: set[str] = set()
        for entry in entries:
            if entry["name"] in seen:
                raise KubeconfigError(f'Cannot load the kubeconfig {path}: its {section} list the name '
                                      f'"{entry["name"]}" twice (kubectl refuses that too).', "unparsable")
            seen.add(entry["name"])
    return doc


def check_credential_sources(cluster_name: str, cluster: dict[str, Any], user_name: str,
                             user: dict[str, Any] | None, where: str) -> None:
    """Check what a context's resolved cluster and user point at, before anything is loaded: ``*-data`` values
    must be base64; the ``certificate-authority``, ``client-certificate`` and ``client-key`` files (read only for an
    ``https://`` server, as kubernetes-asyncio does) and a ``tokenFile`` must be readable files. ``where`` names the
    context and kubeconfig in the message. Raises :class:`KubeconfigError` (``"bad-certificate"`` or
    ``"invalid"``)."""
    user = user or {}
    cluster_owner, user_owner = f'cluster "{cluster_name}"', f'user "{user_name}"'
    _check_base64(cluster, ("certificate-authority-data",), cluster_owner, where)
    _check_base64(user, ("client-certificate-data", "client-key-data"), user_owner, where)
    if str(cluster.get("server") or "").startswith("https"):
        _check_file(cluster, "certificate-authority", cluster_owner, where)
        for key in ("client-certificate", "client-key"):
            _check_file(user, key, user_owner, where)
    _check_file(user, "tokenFile", user_owner, where)


def _check_base64(obj: dict[str, Any], keys: tuple[str, ...], owner: str, where: str) -> None:
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        try:
            base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raise KubeconfigError(f"The {key} of {owner} ({where}) is not valid base64.", "bad-certificate") from None


def _check_file(obj: dict[str, Any], key: str, owner: str, where: str) -> None:
    path = obj.get(key)
    if not isinstance(path, str) or not path or obj.get(f"{key}-data"):
        return
    problem = None
    if not os.path.exists(path):
        problem = "does not exist"
    elif os.path.isdir(path):
        problem = "is a directory, not a file"
    else:
        try:
            with open(path, "rb") as handle:
                handle.read(1)
        except OSError as exc:
            problem = f"cannot be read ({exc.strerror or exc})"
    if problem:
        raise KubeconfigError(f"The {key} file {path} of {owner} ({where}) {problem}.",
                              "invalid" if key == "tokenFile" else "bad-certificate")


def _resolve(value: Any, base: str) -> Any:
    if isinstance(value, str) and value and not os.path.isabs(value):
        return os.path.join(base, value)
    return value
