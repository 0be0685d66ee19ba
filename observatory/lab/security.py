"""Bearer token and TLS for a lab that listens beyond the loopback interface.

On 127.0.0.1 the lab may serve plain HTTP without credentials. On any other address it should serve HTTPS with a
certificate kubectl accepts and require a bearer token; this module makes both:

* :func:`is_loopback` decides which case applies;
* :func:`generate_token` makes the token the kubeconfig carries (see ``observatory.lab.kubeconfig``);
* :func:`make_tls` makes a throwaway CA and a server certificate signed by it, the CA's PEM going into the
  kubeconfig's ``certificate-authority-data``;
* :func:`advertised_hosts` lists the names and addresses clients may use, for the certificate's SANs;
* :func:`tokens_equal` compares a presented bearer token with the lab's in constant time, over the bytes the header
  arrived as (:func:`token_bytes`; :func:`is_utf8` says whether they were UTF-8), so no header value can make the
  comparison raise.

The certificates follow what Go's crypto/x509 verifies for a TLS server (kubectl and client-go use it): the CA has
critical BasicConstraints CA:TRUE and the keyCertSign key usage, the leaf has the serverAuth extended key usage and
subjectAltNames (Go ignores the CN), and both carry key identifiers. Keys are ECDSA P-256; validity starts five
minutes in the past to tolerate clock skew. The CA's private key is never written: each call makes a new CA.
"""

from __future__ import annotations

import datetime as dt
import hmac
import ipaddress
import os
import secrets
import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["TLSMaterial", "advertised_hosts", "generate_token", "is_loopback", "is_utf8", "make_tls", "token_bytes",
           "tokens_equal"]

CA_COMMON_NAME = "observatory-lab-ca"
SERVER_COMMON_NAME = "observatory-lab"
VALIDITY = dt.timedelta(days=365)
BACKDATE = dt.timedelta(minutes=5)
_ALWAYS = ("localhost", "127.0.0.1", "::1")
_UNSPECIFIED = ("0.0.0.0", "::", "")


@dataclass(frozen=True)
class TLSMaterial:
    """What :func:`make_tls` wrote: the CA certificate (PEM) to trust, and the server's certificate and key files."""

    ca_pem: bytes
    cert_path: Path
    key_path: Path

    def ssl_context(self) -> ssl.SSLContext:
        """A server-side context with this certificate and key, TLS 1.2 or newer."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert_path, self.key_path)
        return context


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ::1 (also bracketed or IPv4-mapped); False for anything else."""
    host = host.strip().strip("[]")
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def generate_token() -> str:
    """A fresh bearer token: 32 random bytes from :mod:`secrets`, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def advertised_hosts(bind_host: str) -> list[str]:
    """The hosts clients can use to reach a lab bound to ``bind_host``, for certificate SANs and URLs.

    For a wildcard bind (``0.0.0.0``, ``::`` or empty) this is the machine's hostname followed by the addresses
    ``socket.getaddrinfo(socket.gethostname(), None)`` returns (IPv4 only for ``0.0.0.0``), non-loopback ones
    first, without duplicates. The lookup goes through the system resolver (``/etc/hosts`` and nss in practice);
    nothing is connected to or probed. If it fails, just the hostname. Any other ``bind_host`` is returned alone.
    """
    bare = bind_host.strip().strip("[]")
    if bare not in _UNSPECIFIED:
        return [bare]
    hostname = socket.gethostname()
    family = socket.AF_INET if bare == "0.0.0.0" else socket.AF_UNSPEC
    try:
        infos = socket.getaddrinfo(hostname, None, family)
    except (OSError, UnicodeError):
        infos = []
    addresses: list[str] = []
    for info_family, *_, sockaddr in infos:
        if info_family in (socket.AF_INET, socket.AF_INET6):
            address = str(sockaddr[0]).split("%", 1)[0]  # drop an IPv6 zone id
            if address not in addresses:
                addresses.append(address)
    addresses.sort(key=is_loopback)  # stable: non-loopback first, resolver order kept
    return [hostname, *(a for a in addresses if a != hostname)]


def make_tls(hosts: Sequence[str], directory: Path) -> TLSMaterial:
    """Make a CA and a server certificate for ``hosts`` and write ``ca.crt``, ``server.crt``, ``server.key``.

    Every host becomes a subjectAltName (an IPAddress for IP literals, a DNSName otherwise), plus localhost,
    127.0.0.1 and ::1; wildcard bind addresses (0.0.0.0, ::) are skipped. ``directory`` is created (mode 0700)
    if needed; existing files are replaced; the key file has mode 0600. Raises ValueError for a host that is
    neither an IP address nor a valid DNS name.
    """
    names = _subject_alt_names(hosts)
    now = dt.datetime.now(dt.UTC)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_COMMON_NAME)])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(digital_signature=True, key_cert_sign=True, crl_sign=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SERVER_COMMON_NAME)]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(digital_signature=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(server_key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
    cert_path, key_path = directory / "server.crt", directory / "server.key"
    _write(directory / "ca.crt", ca_pem, 0o644)
    _write(cert_path, server_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(
        key_path,
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        0o600,
    )
    return TLSMaterial(ca_pem=ca_pem, cert_path=cert_path, key_path=key_path)


def _subject_alt_names(hosts: Sequence[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in (*hosts, *_ALWAYS):
        bare = host.strip().strip("[]")
        if bare in _UNSPECIFIED:
            continue
        try:
            name: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(bare.split("%", 1)[0]))
        except ValueError:
            name = x509.DNSName(_dns_name(bare))
        if name not in names:
            names.append(name)
    return names


def _dns_name(host: str) -> str:
    """The ASCII (IDNA) form of a host name, lower case; ValueError if it cannot be a DNS name."""
    try:
        ascii_name = host.rstrip(".").encode("idna").decode("ascii").lower()
    except UnicodeError as err:
        raise ValueError(f"{host!r} is neither an IP address nor a valid DNS name ({err})") from None
    labels = ascii_name.split(".")
    if not all(label and len(label) <= 63 and label.replace("-", "").replace("_", "").isalnum() for label in labels):
        raise ValueError(f"{host!r} is neither an IP address nor a valid DNS name")
    return ascii_name


def _key_usage(
    *, digital_signature: bool = False, key_cert_sign: bool = False, crl_sign: bool = False
) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=digital_signature,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=key_cert_sign,
        crl_sign=crl_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _write(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` via a temporary file created with ``mode`` from the start."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def token_bytes(token: str) -> bytes:
    """The bytes a header value arrived as: aiohttp decodes headers as UTF-8 with ``surrogateescape``, so bytes
    that are not UTF-8 come back unchanged."""
    return token.encode("utf-8", "surrogateescape")


def is_utf8(token: str) -> bool:
    """Whether a header value arrived as valid UTF-8 (it holds no surrogate escape)."""
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def tokens_equal(presented: str, expected: str) -> bool:
    """Constant-time comparison of a presented bearer token with the expected one, byte for byte as Go compares
    them, whatever bytes the presented one holds."""
    return hmac.compare_digest(token_bytes(presented), token_bytes(expected))
