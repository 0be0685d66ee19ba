"""``audit.k8s.io/v1`` Policy: reading a policy file and deciding each request's audit level, as kube-apiserver does.

Reading follows ``staging/src/k8s.io/apiserver/pkg/audit/policy/reader.go`` and
``pkg/apis/audit/validation/validation.go``: the file is YAML or JSON; ``apiVersion`` must be ``audit.k8s.io/v1``
and ``kind`` ``Policy``; an unknown field is dropped with a warning (upstream's strict decoding falls back to lenient
decoding, ``Audit policy contains errors, falling back to lenient decoding``); every validation error is collected
(``utilerrors.NewAggregate``: one error's text, or ``[a, b]``), and a policy without rules is refused with
``loaded illegal policy with 0 rules``. kube-apiserver wraps the error as ``loading audit policy file: <error>: from
file <path>`` and exits. The exact validation texts (``validation.go``):

- ``rules[0].level: Required value``; ``rules[0].level: Unsupported value: "Bogus": supported values:
  "None", "Metadata", "Request", "RequestResponse"``;
- ``rules[0].nonResourceURLs[0]: Invalid value: "metrics": non-resource URL rules must begin with a '/'
  character``;
- ``... Invalid value: "/a*/b": non-resource URL wildcards '*' must be the final character of the rule``;
- ``rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and
  non-resource URLs`` (a rule with ``nonResourceURLs`` and ``resources`` or ``namespaces``);
- ``rules[0].resources.group: Invalid value: "Apps": <NameIsDNSSubdomain messages joined by ",">``;
- ``rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one
  resource``;
- ``rules[0].omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,
  ResponseComplete,Panic`` (``omitStages[0]`` for the policy's own).

Matching is ``checker.go``'s ``EvaluatePolicyRule``: the first rule that matches decides; none matching is level
``None`` (``DefaultAuditLevel``) with the policy's ``omitStages``. A rule's ``omitStages`` is the union of its own and
the policy's; its ``omitManagedFields`` (when set) overrides the policy's. A rule matches when each list it sets
matches: ``users`` (the user name), ``userGroups`` (any group), ``verbs``; then, when it sets ``namespaces`` or
``resources``, only resource requests, in one of ``namespaces`` ("" is a cluster-scoped request), of one of
``resources`` (same group; no resources = every resource of the group; ``*``, ``resource``, ``resource/sub``,
``*/sub``, ``resource/*`` (which also matches the resource itself); limited to ``resourceNames`` when given);
otherwise, when it sets ``nonResourceURLs``, only non-resource requests whose path is one of them (``*``, exact, or a
prefix ending in ``*``).

Without ``--audit-policy-file`` kube-apiserver audits nothing (:data:`NOTHING`: every request at level None). The lab
instead audits with :data:`DEFAULT_POLICY` unless given a policy file.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from observatory.lab.audit.types import UserInfo
from observatory.lab.requestinfo import Attributes
from observatory.lab.selectors import go_quote
from observatory.lab.validation import field
from observatory.lab.validation.names import name_is_dns_subdomain

__all__ = ["DEFAULT_POLICY", "DEFAULT_POLICY_YAML", "LEVELS", "NOTHING", "STAGES", "GroupResources", "Policy",
           "PolicyError", "PolicyRule", "RequestAuditConfig", "evaluate", "load_policy_file", "parse_policy"]

log = logging.getLogger(__name__)

LEVELS = ("None", "Metadata", "Request", "RequestResponse")
"""The audit levels, each recording more than the one before (``types.go``: ``Level``)."""
STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
"""``validOmitStages``, in upstream's order (the order of ``allowed stages are ...``)."""
API_VERSION = "audit.k8s.io/v1"


