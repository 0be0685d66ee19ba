"""``User-Agent`` strings in client-go's format. Pure.

client-go (``staging/src/k8s.io/client-go/rest/config.go``) builds a client's default agent as
``DefaultKubernetesUserAgent()``: ``"%s/%s (%s/%s) kubernetes/%s"`` of ``adjustCommand(os.Args[0])`` (the program's
base name), ``adjustVersion(gitVersion)`` (the part before the first ``-``; ``unknown`` when empty), ``GOOS``,
``GOARCH`` and ``adjustCommit(gitCommit)`` (its first 7 characters; ``unknown`` when empty). ``AddUserAgent(config,
name)`` sets the agent to that default plus ``"/" + name`` (kube-scheduler's ``/scheduler``, a controller's
``/system:serviceaccount:kube-system:<name>``). :func:`observatory.model.audit.short_agent` reads the program back.
"""

from __future__ import annotations

__all__ = ["adjust_commit", "adjust_version", "go_platform", "user_agent"]

_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "386", "i686": "386",
           "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}
_GOOS = {"linux": "linux", "darwin": "darwin", "win32": "windows", "cygwin": "windows", "freebsd": "freebsd"}


def adjust_version(version: str) -> str:
    """client-go's ``adjustVersion``: ``v1.34.1`` of ``v1.34.1-rc.0``; ``unknown`` for ""."""
    return version.split("-", 1)[0] if version else "unknown"


def adjust_commit(commit: str) -> str:
    """client-go's ``adjustCommit``: the first 7 characters of the git commit; ``unknown`` for ""."""
    return commit[:7] if commit else "unknown"


def go_platform(sys_platform: str, machine: str) -> tuple[str, str]:
    """Go's ``GOOS``/``GOARCH`` names for Python's ``sys.platform`` and ``platform.machine()`` (``linux``,
    ``amd64``); an unknown name is kept lower-cased (``unknown`` when empty)."""
    os_name = sys_platform.lower()
    os_name = next((goos for prefix, goos in _GOOS.items() if os_name.startswith(prefix)), os_name)
    arch = machine.lower()
    return os_name or "unknown", _GOARCH.get(arch, arch or "unknown")


def user_agent(command: str, version: str, commit: str, *, goos: str = "linux", goarch: str = "amd64",
               suffix: str = "") -> str:
    """``DefaultKubernetesUserAgent()`` of a program ``command`` built at ``version``/``commit``, plus ``/suffix``
    as ``AddUserAgent`` appends it: ``kube-scheduler/v1.34.1 (linux/amd64) kubernetes/observa/scheduler``."""
    agent = f"{command or 'unknown'}/{adjust_version(version)} ({goos}/{goarch}) kubernetes/{adjust_commit(commit)}"
    return f"{agent}/{suffix}" if suffix else agent
