"""Lab scenarios: YAML files of ordinary Kubernetes manifests that the lab creates before it serves.

A scenario is a multi-document YAML file, like one you would give ``kubectl apply -f``. The shipped ones live next
to this module (``pair``, ``manual-binding``, ``refusals``, ``gated``, ``busy``, ``affinity``, ``spread``,
``preemption``; :func:`list_scenarios` describes them); a scenario can also be any file path.

Header document
    The first document may be a header, recognised by ``kind: Scenario`` and no ``apiVersion``; it is not a
    Kubernetes object and is never returned::

        kind: Scenario
        description: pair plus sched-lab/manual, a pod nobody schedules.   # one line, required
        extends: pair                                                      # optional

    ``extends`` names another scenario (a shipped name, or a path relative to this file) whose manifests come
    first; this file's objects follow, and an object with the same apiVersion, kind, namespace and name replaces
    the inherited one. Chains are allowed, cycles are an error. A file without a header is a scenario too, with an
    empty description. Every shipped file has a header.

What the loader changes
    * Manifests come back in dependency order: Namespaces, then Nodes, then everything else, each group in file
      order (inherited objects before the extending file's).
    * ``metadata.namespace`` defaults to ``default`` for every kind except the cluster-scoped Namespace, Node,
      PersistentVolume and StorageClass.
    * ``metadata.uid``, ``resourceVersion``, ``creationTimestamp``, ``generation``, ``selfLink`` and
      ``managedFields`` are dropped (a real API server refuses objects to create that carry them), so
      ``kubectl get -o yaml`` output loads. The lab store assigns them on create.
    * Missing ``status.conditions[*].lastTransitionTime`` (and, for Nodes, ``lastHeartbeatTime``) are stamped with
      the load time (``now``), as RFC 3339 UTC seconds. Shipped files leave them out on purpose.
    * YAML timestamps stay strings (Kubernetes JSON has no date type), and a repeated mapping key is an error, as
      it is for kubectl.

Errors
    Any bad input raises :class:`ScenarioError`, never another exception. Its message names the file and the
    1-based document number (counting the header and empty documents, as ``---`` separators do) and says what is
    wrong in one sentence, for example ``.../bad.yaml: document 3: metadata.name is missing.``

Generated scenarios
    Names of the form ``<prefix>:<arguments>`` go to a generator registered with :func:`register_generator`. A
    generator returns manifests, which get the same checks and ordering as a file's. Importing this package
    registers ``scale`` (``scale:nodes=N,pods=M[,seed=S]``, see :mod:`observatory.lab.scenarios.scale`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

import yaml
from pydantic import ValidationError

from observatory.lab.scenarios.header import HEADER_KIND, ScenarioHeader, header_problem

__all__ = ["ScenarioError", "ScenarioInfo", "list_scenarios", "load_scenario", "register_generator"]

SCENARIO_DIR = Path(__file__).resolve().parent
"""Where the shipped ``*.yaml`` scenarios live (inside the installed package)."""

_CLUSTER_SCOPED = frozenset({"Namespace", "Node", "PersistentVolume", "StorageClass"})
_ORDER = {"Namespace": 0, "Node": 1}
_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "selfLink", "managedFields")

Generator = Callable[[str], list[dict[str, Any]]]
"""Builds new manifest dicts from the text after ``<prefix>:`` (the loader normalises them in place); raises
:class:`ScenarioError` or ValueError on bad arguments."""

_GENERATORS: dict[str, Generator] = {}


class ScenarioError(Exception):
    """A scenario that cannot be loaded; ``str(err)`` is one readable sentence naming the file and document.

    ``source`` is the file path (or the generated name), ``document`` the 1-based document number or None when the
    problem is the whole file, ``reason`` the sentence without the location.
    """

    def __init__(self, source: str | os.PathLike[str], reason: str, document: int | None = None) -> None:
        self.source = str(source)
        self.document = document
        self.reason = reason
        where = f"{self.source}: document {document}" if document is not None else self.source
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class ScenarioInfo:
    """One shipped scenario as the listing shows it."""

    name: str
    description: str
    path: Path


def register_generator(prefix: str, generator: Generator) -> None:
    """Route scenario names ``<prefix>:<arguments>`` to ``generator(arguments)``.

    The hook for generated scenarios such as ``scale:nodes=N,pods=M``. Registering a prefix twice replaces it.
    """
    if not prefix or ":" in prefix or "/" in prefix:
        raise ValueError(f"a generator prefix must be a non-empty word without ':' or '/', not {prefix!r}")
    _GENERATORS[prefix] = generator


def list_scenarios() -> list[ScenarioInfo]:
    """The shipped scenarios, sorted by name, with the description from each file's header.

    Raises :class:`ScenarioError` if a shipped file's header cannot be read (a packaging bug).
    """
    infos = []
    for path in sorted(SCENARIO_DIR.glob("*.yaml")):
        header = _read_header(path)
        infos.append(ScenarioInfo(path.stem, header.get("description", "") if header else "", path))
    return sorted(infos, key=lambda info: info.name)


def load_scenario(name_or_path: str | os.PathLike[str], *, now: datetime | None = None) -> list[dict[str, Any]]:
    """Load a scenario by shipped name, file path or generated name, with ``extends`` resolved.

    Returns new plain dicts (JSON-serialisable) in dependency order: Namespaces, Nodes, then the rest. ``now``
    (default: the current UTC time) stamps missing condition times. Raises :class:`ScenarioError` for anything
    wrong with the input: unknown name, missing file, YAML syntax, a document that is not a Kubernetes object.
    """
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with _gc_paused():
        if isinstance(name_or_path, os.PathLike):
            manifests = _load_file(Path(name_or_path).expanduser(), chain=())
        else:
            manifests = _resolve(str(name_or_path), base=None, chain=())
        for doc in manifests:
            _stamp_conditions(doc, stamp)
        return sorted(manifests, key=lambda doc: _ORDER.get(doc["kind"], 2))


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector while a scenario is built: with tens of thousands of new objects alive
    (``scale:nodes=1000,pods=50000``), each full collection walks them all again, which costs more than the load
    itself. The manifests hold no reference cycles; whatever garbage the YAML parser leaves is collected as usual
    once the collector runs again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --- resolution ---------------------------------------------------------------------------------------------------


def _resolve(spec: str, base: Path | None, chain: tuple[str, ...]) -> list[dict[str, Any]]:
    """Manifests for a name, path or generated name; ``base`` is the directory relative paths start from."""
    prefix, colon, arguments = spec.partition(":")
    if colon and prefix in _GENERATORS:
        return _generate(spec, prefix, arguments)
    if _looks_like_path(spec):
        path = Path(spec).expanduser()
        if base is not None and not path.is_absolute():
            path = base / path
        return _load_file(path, chain)
    shipped = SCENARIO_DIR / f"{spec}.yaml"
    if spec and shipped.is_file():
        return _load_file(shipped, chain)
    available = ", ".join(p.stem for p in sorted(SCENARIO_DIR.glob("*.yaml"))) or "none"
    if colon:
        generators = ", ".join(sorted(_GENERATORS)) or "none registered yet"
        raise ScenarioError(spec, f"unknown scenario generator {prefix!r} (generators: {generators}; "
                                  f"scenarios: {available}).")
    raise ScenarioError(spec, f"unknown scenario {spec!r}; available scenarios: {available}.")


def _looks_like_path(spec: str) -> bool:
    return "/" in spec or os.sep in spec or spec.endswith((".yaml", ".yml")) or spec.startswith("~")


def _generate(spec: str, prefix: str, arguments: str) -> list[dict[str, Any]]:
    try:
        docs = _GENERATORS[prefix](arguments)
    except ScenarioError:
        raise
    except (ValueError, TypeError, KeyError) as err:
        raise ScenarioError(spec, f"cannot generate the scenario: {err}.") from None
    if not isinstance(docs, list):
        raise ScenarioError(spec, f"the {prefix!r} generator returned {type(docs).__name__}, not a list.")
    return _check_documents(spec, list(enumerate(docs, start=1)))


def _load_file(path: Path, chain: tuple[str, ...]) -> list[dict[str, Any]]:
    """Parse, check and merge one file and everything it extends."""
    try:
        key = str(path.resolve())
    except (OSError, RuntimeError):  # a symlink loop, an unreadable directory
        key = str(path.absolute())
    if key in chain:
        cycle = " -> ".join(Path(p).name for p in (*chain[chain.index(key):], key))
        raise ScenarioError(path, f"extends forms a cycle ({cycle}).", 1)
    numbered = list(enumerate(_parse(path), start=1))
    header: dict[str, Any] | None = None
    if numbered and _is_header(numbered[0][1]):
        header = _check_header(path, numbered.pop(0)[1])
    for number, doc in numbered:
        if _is_header(doc):
            raise ScenarioError(path, "a 'kind: Scenario' header must be the first document.", number)
    own = _check_documents(path, [(n, d) for n, d in numbered if d is not None])
    if header is None or "extends" not in header:
        return own
    extends = header["extends"]
    try:
        inherited = _resolve(extends, base=path.parent, chain=(*chain, key))
    except ScenarioError as err:
        if err.document is None:  # unknown name or missing file: say which file asked for it
            target = "" if err.source == extends else f" {err.source}"
            raise ScenarioError(path, f"extends{target}: {err.reason}", 1) from None
        raise
    return _merge(inherited, own)


def _merge(inherited: list[dict[str, Any]], own: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Inherited objects first; an own object with the same identity replaces the inherited one in place."""
    merged = {_identity(doc): doc for doc in inherited}
    for doc in own:
        merged[_identity(doc)] = doc
    return list(merged.values())