class PolicyError(ValueError):
    """A policy file kube-apiserver would refuse; the message is upstream's (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class GroupResources:
    """``GroupResources``: ``group`` ("" is core), ``resources`` (empty: all of the group), ``resource_names``."""

    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """``PolicyRule``; an empty tuple means the rule does not restrict by that field."""

    level: str
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: tuple[str, ...] = ()
    omit_managed_fields: bool | None = None

    def matches(self, attrs: Attributes, user: UserInfo | None) -> bool:
        """``ruleMatches`` (``checker.go``)."""
        if self.users and (user is None or user.username not in self.users):
            return False
        if self.user_groups and (user is None or not any(g in self.user_groups for g in user.groups)):
            return False
        if self.verbs and attrs.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(attrs)
        if self.non_resource_urls:
            return not attrs.resource_request and any(_path_matches(attrs.path, spec)
                                                      for spec in self.non_resource_urls)
        return True

    def _matches_resource(self, attrs: Attributes) -> bool:
        if not attrs.resource_request:
            return False
        if self.namespaces and attrs.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        sub = attrs.subresource
        combined = f"{attrs.resource}/{sub}" if sub else attrs.resource
        for gr in self.resources:
            if gr.group != attrs.group:
                continue
            if not gr.resources:
                return True
            if gr.resource_names and attrs.name not in gr.resource_names:
                continue
            for res in gr.resources:
                if res in ("*", combined):
                    return True
                if sub and res.startswith("*/") and sub == res.lstrip("*/"):
                    return True
                if res.endswith("/*") and attrs.resource == res.rstrip("/*"):
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    """``pathMatches``: ``*``, the exact path, or a prefix when the spec ends in ``*``."""
    return spec in ("*", path) or (spec.endswith("*") and path.startswith(spec.rstrip("*")))


@dataclass(frozen=True, slots=True)
class Policy:
    """``Policy``: ``rules`` in order, the policy-wide ``omitStages`` and ``omitManagedFields``."""

    rules: tuple[PolicyRule, ...]
    omit_stages: tuple[str, ...] = ()
    omit_managed_fields: bool = False


@dataclass(frozen=True, slots=True)
class RequestAuditConfig:
    """What the policy decided for one request: its level, the stages not to emit, whether to drop managedFields."""

    level: str
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False


def evaluate(policy: Policy, attrs: Attributes, user: UserInfo | None) -> RequestAuditConfig:
    """``EvaluatePolicyRule``: the first matching rule's level, its stages united with the policy's, its
    ``omitManagedFields`` or else the policy's; no match is level None with the policy's stages."""
    for rule in policy.rules:
        if rule.matches(attrs, user):
            omit = policy.omit_managed_fields if rule.omit_managed_fields is None else rule.omit_managed_fields
            return RequestAuditConfig(rule.level, frozenset(policy.omit_stages) | frozenset(rule.omit_stages), omit)
    return RequestAuditConfig("None", frozenset(policy.omit_stages), policy.omit_managed_fields)


NOTHING = Policy(rules=())
"""kube-apiserver without ``--audit-policy-file``: no request is audited."""

DEFAULT_POLICY_YAML = """\
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
# Secrets, ConfigMaps and TokenReviews: who wrote them, never what (their bodies hold credentials).
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - group: ""
    resources: [secrets, configmaps]
  - group: authentication.k8s.io
    resources: [tokenreviews]
# Reads are not audited.
- level: None
  verbs: [get, list, watch]
# Writes to pods, their binding and status, Bindings and nodes: the request and the object written.
- level: RequestResponse
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - group: ""
    resources: [pods, pods/binding, pods/status, bindings, nodes, nodes/status]
# Every other write: who, what and the answer.
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
"""
"""The lab's default policy, as a file a user could pass to ``--audit-policy-file`` (or to kube-apiserver)."""


