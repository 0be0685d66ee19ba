"""Loopback detection, tokens, advertised hosts, and TLS material checked by Python's ssl, cryptography and kubectl."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import json
import shutil
import socket
import ssl
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from observatory.lab.kubeconfig import write_kubeconfig
from observatory.lab.security import TLSMaterial, advertised_hosts, generate_token, is_loopback, make_tls

# --- is_loopback, generate_token ------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.6.7", "127.255.255.254", "::1", "[::1]", "localhost",
                                  "LOCALHOST", "localhost.", "::ffff:127.0.0.1"])
def test_loopback(host: str) -> None:
    assert is_loopback(host) is True


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "10.0.0.1", "172.18.0.2", "128.0.0.1", "::2",
                                  "localhost.example.com", "example.com", "not an address"])
def test_not_loopback(host: str) -> None:
    assert is_loopback(host) is False


def test_generate_token() -> None:
    tokens = {generate_token() for _ in range(50)}
    assert len(tokens) == 50
    for token in tokens:
        assert len(token) == 43
        assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


# --- advertised_hosts ---------------------------------------------------------------------------------------------


def test_advertised_hosts_specific_bind_is_returned_alone() -> None:
    assert advertised_hosts("10.1.2.3") == ["10.1.2.3"]
    assert advertised_hosts("lab.example") == ["lab.example"]
    assert advertised_hosts("[fd00::1]") == ["fd00::1"]


def fake_getaddrinfo(results: list[tuple[int, str]]) -> Callable[..., list]:
    def getaddrinfo(host: str, port: object, family: int = 0, *args: object) -> list:
        assert host == "labhost" and port is None
        return [(fam, socket.SOCK_STREAM, 6, "", (addr, 0) if fam == socket.AF_INET else (addr, 0, 0, 0))
                for fam, addr in results if family in (0, fam)]
    return getaddrinfo


def test_advertised_hosts_wildcard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "labhost")
    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo([
        (socket.AF_INET, "127.0.1.1"), (socket.AF_INET, "192.168.1.20"), (socket.AF_INET, "192.168.1.20"),
        (socket.AF_INET6, "fd00::20"), (socket.AF_INET, "10.0.0.7"),
    ]))
    assert advertised_hosts("0.0.0.0") == ["labhost", "192.168.1.20", "10.0.0.7", "127.0.1.1"]
    assert advertised_hosts("::") == ["labhost", "192.168.1.20", "fd00::20", "10.0.0.7", "127.0.1.1"]


def test_advertised_hosts_resolution_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "labhost")

    def fail(*args: object, **kwargs: object) -> list:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    assert advertised_hosts("0.0.0.0") == ["labhost"]


def test_advertised_hosts_opens_no_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sockets(*args: object, **kwargs: object) -> None:
        raise AssertionError("advertised_hosts must not open sockets")

    monkeypatch.setattr(socket, "socket", no_sockets)
    monkeypatch.setattr(socket, "create_connection", no_sockets)
    hosts = advertised_hosts("0.0.0.0")
    assert hosts[0] == socket.gethostname()


# --- make_tls: the certificates -----------------------------------------------------------------------------------


@pytest.fixture
def tls(tmp_path: Path) -> TLSMaterial:
    return make_tls(["10.1.2.3", "lab.example", "fd00::5", "0.0.0.0", "127.0.0.1"], tmp_path / "tls")


def test_files_and_modes(tls: TLSMaterial, tmp_path: Path) -> None:
    directory = tmp_path / "tls"
    assert sorted(p.name for p in directory.iterdir()) == ["ca.crt", "server.crt", "server.key"]
    assert tls.cert_path == directory / "server.crt"
    assert tls.key_path == directory / "server.key"
    assert (directory / "ca.crt").read_bytes() == tls.ca_pem
    assert stat.S_IMODE(tls.key_path.stat().st_mode) == 0o600
    assert tls.key_path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    with pytest.raises(AttributeError):
        tls.ca_pem = b""  # type: ignore[misc]


def test_ca_certificate(tls: TLSMaterial) -> None:
    ca = x509.load_pem_x509_certificate(tls.ca_pem)
    assert ca.subject.rfc4514_string() == "CN=observatory-lab-ca"
    assert ca.issuer == ca.subject
    constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca is True
    usage = ca.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.key_cert_sign is True
    assert ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)


def test_server_certificate(tls: TLSMaterial) -> None:
    ca = x509.load_pem_x509_certificate(tls.ca_pem)
    cert = x509.load_pem_x509_certificate(tls.cert_path.read_bytes())
    assert cert.issuer == ca.subject
    cert.verify_directly_issued_by(ca)
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.SERVER_AUTH]
    ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ski.digest
    assert cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["lab.example", "localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("10.1.2.3"), ipaddress.ip_address("fd00::5"), ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1")]
    now = dt.datetime.now(dt.UTC)
    for c in (ca, cert):
        assert now - dt.timedelta(minutes=10) < c.not_valid_before_utc < now - dt.timedelta(minutes=4)
        assert c.not_valid_after_utc > now + dt.timedelta(days=300)


def test_bad_host_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="neither an IP address nor a valid DNS name"):
        make_tls(["bad host name"], tmp_path)


def test_a_second_call_replaces_the_files(tmp_path: Path) -> None:
    first = make_tls([], tmp_path)
    second = make_tls([], tmp_path)
    assert first.ca_pem != second.ca_pem
    assert (tmp_path / "ca.crt").read_bytes() == second.ca_pem


# --- make_tls: a real handshake -----------------------------------------------------------------------------------


@asynccontextmanager
async def serving(
    context: ssl.SSLContext, handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
) -> AsyncIterator[int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        writer.write(await reader.readline())
        await writer.drain()
    finally:
        writer.close()


def client_context(ca_pem: bytes) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verify_mode CERT_REQUIRED, check_hostname True
    context.load_verify_locations(cadata=ca_pem.decode())
    assert context.check_hostname is True
    return context


@pytest.mark.parametrize("server_hostname", ["localhost", "127.0.0.1"])
async def test_handshake_trusting_only_the_ca(tls: TLSMaterial, server_hostname: str) -> None:
    server_context = tls.ssl_context()
    assert server_context.minimum_version == ssl.TLSVersion.TLSv1_2
    async with serving(server_context, echo) as port:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_context(tls.ca_pem), server_hostname=server_hostname)
        writer.write(b"hello\n")
        assert await reader.readline() == b"hello\n"
        assert writer.get_extra_info("ssl_object").version() in ("TLSv1.2", "TLSv1.3")
        writer.close()


async def test_handshake_fails_for_a_name_not_in_the_certificate(tls: TLSMaterial) -> None:
    async with serving(tls.ssl_context(), echo) as port:
        with pytest.raises(ssl.SSLCertVerificationError, match=r"Hostname mismatch|doesn't match"):
            await asyncio.open_connection("127.0.0.1", port, ssl=client_context(tls.ca_pem),
                                          server_hostname="other.example")


async def test_handshake_fails_with_another_ca(tls: TLSMaterial, tmp_path: Path) -> None:
    other = make_tls([], tmp_path / "other")
    async with serving(tls.ssl_context(), echo) as port:
        with pytest.raises(ssl.SSLCertVerificationError, match="unable to get local issuer certificate"):
            await asyncio.open_connection("127.0.0.1", port, ssl=client_context(other.ca_pem),
                                          server_hostname="localhost")


# --- kubectl (Go's crypto/x509) against a tiny HTTPS server -------------------------------------------------------


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def version_handler(token: str, seen: list[str]) -> Handler:
    body = json.dumps({"major": "1", "minor": "34", "gitVersion": "v1.34.1"}).encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        seen.append(head)
        ok = f"authorization: bearer {token}".lower() in head.lower()
        status, payload = ("200 OK", body) if ok else ("401 Unauthorized", b'{"kind":"Status","code":401}')
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + payload)
        await writer.drain()
        writer.close()

    return handle


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_kubectl_verifies_the_certificate(tmp_path: Path, host: str) -> None:
    tls = make_tls(["127.0.0.1"], tmp_path / "tls")
    token = generate_token()
    seen: list[str] = []
    async with serving(tls.ssl_context(), version_handler(token, seen)) as port:
        kubeconfig = write_kubeconfig(tmp_path / "kc", f"https://{host}:{port}", ca_pem=tls.ca_pem, token=token)
        proc = await asyncio.create_subprocess_exec(
            "kubectl", "--kubeconfig", str(kubeconfig), "get", "--raw", "/version",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out) == {"major": "1", "minor": "34", "gitVersion": "v1.34.1"}
    assert seen and seen[-1].startswith("GET /version HTTP/1.1\r\n")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_rejects_a_server_signed_by_another_ca(tmp_path: Path) -> None:
    tls = make_tls([], tmp_path / "tls")
    other = make_tls([], tmp_path / "other")
    async with serving(tls.ssl_context(), version_handler("t", [])) as port:
        kubeconfig = write_kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{port}", ca_pem=other.ca_pem, token="t")
        proc = await asyncio.create_subprocess_exec(
            "kubectl", "--kubeconfig", str(kubeconfig), "get", "--raw", "/version",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode != 0
    assert "x509: certificate signed by unknown authority" in err.decode()
