"""A simple RBAC mode for the lab (``observatory lab serve --rbac FILE``, ``LabSettings.rbac``): bearer tokens mapped
to users, each allowed some verbs on some resources in some namespaces; everything else gets kube-apiserver's 403.

The file (YAML)::

    users:
    - name: alice                  # the user name in 403 messages ("User \\"alice\\" cannot ...")
      token: alice-token           # the bearer token that authenticates as alice
      namespaces: [team-a]         # where the rules below apply; "*" = every namespace and the cluster scope
      rules:
      - verbs: [get, list, watch]
        resources: [pods, events]
      - verbs: [create]
        resources: [pods/binding]  # a subresource; "*/binding" for that subresource of every resource
      - verbs: [get, list, watch]
        resources: [nodes]
        namespaces: ["*"]          # a rule may name its own namespaces; nodes are cluster-scoped, only "*" reaches them
      - verbs: [get]
        nonResourceURLs: ["/lab/*"]  # non-resource paths, wherever the rule's namespaces; a final "*" is a prefix

Rules match as upstream RBAC's ``RuleAllows`` (``plugin/pkg/auth/authorizer/rbac/rbac.go``): ``verbs`` and
``resources`` take ``"*"``; a resource is matched as ``resource/subresource`` (``pods/binding``), or by ``*/sub``;
``resourceNames`` (optional) limits a rule to those objects; ``apiGroups`` (optional, default ``["*"]``) to those
groups (``""`` is the core group). A request without a namespace (a cluster-scoped resource, or a list or watch of
every namespace) is matched only by rules whose namespaces are ``"*"``, as only a ClusterRoleBinding grants it.

As on a kubeadm cluster, every authenticated user may also read discovery, ``/version``, the health checks and
OpenAPI (ClusterRoles ``system:discovery`` and ``system:public-info-viewer``) and create SelfSubjectAccessReviews
(``system:basic-user``); requests without credentials reach only the health checks (see
:func:`observatory.lab.api.authenticated`).

Requests are turned into authorization attributes as kube-apiserver's ``RequestInfoFactory`` does
(:mod:`observatory.lab.requestinfo`): POST create, GET get (list or watch without a name;
``fieldSelector=metadata.name=X`` names the object), PUT update, PATCH patch, DELETE delete (deletecollection
without a name). A refusal is ``apierrors.NewForbidden`` with ``responsewriters.forbiddenMessage`` as the error
(``k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go``): ``pods is forbidden: User "alice" cannot
list resource "pods" in API group "" at the cluster scope``, ``pods "web" is forbidden: User "alice" cannot create
resource "pods/binding" in API group "" in the namespace "team-a"``, ``forbidden: User "alice" cannot get path
"/lab/faults"``; the RBAC authorizer gives no reason with a denial, so nothing follows the message.

``POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`` answers 201 with the review and its ``status``:
``allowed`` and, when allowed, the reason RBAC gives, naming the binding that allowed it. Each user's rules act as
one Role bound in each of its namespaces and one ClusterRole bound cluster-wide for its ``"*"`` rules, named
``observatory-lab:<user>``: ``RBAC: allowed by RoleBinding "observatory-lab:alice/team-a" of Role
"observatory-lab:alice" to User "alice"`` or ``RBAC: allowed by ClusterRoleBinding "observatory-lab:alice" of
ClusterRole "observatory-lab:alice" to User "alice"`` (the format of upstream's ``roleBindingDescriber`` and
``clusterRoleBindingDescriber``). A denial has ``allowed: false`` and no reason. Without RBAC mode the lab allows
everything, as kube-apiserver's AlwaysAllow authorizer does: ``allowed: true`` and no reason.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web
from pydantic import ValidationError

from observatory.lab import errors, kubeconfig
from observatory.lab.encoding import go_json
from observatory.lab.rbac_file import RuleFile, UserFile, user_problem
from observatory.lab.requestinfo import Attributes, attributes

__all__ = ["Attributes", "Grant", "Policy", "RbacError", "Rule", "User", "attributes", "forbidden", "load_policy",
           "self_subject_access_review", "write_user_kubeconfigs"]

ALL = "*"
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
JSON = "application/json"

_SANITIZE = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
"""``responsewriters.sanitizer``: the Forbidden message must not look like HTML."""
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


class RbacError(ValueError):
    """An RBAC file that cannot be used; the message names the file and what is wrong, in one sentence."""


@dataclass(frozen=True)
class Rule:
    """One PolicyRule: resource rules (``verbs`` × ``api_groups`` × ``resources`` [× ``resource_names``]) or
    non-resource rules (``verbs`` × ``non_resource_urls``), applying in ``namespaces`` (``("*",)``: everywhere)."""

    verbs: tuple[str, ...]
    resources: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = (ALL,)
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = (ALL,)

    def allows(self, attrs: Attributes) -> bool:
        """Upstream ``RuleAllows``: verb, group, resource (``*/sub`` too) and name, or verb and path."""
        if not (ALL in self.verbs or attrs.verb in self.verbs):
            return False
        if not attrs.resource_request:
            return any(url == ALL or url == attrs.path or (url.endswith("*") and attrs.path.startswith(url[:-1]))
                       for url in self.non_resource_urls)
        if not (ALL in self.api_groups or attrs.group in self.api_groups):
            return False
        combined = attrs.combined_resource
        if not any(r == ALL or r == combined or (attrs.subresource and r == f"*/{attrs.subresource}")
                   for r in self.resources):
            return False
        return not self.resource_names or attrs.name in self.resource_names

    def applies_in(self, namespace: str) -> bool:
        """Whether this rule is bound where the request is: ``"*"`` everywhere, else only in its namespaces."""
        return ALL in self.namespaces or (bool(namespace) and namespace in self.namespaces)


@dataclass(frozen=True)
class User:
    """A user the lab authenticates by ``token``; ``rules`` say what it may do."""

    name: str
    token: str = field(repr=False)
    namespaces: tuple[str, ...]
    rules: tuple[Rule, ...]

    @property
    def home_namespace(self) -> str:
        """The namespace its kubeconfig context names: its first namespace, or ``default`` when it has only ``*``."""
        return next((ns for ns in self.namespaces if ns != ALL), "default")


USER_KEY: web.RequestKey[User] = web.RequestKey("observatory.lab.user", User)
"""Where an RBAC lab keeps the authenticated :class:`User` of a request (``request[USER_KEY]``)."""


@dataclass(frozen=True)
class Grant:
    """Who allowed a request: the (Cluster)RoleBinding upstream's describers would name."""

    kind: str
    binding: str
    role_kind: str
    role: str
    subject: str

    def reason(self) -> str:
        """``RBAC: allowed by <Kind> "<binding>" of <RoleKind> "<role>" to <subject>``."""
        return f'RBAC: allowed by {self.kind} "{self.binding}" of {self.role_kind} "{self.role}" to {self.subject}'


