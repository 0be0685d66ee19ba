"""A kubeconfig server URL that carries ``user:password@``, sent as kubectl sends it.

client-go keeps the userinfo in the base URL of every request (``rest.DefaultServerURL`` in
``k8s.io/client-go/rest/url_utils.go`` parses the server with ``url.Parse`` and leaves ``User`` in place). Go's
``http.Client.send`` (``net/http/client.go``) then sets ``Authorization: Basic base64(user:password)`` from
``req.URL.User`` when the request has no ``Authorization`` header yet, before the transport runs; client-go's
bearer-token, basic-auth and exec round trippers (``transport/round_trippers.go``,
``plugin/pkg/client/auth/exec/exec.go``) all leave a request that already has an ``Authorization`` header alone.
So kubectl authenticates with the URL's credentials, and the user's token, password or exec plugin is not used
for requests (a client certificate still is: TLS is below HTTP).

observatory does the same: :func:`split_userinfo` takes the credentials out of the URL (aiohttp refuses a URL with
credentials next to an ``Authorization`` header: ``Cannot combine AUTHORIZATION header with AUTH argument or
credentials encoded in URL``) and gives the ``Basic`` value to send instead of the user's. Neither the password nor
the header value is ever printed: both are in the returned secrets, for redaction.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import unquote, urlsplit

__all__ = ["split_userinfo", "without_userinfo"]


def split_userinfo(server: str) -> tuple[str, str | None, frozenset[str]]:
    """``(server without its userinfo, the Authorization value to send or None, secrets)`` for a server URL.

    The user name and password are percent-decoded as Go's ``url.Userinfo`` gives them; a URL with a user name and
    no password sends ``user:`` (Go's ``Password()`` is then empty). A URL without ``@`` in its authority comes back
    unchanged with None and no secrets. ``secrets`` holds the password, the raw userinfo, the header value and its
    base64 part."""
    parts = urlsplit(server)
    if "@" not in parts.netloc:
        return server, None, frozenset()
    userinfo, hostport = parts.netloc.rsplit("@", 1)
    raw_user, _, raw_password = userinfo.partition(":")
    user, password = unquote(raw_user), unquote(raw_password)
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    stripped = parts._replace(netloc=hostport).geturl()
    secrets = {s for s in (password, raw_password, userinfo, encoded, f"Basic {encoded}") if len(s) >= 4}
    return stripped, f"Basic {encoded}", frozenset(secrets)



def without_userinfo(server: str) -> str:
    """``server`` with any ``user:password@`` removed, also when it is not a valid URL (for messages that quote a
    server address the kubeconfig got wrong)."""
    return re.sub(r"^([^/]*//)[^/?#]*@", r"\1", server)
