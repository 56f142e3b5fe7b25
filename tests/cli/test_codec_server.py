"""`sessionflow codec-server`: the command as a process, spoken to over real HTTP."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from temporalio.api.common.v1 import Payload

from sessionflow.temporal import EncryptionCodec, KeyRing, PayloadStore
from sessionflow.temporal.storage._encryption import ENCRYPTION_KEYS_ENV, KEY_ID_METADATA, generate_key_entry
from sessionflow_cli._errors import UsageError
from sessionflow_cli._payloads import open_payload_store
from tests.cli.conftest import COMMAND

TOKEN = "codec-token-0123456789abcdef"
UI = "http://localhost:8233"
K1 = generate_key_entry("k1")
K2 = generate_key_entry("k2")
LIMIT = 64 * 1024


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]


def _start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [COMMAND, "codec-server", "--port", "0", *args],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    process = _start(
        {ENCRYPTION_KEYS_ENV: f"{K2},{K1}", "SESSIONFLOW_CODEC_TOKEN": TOKEN},
        "--max-body-bytes",
        str(LIMIT),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until it listens (or exits)
        match = re.search(r"codec server on (http://\S+) for", line)
        assert match, f"no address in {line!r}; stderr: {process.stderr.read() if process.stderr else ''}"
        yield Server(match.group(1), process)
    finally:
        process.kill()
        process.wait(timeout=30)


def _auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _wire(payload: Payload) -> dict[str, object]:
    return {
        "metadata": {k: base64.b64encode(v).decode() for k, v in payload.metadata.items()},
        "data": base64.b64encode(payload.data).decode(),
    }


def _body(*texts: str) -> dict[str, list[dict[str, object]]]:
    return {
        "payloads": [
            {
                "metadata": {"encoding": base64.b64encode(b"json/plain").decode()},
                "data": base64.b64encode(json.dumps(text).encode()).decode(),
            }
            for text in texts
        ]
    }


def test_encode_then_decode_round_trips_with_the_ring_s_keys(server: Server) -> None:
    encoded = httpx.post(f"{server.url}/encode", json=_body("hello", "secret"), headers=_auth())
    assert encoded.status_code == 200, encoded.text
    payloads = encoded.json()["payloads"]
    assert [base64.b64decode(p["metadata"][KEY_ID_METADATA]) for p in payloads] == [b"k2", b"k2"]
    assert b"secret" not in base64.b64decode(payloads[1]["data"])
    decoded = httpx.post(f"{server.url}/decode", json={"payloads": payloads}, headers=_auth())
    assert decoded.status_code == 200
    assert decoded.json() == _body("hello", "secret")
    # A payload a worker wrote with the older key decodes too (key rotation), and a plain one passes.
    old = EncryptionCodec(KeyRing.parse(K1)).encode_now(
        [Payload(metadata={"encoding": b"json/plain"}, data=b'"old"')]
    )
    body = {"payloads": [_wire(old[0]), *_body("plain")["payloads"]]}
    decoded = httpx.post(f"{server.url}/decode", json=body, headers=_auth())
    assert decoded.status_code == 200
    assert decoded.json() == _body("old", "plain")
    # The token may also be the endpoint's first path part (for a UI that sends no header).
    by_path = httpx.post(f"{server.url}/{TOKEN}/encode", json=_body("x"))
    assert by_path.status_code == 200


def test_a_request_without_the_right_token_gets_401(server: Server) -> None:
    for headers in ({}, _auth("wrong-token-0123456789"), {"Authorization": f"Basic {TOKEN}"}):
        response = httpx.post(f"{server.url}/decode", json=_body("x"), headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "payloads" not in response.text
    assert httpx.post(f"{server.url}/wrong-token-0123456789/decode", json=_body("x")).status_code == 401
    assert httpx.get(f"{server.url}/decode", headers=_auth()).status_code == 405


def test_cors_answers_the_ui_s_origin_only(server: Server) -> None:
    preflight = {"Origin": UI, "Access-Control-Request-Method": "POST"}
    allowed = httpx.options(f"{server.url}/decode", headers=preflight)
    assert allowed.status_code == 204
    assert allowed.headers["Access-Control-Allow-Origin"] == UI
    assert "Authorization" in allowed.headers["Access-Control-Allow-Headers"]
    assert "POST" in allowed.headers["Access-Control-Allow-Methods"]
    for origin in ("http://evil.example", "http://localhost:8234", "null"):
        refused = httpx.options(f"{server.url}/decode", headers={**preflight, "Origin": origin})
        assert refused.status_code == 403
        assert "Access-Control-Allow-Origin" not in refused.headers
        post = httpx.post(f"{server.url}/encode", json=_body("x"), headers={**_auth(), "Origin": origin})
        assert "Access-Control-Allow-Origin" not in post.headers
    post = httpx.post(f"{server.url}/encode", json=_body("x"), headers={**_auth(), "Origin": UI})
    assert post.status_code == 200 and post.headers["Access-Control-Allow-Origin"] == UI


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", '{"payloads": [...]}'),
        (b'{"payloads": [3]}', "payload 0 is not an object"),
        (b'{"payloads": [{"data": "***"}]}', "must be base64"),
        (b'{"payloads": [{"metadata": [], "data": ""}]}', "metadata must be an object"),
    ],
)
def test_malformed_json_gets_a_clear_400(server: Server, content: bytes, message: str) -> None:
    response = httpx.post(
        f"{server.url}/decode", content=content, headers={**_auth(), "Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_a_body_over_the_limit_gets_413_and_an_undecodable_payload_422(server: Server) -> None:
    response = httpx.post(f"{server.url}/encode", json=_body("z" * LIMIT), headers=_auth())
    assert response.status_code == 413
    assert f"the limit is {LIMIT}" in response.json()["error"]
    foreign = EncryptionCodec(KeyRing.parse(generate_key_entry("k9"))).encode_now([Payload(data=b"x")])
    body = {"payloads": [_wire(foreign[0])]}
    response = httpx.post(f"{server.url}/decode", json=body, headers=_auth())
    assert response.status_code == 422
    assert "key 'k9', which is not in this process's key ring" in response.json()["error"]
    # The server still answers after all of these.
    assert httpx.post(f"{server.url}/encode", json=_body("x"), headers=_auth()).status_code == 200


def test_it_refuses_to_start_without_keys_or_token(tmp_path: Path) -> None:
    cases = [
        ({"SESSIONFLOW_CODEC_TOKEN": TOKEN}, "needs the encryption keys"),
        ({ENCRYPTION_KEYS_ENV: K1}, "needs a bearer token"),
        ({ENCRYPTION_KEYS_ENV: K1, "SESSIONFLOW_CODEC_TOKEN": "short"}, "16 or more characters"),
        ({ENCRYPTION_KEYS_ENV: "k1=abc", "SESSIONFLOW_CODEC_TOKEN": TOKEN}, "key 'k1' is 2 bytes"),
    ]
    clean = {k: "" for k in ("SESSIONFLOW_CODEC_TOKEN", "SESSIONFLOW_CODEC_TOKEN_FILE", ENCRYPTION_KEYS_ENV)}
    for env, message in cases:
        process = _start({**clean, "SESSIONFLOW_ENCRYPTION_KEYS_FILE": "", **env})
        _, err = process.communicate(timeout=60)
        assert process.returncode == 2, err
        assert message in err
    # --keys-file names the ring instead of the environment.
    keys = tmp_path / "keys"
    keys.write_text(f"{K1},{K1}\n")
    process = _start({**clean, "SESSIONFLOW_CODEC_TOKEN": TOKEN}, "--keys-file", str(keys))
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2 and f"{keys}: key ID 'k1' is given twice" in err


async def test_a_command_with_a_malformed_key_ring_stops_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not at its first payload: `open_payload_store` (every engine command's start) reads the ring."""
    monkeypatch.setenv(ENCRYPTION_KEYS_ENV, f"{K1},{K1}")
    with pytest.raises(
        UsageError, match="encryption keys: SESSIONFLOW_ENCRYPTION_KEYS: key ID 'k1' is given twice"
    ):
        await open_payload_store(PayloadStore(location=str(tmp_path / "payloads")))
    monkeypatch.setenv(ENCRYPTION_KEYS_ENV, K1)
    await open_payload_store(PayloadStore(location=str(tmp_path / "payloads")))