_DISCOVERY_URLS = ("/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/",
                   "/healthz", "/livez", "/readyz")
BUILT_IN: tuple[tuple[Grant, Rule], ...] = (
    (Grant("ClusterRoleBinding", "system:discovery", "ClusterRole", "system:discovery", 'Group "system:authenticated"'),
     Rule(verbs=("get",), non_resource_urls=_DISCOVERY_URLS)),
    (Grant("ClusterRoleBinding", "system:basic-user", "ClusterRole", "system:basic-user",
           'Group "system:authenticated"'),
     Rule(verbs=("create",), api_groups=("authorization.k8s.io",),
          resources=("selfsubjectaccessreviews", "selfsubjectrulesreviews"))),
)
"""What every authenticated user may do on a kubeadm cluster (the bootstrap ClusterRoles, simplified)."""


@dataclass(frozen=True)
class Policy:
    """The users of an RBAC lab, in file order; the first is the one the lab's kubeconfig carries."""

    users: tuple[User, ...]
    source: str = ""

    @property
    def kubeconfig_user(self) -> User:
        return self.users[0]

    def authenticate(self, token: str) -> User | None:
        """The user whose token this is (compared in constant time), None for any other token."""
        found = None
        for user in self.users:
            if hmac.compare_digest(user.token.encode(), token.encode()):
                found = user
        return found

    def grant(self, user: User, attrs: Attributes) -> Grant | None:
        """What allows ``user`` to do ``attrs`` (the built-in roles first, then the user's rules), None if nothing."""
        for grant, rule in BUILT_IN:
            if rule.allows(attrs):
                return grant
        prefix = f"observatory-lab:{user.name}"
        subject = f'User "{user.name}"'
        for rule in user.rules:
            if not rule.allows(attrs) or (attrs.resource_request and not rule.applies_in(attrs.namespace)):
                continue
            if ALL in rule.namespaces or not attrs.resource_request:
                return Grant("ClusterRoleBinding", prefix, "ClusterRole", prefix, subject)
            return Grant("RoleBinding", f"{prefix}/{attrs.namespace}", "Role", prefix, subject)
        return None


# -- loading ---------------------------------------------------------------------------------------------------------


