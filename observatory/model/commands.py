"""The shell commands that send the same Binding as one :class:`~.exchange.BindingExchange`: kubectl and curl.

Both write the exact request body to ``binding.json`` with a quoted heredoc (so the shell expands nothing in it),
then POST it to the pod's binding subresource, ``POST /api/v1/namespaces/{namespace}/pods/{name}/binding``:

* kubectl, as the seed exercise does: ``kubectl create --raw <path> -f binding.json``. ``create --raw`` POSTs the
  file's bytes unchanged and prints the 201 Status on success, or ``Error from server (Conflict): …`` on stderr
  with exit code 1 (``kubectl pkg/cmd/create/create.go``, ``pkg/rawhttp/raw.go``).
* curl, with ``-i`` so the status line and headers show, as observatory's HTTP exchange pane does.

Credentials are never printed: :func:`equivalent_commands` takes no credential at all, only the *kind* of
authentication the kubeconfig user has, and writes shell-variable placeholders (``$TOKEN``, ``$CLIENT_CERT`` …)
with a comment saying where to get each value. A server URL's ``user:password@`` part is dropped.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from .exchange import BindingExchange

__all__ = ["AUTH_KINDS", "BINDING_FILE", "CommandsContext", "EquivalentCommands", "equivalent_commands", "heredoc",
           "strip_userinfo"]

BINDING_FILE = "binding.json"
"""The file both snippets write the request body to, in the current directory."""

AUTH_KINDS = ("none", "token", "client-certificate", "basic", "exec")
"""How the kubeconfig user authenticates: nothing, a bearer token, a client certificate and key, a username and
password, or an exec credential plugin (which hands out a bearer token)."""

_AUTH_NOTES = {
    "none": ((), ()),
    "token": (("# TOKEN: the bearer token of your kubeconfig user (users[].user.token); it is not printed here.",),
              ('-H "Authorization: Bearer $TOKEN"',)),
    "client-certificate": (
        ("# CLIENT_CERT, CLIENT_KEY: files holding your kubeconfig user's client certificate and key",
         "# (client-certificate / client-key, or the base64-decoded client-certificate-data / client-key-data)."),
        ('--cert "$CLIENT_CERT"', '--key "$CLIENT_KEY"')),
    "basic": (("# USER, PASSWORD: your kubeconfig user's username and password; they are not printed here.",),
              ('-u "$USER:$PASSWORD"',)),
    "exec": (("# TOKEN: your kubeconfig user gets its token from an exec plugin. Run that plugin and take",
              "# .status.token from its ExecCredential output, or mint one for a service account:",
              "#   TOKEN=$(kubectl create token <service-account> -n <namespace>)"),
             ('-H "Authorization: Bearer $TOKEN"',)),
}
_CA_NOTE = ("# CA_CERT: a file holding the cluster's CA certificate (certificate-authority,\n"
            "# or the base64-decoded certificate-authority-data).")
_INSECURE_NOTE = "# -k: the kubeconfig skips TLS verification (insecure-skip-tls-verify), so curl does too."


@dataclass(frozen=True, slots=True)
class EquivalentCommands:
    """What to type to send the same Binding by hand.

    ``binding_json`` is the exact request body as text (UTF-8; bytes that are not UTF-8 are replaced with U+FFFD);
    ``kubectl`` and ``curl`` are multi-line shell snippets (no trailing newline): a heredoc writing
    :data:`BINDING_FILE`, then the command. They contain placeholders, never credentials.
    """

    binding_json: str
    kubectl: str
    curl: str


@dataclass(frozen=True, slots=True)
class CommandsContext:
    """The connection facts :func:`equivalent_commands` takes besides the exchange; no credential.

    ``server`` is the API server URL; ``context`` the kube context for ``kubectl --context`` ("" to leave it out);
    ``kubeconfig`` the file for ``kubectl --kubeconfig`` (None to leave it out, e.g. when several files were
    merged: kubectl then needs the same ``KUBECONFIG``); ``auth`` one of :data:`AUTH_KINDS`; ``ca`` a CA is
    configured; ``insecure`` TLS verification is skipped. Sources give one from ``commands_context()``.
    ValueError for an ``auth`` not in :data:`AUTH_KINDS`.
    """

    server: str
    context: str = ""
    kubeconfig: str | None = None
    auth: str = "none"
    ca: bool = False
    insecure: bool = False

    def __post_init__(self) -> None:
        if self.auth not in AUTH_KINDS:
            raise ValueError(f"auth must be one of {', '.join(AUTH_KINDS)}, not {self.auth!r}")

    def commands(self, exchange: BindingExchange) -> EquivalentCommands:
        """``equivalent_commands(exchange, server=…, context=…, kubeconfig=…, auth=…, ca=…, insecure=…)`` with
        these facts."""
        return equivalent_commands(exchange, server=self.server, context=self.context, kubeconfig=self.kubeconfig,
                                   auth=self.auth, ca=self.ca, insecure=self.insecure)


def strip_userinfo(server: str) -> str:
    """``server`` without a ``user:password@`` part and without a trailing slash; other text is returned as is.

    >>> strip_userinfo("https://admin:s3cret@10.0.0.1:6443/")
    'https://10.0.0.1:6443'
    """
    server = server.strip()
    try:
        parts = urlsplit(server)
    except ValueError:
        return server.rstrip("/")
    if parts.scheme and "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rpartition("@")[2])
        server = urlunsplit(parts)
    return server.rstrip("/")


def heredoc(path: str, text: str) -> str:
    """A shell snippet writing ``text`` to ``path`` with a quoted heredoc (``cat > path <<'EOF'``), so ``$`` and
    backquotes stay literal. The delimiter is ``EOF``, or ``EOF_1``, ``EOF_2`` … when a line of ``text`` is
    ``EOF``. The heredoc ends the file with one newline (JSON ignores it); ``text`` ending in one keeps just that."""
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    delimiter, n = "EOF", 0
    while delimiter in lines:
        n += 1
        delimiter = f"EOF_{n}"
    return "\n".join([f"cat > {shlex.quote(path)} <<'{delimiter}'", *lines, delimiter])


def equivalent_commands(exchange: BindingExchange, *, server: str, context: str = "", kubeconfig: str | None = None,
                        auth: str = "none", ca: bool = False, insecure: bool = False) -> EquivalentCommands:
    """The kubectl and curl snippets that POST ``exchange``'s request body to ``exchange.path``.

    ``server`` is the API server URL (``https://127.0.0.1:6443``; a ``user:password@`` part is dropped);
    ``context`` and ``kubeconfig`` become ``--context`` / ``--kubeconfig`` when not empty (leave them out to use
    kubectl's current context and ``$KUBECONFIG``). ``auth`` is one of :data:`AUTH_KINDS` and picks curl's
    placeholders: ``token`` -> ``-H "Authorization: Bearer $TOKEN"``; ``client-certificate`` -> ``--cert
    "$CLIENT_CERT" --key "$CLIENT_KEY"``; ``basic`` -> ``-u "$USER:$PASSWORD"``; ``exec`` -> the bearer-token
    placeholder with a comment on getting one. ``ca`` adds ``--cacert "$CA_CERT"``; ``insecure`` adds ``-k``.

    For ``sched-lab/manual`` with no kubeconfig or context, the kubectl line is
    ``kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json``.

    Raises ValueError for an ``auth`` not in :data:`AUTH_KINDS`.
    """
    if auth not in _AUTH_NOTES:
        raise ValueError(f"auth must be one of {', '.join(AUTH_KINDS)}, not {auth!r}")
    body = exchange.request_body.decode("utf-8", errors="replace")
    write = heredoc(BINDING_FILE, body)
    path = shlex.quote(exchange.path)

    kubectl = ["kubectl"]
    if kubeconfig:
        kubectl += ["--kubeconfig", shlex.quote(kubeconfig)]
    if context:
        kubectl += ["--context", shlex.quote(context)]
    kubectl += ["create", "--raw", path, "-f", BINDING_FILE]

    auth_notes, auth_options = _AUTH_NOTES[auth]
    notes, options = list(auth_notes), list(auth_options)
    if ca:
        notes.append(_CA_NOTE)
        options.append('--cacert "$CA_CERT"')
    if insecure:
        notes.append(_INSECURE_NOTE)
        options.append("-k")
    url = shlex.quote(strip_userinfo(server) + exchange.path)
    curl = ["curl -sS -i -X POST -H 'Content-Type: application/json'", *options,
            f"--data-binary @{BINDING_FILE}", url]
    return EquivalentCommands(binding_json=body, kubectl=f"{write}\n{' '.join(kubectl)}",
                              curl="\n".join([write, *notes, " ".join(curl)]))