def _identity(doc: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = doc["metadata"]
    return (doc["apiVersion"], doc["kind"], meta.get("namespace", ""), meta["name"])


# --- parsing ------------------------------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as strings and refuses repeated mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                ident = (key_node.tag, key_node.value)
                if ident in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"found duplicate key {key_node.value!r}", key_node.start_mark)
                seen.add(ident)
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(path, "the file does not exist.") from None
    except IsADirectoryError:
        raise ScenarioError(path, "this is a directory, not a scenario file.") from None
    except OSError as err:
        raise ScenarioError(path, f"the file cannot be read ({err.strerror or err}).") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ScenarioError(path, f"the file is not UTF-8 text (bad byte at offset {err.start}).") from None


def _parse(path: Path) -> list[Any]:
    """All documents of a file, ``None`` for empty ones, or ScenarioError at the first broken one."""
    text = _read_text(path)
    docs: list[Any] = []
    try:
        for doc in yaml.load_all(text, Loader=_Loader):
            docs.append(doc)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = err.problem or err.context or "invalid YAML"
        kind = "YAML error" if isinstance(err, yaml.constructor.ConstructorError) else "YAML syntax error"
        raise ScenarioError(path, f"{kind}{where}: {problem}.", len(docs) + 1) from None
    except (yaml.YAMLError, RecursionError, ValueError) as err:
        raise ScenarioError(path, f"the YAML cannot be read: {err}.", len(docs) + 1) from None
    return docs