def load_policy(path: Path | str) -> Policy:
    """Read and check an RBAC file (format in the module docstring). Raises :class:`RbacError` naming the file and
    the first problem (unreadable, not YAML, no users, an unknown field, a user without name or token, a duplicate
    name or token, no namespaces, a rule without verbs or without resources and nonResourceURLs, a value that is
    not a list of strings)."""
    where = str(path)
    try:
        doc = yaml.safe_load(Path(path).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise RbacError(f"{where}: cannot read the RBAC file: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RbacError(f"{where}: not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("users"), list) or not doc["users"]:
        raise RbacError(f"{where}: an RBAC file needs a non-empty 'users' list (see README, lab serve --rbac)")
    if set(doc) - {"users"}:
        raise RbacError(f"{where}: unknown field {sorted(set(doc) - {'users'})[0]!r} (an RBAC file has only 'users')")
    users: list[User] = []
    tokens: set[str] = set()
    names: set[str] = set()
    for i, raw in enumerate(doc["users"]):
        at = f"{where}: users[{i}]"
        named = raw.get("name") if isinstance(raw, dict) else None
        try:
            spec = UserFile.model_validate(raw)
        except ValidationError as exc:
            stands, problem = user_problem(exc)
            if stands == "later" and named in names:
                problem = "the name is already another user's"
            raise RbacError(f"{at}: {problem}" if stands == "unnamed" else f"{at} ({named}): {problem}") from None
        name = spec.name
        if name in names:
            raise RbacError(f"{at} ({name}): the name is already another user's")
        names.add(name)
        if not spec.token or any(c.isspace() for c in spec.token):
            raise RbacError(f"{at} ({name}): 'token' must be a non-empty string without spaces")
        if spec.token in tokens:
            raise RbacError(f"{at} ({name}): the token is already another user's")
        tokens.add(spec.token)
        namespaces = tuple(spec.namespaces)
        if not namespaces:
            raise RbacError(f"{at} ({name}): 'namespaces' is empty: name at least one, or '*' for all")
        for ns in namespaces:
            if ns != ALL and not _NAME.fullmatch(ns):
                raise RbacError(f"{at} ({name}): {ns!r} is not a namespace name or '*'")
        rules = tuple(_rule(r, f"{at} ({name}): rules[{j}]", namespaces) for j, r in enumerate(spec.rules))
        users.append(User(name, spec.token, namespaces, rules))
    return Policy(tuple(users), where)


def _rule(spec: RuleFile, at: str, namespaces: tuple[str, ...]) -> Rule:
    if not spec.verbs:
        raise RbacError(f"{at}: 'verbs' must list at least one verb (or '*')")
    if not spec.resources and not spec.nonResourceURLs:
        raise RbacError(f"{at}: a rule needs 'resources' or 'nonResourceURLs'")
    own = tuple(spec.namespaces) if "namespaces" in spec.model_fields_set else namespaces
    return Rule(verbs=tuple(spec.verbs), resources=tuple(spec.resources), api_groups=tuple(spec.apiGroups),
                resource_names=tuple(spec.resourceNames), non_resource_urls=tuple(spec.nonResourceURLs),
                namespaces=own)


def write_user_kubeconfigs(policy: Policy, main: Path, server: str, ca_pem: bytes | None) -> dict[str, Path]:
    """Beside the lab's kubeconfig ``main``, one kubeconfig per user (``<main>-<user>``, e.g. ``kubeconfig-bob``)
    with that user's token and home namespace. Returns user name -> path. Raises OSError or ValueError as
    :func:`observatory.lab.kubeconfig.write_kubeconfig` does."""
    out = {}
    for user in policy.users:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", user.name)
        out[user.name] = kubeconfig.write_kubeconfig(main.with_name(f"{main.name}-{safe}"), server, ca_pem=ca_pem,
                                                     token=user.token, namespace=user.home_namespace)
    return out


# -- requests --------------------------------------------------------------------------------------------------------


def forbidden_message(user: str, attrs: Attributes) -> str:
    """``responsewriters.forbiddenMessage``, sanitised as ``Forbidden`` does."""
    if not attrs.resource_request:
        text = f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    elif attrs.namespace:
        text = (f'User "{user}" cannot {attrs.verb} resource "{attrs.combined_resource}" in API group '
                f'"{attrs.group}" in the namespace "{attrs.namespace}"')
    else:
        text = (f'User "{user}" cannot {attrs.verb} resource "{attrs.combined_resource}" in API group '
                f'"{attrs.group}" at the cluster scope')
    for char, escape in _SANITIZE:
        text = text.replace(char, escape)
    return text


def forbidden(user: str, attrs: Attributes) -> errors.StatusError:
    """403 Forbidden: ``apierrors.NewForbidden(GroupResource, name, forbiddenMessage)``; details carry the name,
    the group and the resource (``kind``), and ``{}`` for a non-resource path."""
    message = forbidden_message(user, attrs)
    if not attrs.resource_request:
        return errors.StatusError(errors.status_failure(403, "Forbidden", f"forbidden: {message}", {}))
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    head = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: dict[str, Any] = {}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.group:
        details["group"] = attrs.group
    details["kind"] = attrs.resource
    return errors.StatusError(errors.status_failure(403, "Forbidden", f"{head} is forbidden: {message}", details))


def authenticate(policy: Policy, request: web.Request, token: str | None, anonymous_paths: frozenset[str]) -> bool:
    """The authentication half of an RBAC lab: a known token (its user is kept in ``request[USER_KEY]``), or no
    credentials on ``anonymous_paths``; anything else is refused (401)."""
    if token is None:
        return request.path in anonymous_paths
    user = policy.authenticate(token)
    if user is None:
        return False
    request[USER_KEY] = user
    return True


def authorize(policy: Policy, request: web.Request) -> None:
    """The authorization half: raise the 403 StatusError unless the request's user may do what it asks. Requests
    without a user (the anonymous health checks) pass."""
    user = request.get(USER_KEY)
    if user is None:
        return
    attrs = attributes(request.method, request.path, request.query)
    if policy.grant(user, attrs) is None:
        raise forbidden(user.name, attrs)


# -- SelfSubjectAccessReview -----------------------------------------------------------------------------------------

_RESOURCE_FIELDS = ("namespace", "verb", "group", "version", "resource", "subresource", "name")
"""``ResourceAttributes`` JSON fields in Go order (fieldSelector and labelSelector, alpha, are dropped)."""


def review(policy: Policy | None, user: User | None, spec: dict[str, Any]) -> dict[str, Any]:
    """The ``status`` of a SelfSubjectAccessReview with ``spec`` for ``user`` (None: no RBAC, AlwaysAllow):
    ``{"allowed": true, "reason": "RBAC: allowed by ..."}`` or ``{"allowed": false}``."""
    if policy is None or user is None:
        return {"allowed": True}
    res = spec.get("resourceAttributes")
    if isinstance(res, dict):
        subresource = str(res.get("subresource") or "")
        attrs = Attributes(verb=str(res.get("verb") or ""), resource_request=True,
                           namespace=str(res.get("namespace") or ""), group=str(res.get("group") or ""),
                           version=str(res.get("version") or ""), resource=str(res.get("resource") or ""),
                           subresource=subresource, name=str(res.get("name") or ""))
    else:
        non = spec.get("nonResourceAttributes") or {}
        attrs = Attributes(verb=str(non.get("verb") or ""), resource_request=False, path=str(non.get("path") or ""))
    grant = policy.grant(user, attrs)
    return {"allowed": True, "reason": grant.reason()} if grant is not None else {"allowed": False}


async def self_subject_access_review(request: web.Request, policy: Policy | None,
                                     read_body: Any) -> web.Response:
    """``POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews``: 201 with the review, its spec as sent (in
    Go field order) and its status (:func:`review`). Any other method is 405; a spec with neither or both of
    ``resourceAttributes`` and ``nonResourceAttributes`` is 422 as upstream's validation answers."""
    if request.method != "POST":
        raise errors.method_not_allowed()
    body = await read_body(request, "SelfSubjectAccessReview")
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (res is None) == (non is None) or not isinstance(res or non, dict):
        where = "spec.nonResourceAttributes" if res is not None and non is not None else "spec.resourceAttributes"
        detail = ("cannot be specified in combination with resourceAttributes" if res is not None and non is not None
                  else "exactly one of nonResourceAttributes or resourceAttributes must be specified")
        shown = "null" if non is None else "{...}"
        raise errors.invalid("SelfSubjectAccessReview", "", [("FieldValueInvalid", where,
                                                              f"Invalid value: {shown}: {detail}")],
                             group="authorization.k8s.io")
    echoed: dict[str, Any] = {}
    if isinstance(res, dict):
        echoed["resourceAttributes"] = {k: str(res[k]) for k in _RESOURCE_FIELDS if res.get(k)}
    elif isinstance(non, dict):
        echoed["nonResourceAttributes"] = {k: str(non[k]) for k in ("path", "verb") if non.get(k)}
    out = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
           "metadata": {"creationTimestamp": None}, "spec": echoed,
           "status": review(policy, request.get(USER_KEY), echoed)}
    return web.Response(body=go_json(out), status=201, content_type=JSON)