def parse_policy(doc: Any, where: str = "") -> Policy:
    """A decoded policy document (YAML/JSON value) as a :class:`Policy`. Raises :class:`PolicyError` with
    upstream's text (module docstring), prefixed ``failed decoding:`` when it is not a Policy object at all."""
    if not isinstance(doc, dict):
        raise PolicyError("failed decoding: the policy is not an object (an audit.k8s.io/v1 Policy)")
    kind, version = doc.get("kind"), doc.get("apiVersion")
    if not kind or not version:
        missing = "kind" if not kind else "apiVersion"
        raise PolicyError(f"failed decoding: Object '{missing}' is missing in '{_short(doc)}'")
    if version != API_VERSION or kind != "Policy":
        raise PolicyError(f'failed decoding: no kind "{kind}" is registered for version "{version}" '
                          f'(the lab reads {API_VERSION} Policy)')
    unknown = [f"unknown field \"{k}\"" for k in doc if k not in _POLICY_FIELDS]
    causes: list[field.Cause] = []
    omit = _strings(doc, "omitStages", "omitStages", causes, unknown)
    causes += _stage_causes(omit, "omitStages")
    rules = []
    raw_rules = doc.get("rules")
    if raw_rules is not None and not isinstance(raw_rules, list):
        raise PolicyError('failed decoding: json: cannot unmarshal rules into Go struct field Policy.rules of type '
                          '[]v1.PolicyRule')
    for i, raw in enumerate(raw_rules or []):
        rules.append(_rule(raw, f"rules[{i}]", causes, unknown))
    if unknown:
        log.warning("Audit policy contains errors, falling back to lenient decoding: strict decoding error: %s",
                    ", ".join(unknown))
    if causes:
        texts = list(dict.fromkeys(field.text(c) for c in causes))
        raise PolicyError(texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")
    if not rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return Policy(tuple(rules), tuple(omit), bool(doc.get("omitManagedFields", False)))


_POLICY_FIELDS = frozenset({"apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"})
_RULE_FIELDS = frozenset({"level", "users", "userGroups", "verbs", "resources", "namespaces", "nonResourceURLs",
                          "omitStages", "omitManagedFields"})
_GROUP_FIELDS = frozenset({"group", "resources", "resourceNames"})


def _short(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"))[:200]


def _strings(doc: dict[str, Any], key: str, path: str, causes: list[field.Cause], unknown: list[str]) -> list[str]:
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(f"failed decoding: json: cannot unmarshal {path} into Go value of type []string")
    return list(value)


def _stage_causes(stages: list[str], path: str) -> list[field.Cause]:
    return [field.invalid(f"{path}[{i}]", s, "allowed stages are " + ",".join(STAGES))
            for i, s in enumerate(stages) if s not in STAGES]


def _rule(raw: Any, path: str, causes: list[field.Cause], unknown: list[str]) -> PolicyRule:
    if not isinstance(raw, dict):
        raise PolicyError(f"failed decoding: json: cannot unmarshal {path} into Go value of type v1.PolicyRule")
    unknown += [f'unknown field "{path}.{k}"' for k in raw if k not in _RULE_FIELDS]
    level = raw.get("level") or ""
    if not isinstance(level, str):
        raise PolicyError(f"failed decoding: json: cannot unmarshal {path}.level into Go value of type v1.Level")
    if not level:
        causes.append(field.required(f"{path}.level"))
    elif level not in LEVELS:
        causes.append(field.not_supported(f"{path}.level", level, LEVELS))
    urls = _strings(raw, "nonResourceURLs", f"{path}.nonResourceURLs", causes, unknown)
    for i, url in enumerate(urls):
        if url == "*":
            continue
        if not url.startswith("/"):
            causes.append(field.invalid(f"{path}.nonResourceURLs[{i}]", url,
                                        "non-resource URL rules must begin with a '/' character"))
        if url and "*" in url[:-1]:
            causes.append(field.invalid(f"{path}.nonResourceURLs[{i}]", url,
                                        "non-resource URL wildcards '*' must be the final character of the rule"))
    groups = _group_resources(raw.get("resources"), f"{path}.resources", causes, unknown)
    omit = _strings(raw, "omitStages", f"{path}.omitStages", causes, unknown)
    causes += _stage_causes(omit, f"{path}.omitStages")
    namespaces = _strings(raw, "namespaces", f"{path}.namespaces", causes, unknown)
    if urls and (groups or namespaces):
        causes.append(field.invalid(f"{path}.nonResourceURLs", field.GoValue(_go_strings(urls)),
                                    "rules cannot apply to both regular resources and non-resource URLs"))
    managed = raw.get("omitManagedFields")
    return PolicyRule(level=level, users=tuple(_strings(raw, "users", f"{path}.users", causes, unknown)),
                      user_groups=tuple(_strings(raw, "userGroups", f"{path}.userGroups", causes, unknown)),
                      verbs=tuple(_strings(raw, "verbs", f"{path}.verbs", causes, unknown)),
                      resources=tuple(groups), namespaces=tuple(namespaces), non_resource_urls=tuple(urls),
                      omit_stages=tuple(omit), omit_managed_fields=None if managed is None else bool(managed))


def _go_strings(values: list[str]) -> str:
    """A ``[]string`` as ``field.Error`` prints a value of no simpler kind: Go's ``%#v``, ``[]string{"/x", "/y"}``."""
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _group_resources(raw: Any, path: str, causes: list[field.Cause], unknown: list[str]) -> list[GroupResources]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PolicyError(f"failed decoding: json: cannot unmarshal {path} into Go value of type "
                          "[]v1.GroupResources")
    out = []
    for j, item in enumerate(raw):
        if not isinstance(item, dict):
            raise PolicyError(f"failed decoding: json: cannot unmarshal {path}[{j}] into Go value of type "
                              "v1.GroupResources")
        unknown += [f'unknown field "{path}[{j}].{k}"' for k in item if k not in _GROUP_FIELDS]
        group = item.get("group") or ""
        if not isinstance(group, str):
            raise PolicyError(f"failed decoding: json: cannot unmarshal {path}[{j}].group into Go value of type "
                              "string")
        if group:
            problems = name_is_dns_subdomain(group)
            if problems:
                causes.append(field.invalid(f"{path}.group", group, ",".join(problems)))
        resources = _strings(item, "resources", f"{path}[{j}].resources", causes, unknown)
        names = _strings(item, "resourceNames", f"{path}[{j}].resourceNames", causes, unknown)
        if names and not resources:
            causes.append(field.invalid(f"{path}.resourceNames", field.GoValue(_go_strings(names)),
                                        "using resourceNames requires at least one resource"))
        out.append(GroupResources(group, tuple(resources), tuple(names)))
    return out


def load_policy_file(path: Path | str) -> Policy:
    """``LoadPolicyFromFile``: read, decode (YAML, of which JSON is a subset) and validate. Raises
    :class:`PolicyError` as kube-apiserver words it: ``failed to read file path "<p>": <err>``, or
    ``<error>: from file <path>``."""
    where = str(path)
    try:
        text = Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise PolicyError(f'failed to read file path "{where}": {exc.strerror or exc}') from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError(f"failed decoding: {str(exc).splitlines()[0]}: from file {where}") from None
    try:
        return parse_policy(doc, where)
    except PolicyError as exc:
        raise PolicyError(f"{exc}: from file {where}") from None


DEFAULT_POLICY = parse_policy(yaml.safe_load(DEFAULT_POLICY_YAML))
"""The lab's audit policy without ``--audit-policy-file`` (:data:`DEFAULT_POLICY_YAML`)."""
