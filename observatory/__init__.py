"""observatory: make Kubernetes scheduling visible and hands-on.

The package is split the way data flows: ``lab`` is the embedded Kubernetes-API-compatible server, ``kube`` the
only package that talks to an API server, ``model`` and ``scheduling`` are pure, and ``ui`` is the Textual app.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("observatory")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