def _read_header(path: Path) -> dict[str, Any] | None:
    """The header of a file, reading only as far as the first document."""
    text = _read_text(path)
    try:
        first = next(iter(yaml.load_all(text, Loader=_Loader)), None)
    except (yaml.YAMLError, RecursionError, ValueError) as err:
        raise ScenarioError(path, f"the header cannot be read: {err}.", 1) from None
    return _check_header(path, first) if _is_header(first) else None


def _is_header(doc: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(doc, dict) and doc.get("kind") == HEADER_KIND and "apiVersion" not in doc


def _check_header(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    try:
        checked = ScenarioHeader.model_validate(header)
    except ValidationError as exc:
        raise ScenarioError(path, header_problem(exc), 1) from None
    return checked.model_dump(exclude_unset=True)


# --- checks -------------------------------------------------------------------------------------------------------


def _check_documents(source: str | Path, numbered: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    """Check that each document is a Kubernetes object; normalise it; refuse repeats within one source."""
    docs: list[dict[str, Any]] = []
    first_seen: dict[tuple[str, str, str, str], int] = {}
    for number, doc in numbered:
        _check_object(source, number, doc)
        meta = doc["metadata"]
        if doc["kind"] not in _CLUSTER_SCOPED:
            meta.setdefault("namespace", "default")
        for field in _SERVER_FIELDS:
            meta.pop(field, None)
        ident = _identity(doc)
        if ident in first_seen:
            where = f"{doc['kind']} {meta.get('namespace', '') + '/' if meta.get('namespace') else ''}{meta['name']}"
            raise ScenarioError(source, f"{where} is already defined by document {first_seen[ident]}.", number)
        first_seen[ident] = number
        docs.append(doc)
    return docs


def _check_object(source: str | Path, number: int, doc: Any) -> None:
    def fail(reason: str) -> None:
        raise ScenarioError(source, reason, number)

    if not isinstance(doc, dict):
        fail(f"the document is {_a(doc)}, not a mapping (a Kubernetes object).")
    for field in ("apiVersion", "kind"):
        if field not in doc or doc[field] is None:
            fail(f"{field} is missing.")
        if not isinstance(doc[field], str) or not doc[field].strip():
            fail(f"{field} must be a non-empty string, not {_a(doc[field])}.")
    meta = doc.get("metadata")
    if meta is None:
        fail("metadata is missing (every object needs metadata.name).")
    if not isinstance(meta, dict):
        fail(f"metadata must be a mapping, not {_a(meta)}.")
    if meta.get("name") is None:
        fail("metadata.name is missing.")
    if not isinstance(meta["name"], str) or not meta["name"]:
        fail(f"metadata.name must be a non-empty string, not {_a(meta['name'])}.")
    namespace = meta.get("namespace")
    if namespace is not None and (not isinstance(namespace, str) or not namespace):
        fail(f"metadata.namespace must be a non-empty string, not {_a(namespace)}.")
    try:
        json.dumps(doc, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        fail(f"the object cannot be expressed as JSON ({err}).")


def _a(value: Any) -> str:
    """A short description of a value's type for messages: 'a list', 'a number', 'empty text'."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return "empty text" if not value else f"the text {value!r}"
    return {list: "a list", dict: "a mapping", type(None): "empty"}.get(type(value), type(value).__name__)


def _stamp_conditions(doc: dict[str, Any], stamp: str) -> None:
    status = doc.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return
    fields = ("lastHeartbeatTime", "lastTransitionTime") if doc["kind"] == "Node" else ("lastTransitionTime",)
    for condition in conditions:
        if isinstance(condition, dict):
            for field in fields:
                if condition.get(field) is None:
                    condition[field] = stamp


def _register_shipped_generators() -> None:
    from observatory.lab.scenarios import scale

    register_generator("scale", scale.generate)


_register_shipped_generators()