def test_its_access_log_never_shows_the_token(tmp_path: Path) -> None:
    """The Temporal UI's endpoint carries the token as the first path part; the log line must not."""
    wrong = "near-miss-token-0123456789abcdef"
    # Strict mode in its environment (as the workers') does not stop it showing plaintext.
    process = _start(
        {
            ENCRYPTION_KEYS_ENV: K1,
            "SESSIONFLOW_ENCRYPTION_REQUIRED": "1",
            "SESSIONFLOW_CODEC_TOKEN": TOKEN,
            "SESSIONFLOW_CODEC_TOKEN_FILE": "",
        }
    )
    try:
        assert process.stdout is not None
        match = re.search(r"codec server on (http://\S+) for", process.stdout.readline())
        assert match
        url = match.group(1)
        encoded = httpx.post(f"{url}/{TOKEN}/encode", json=_body("x"))
        assert encoded.status_code == 200
        assert httpx.post(f"{url}/{TOKEN}/decode?ns=default", json=encoded.json()).status_code == 200
        assert httpx.post(f"{url}/{wrong}/decode", json=_body("x")).status_code == 401
        assert httpx.post(f"{url}/decode", json=encoded.json(), headers=_auth()).status_code == 200
        plain = httpx.post(f"{url}/decode", json=_body("plain"), headers=_auth())
        assert plain.status_code == 200 and plain.json() == _body("plain")
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert TOKEN not in err, err
    assert wrong not in err, err
    # Each request is still logged, with its path redacted.
    assert '"POST /<redacted>/encode HTTP/1.1" 200' in err, err
    assert '"POST /<redacted>/decode?ns=default HTTP/1.1" 200' in err, err
    assert '"POST /<redacted>/decode HTTP/1.1" 401' in err, err
    assert '"POST /decode HTTP/1.1" 200' in err, err
