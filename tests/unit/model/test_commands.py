"""Equivalent commands: the kubectl and curl snippets that send the same Binding, with placeholders, never secrets."""

from __future__ import annotations

import shlex
import subprocess
from datetime import UTC, datetime

import pytest

from observatory.model.commands import AUTH_KINDS, equivalent_commands, heredoc, strip_userinfo
from observatory.model.exchange import BindingExchange

PATH = "/api/v1/namespaces/sched-lab/pods/manual/binding"
# The seed exercise's binding.json, with $NODE as pair-worker.
BODY = ('{"apiVersion":"v1","kind":"Binding",\n "metadata":{"name":"manual","namespace":"sched-lab"},\n'
        ' "target":{"apiVersion":"v1","kind":"Node","name":"pair-worker"}}')
TOKEN = "eyJhbGciOiJSUzI1NiJ9.s3cr3t-token-value"
SERVER = "https://127.0.0.1:6443"


def exchange(body: str = BODY) -> BindingExchange:
    return BindingExchange(
        pod="sched-lab/manual", node="pair-worker", method="POST", path=PATH,
        request_headers=(("Content-Type", "application/json"), ("Authorization", f"Bearer {TOKEN}")),
        request_body=body.encode(), http_version="HTTP/1.1", status=201, reason="Created", response_headers=(),
        response_body=b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n',
        sent_at=datetime(2026, 11, 29, 10, 0, tzinfo=UTC), elapsed_ms=3.1)


def last_line(snippet: str) -> str:
    return snippet.splitlines()[-1]


def test_kubectl_line_is_the_seed_exercises_without_kubeconfig_or_context():
    commands = equivalent_commands(exchange(), server=SERVER)
    assert last_line(commands.kubectl) == (
        "kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json")
    assert commands.kubectl.splitlines()[0] == "cat > binding.json <<'EOF'"
    assert commands.binding_json == BODY


def test_kubectl_with_kubeconfig_and_context_is_quoted():
    commands = equivalent_commands(exchange(), server=SERVER, context="kind pair",
                                   kubeconfig="/home/me/.cache/observatory/lab/kubeconfig")
    assert shlex.split(last_line(commands.kubectl)) == [
        "kubectl", "--kubeconfig", "/home/me/.cache/observatory/lab/kubeconfig", "--context", "kind pair",
        "create", "--raw", PATH, "-f", "binding.json"]


def test_curl_with_a_token_has_the_placeholder_only():
    commands = equivalent_commands(exchange(), server=SERVER, auth="token", ca=True)
    assert last_line(commands.curl) == (
        "curl -sS -i -X POST -H 'Content-Type: application/json' -H \"Authorization: Bearer $TOKEN\" "
        "--cacert \"$CA_CERT\" --data-binary @binding.json "
        "https://127.0.0.1:6443/api/v1/namespaces/sched-lab/pods/manual/binding")
    assert "# TOKEN:" in commands.curl and "# CA_CERT:" in commands.curl
    for text in (commands.curl, commands.kubectl, commands.binding_json):
        assert TOKEN not in text and "s3cr3t" not in text


def test_curl_with_a_client_certificate():
    curl = equivalent_commands(exchange(), server=SERVER, auth="client-certificate").curl
    assert '--cert "$CLIENT_CERT" --key "$CLIENT_KEY"' in last_line(curl)
    assert "Authorization" not in curl and "--cacert" not in curl and " -k " not in curl


def test_curl_without_credentials():
    curl = last_line(equivalent_commands(exchange(), server="http://127.0.0.1:40123/", auth="none").curl)
    assert curl == ("curl -sS -i -X POST -H 'Content-Type: application/json' --data-binary @binding.json "
                    "http://127.0.0.1:40123/api/v1/namespaces/sched-lab/pods/manual/binding")
    assert "$" not in curl


def test_curl_basic_exec_and_insecure():
    basic = equivalent_commands(exchange(), server=SERVER, auth="basic", insecure=True).curl
    assert '-u "$USER:$PASSWORD"' in last_line(basic) and " -k " in last_line(basic)
    exec_ = equivalent_commands(exchange(), server=SERVER, auth="exec").curl
    assert '-H "Authorization: Bearer $TOKEN"' in last_line(exec_)
    assert "kubectl create token" in exec_ and "ExecCredential" in exec_
    assert set(AUTH_KINDS) == {"none", "token", "client-certificate", "basic", "exec"}
    with pytest.raises(ValueError, match="auth must be one of"):
        equivalent_commands(exchange(), server=SERVER, auth="oidc")


def test_a_password_in_the_server_url_is_dropped():
    curl = equivalent_commands(exchange(), server="https://admin:hunter22@10.0.0.1:6443/", auth="basic").curl
    assert "hunter22" not in curl and "admin" not in curl
    assert last_line(curl).endswith(" https://10.0.0.1:6443" + PATH)
    assert strip_userinfo("https://10.0.0.1:6443") == "https://10.0.0.1:6443"


def _write(snippet: str, tmp_path) -> bytes:
    """Run the heredoc part of a snippet (every line but the command) in bash and return binding.json."""
    script = "\n".join(snippet.splitlines()[:-1]) + "\n"
    subprocess.run(["bash", "-c", script], cwd=tmp_path, check=True)
    return (tmp_path / "binding.json").read_bytes()


def test_heredoc_writes_the_exact_body_with_nothing_expanded(tmp_path):
    body = '{"kind":"Binding","metadata":{"name":"$NODE `id` \'q\'"}}'
    commands = equivalent_commands(exchange(body), server=SERVER, auth="token")
    assert _write(commands.kubectl, tmp_path) == body.encode() + b"\n"
    assert _write(commands.curl, tmp_path) == body.encode() + b"\n"


def test_heredoc_delimiter_never_ends_the_body_early(tmp_path):
    text = "line one\nEOF\nEOF_1\nlast\n"
    snippet = heredoc("binding.json", text)
    assert snippet.splitlines()[0] == "cat > binding.json <<'EOF_2'"
    subprocess.run(["bash", "-c", snippet], cwd=tmp_path, check=True)
    assert (tmp_path / "binding.json").read_text() == text
