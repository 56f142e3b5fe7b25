"""TokenStore and LoginCodes: hashed bearer tokens, their file, and one-time login codes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from sessionflow_server import LoginCodes, TokenStore
from sessionflow_server._tokens import LOGIN_CODE_LIFETIME, TokenStoreError, hash_token


def test_a_token_is_known_by_its_hash_only_and_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tokens.json"
    store = TokenStore(path)
    assert store.configured
    token = store.issue("ada")
    assert store.user_of(token) == "ada"
    assert store.user_of(token + "x") is None
    data = json.loads(path.read_text())
    assert data["version"] == 1
    [entry] = data["tokens"]
    assert (entry["sha256"], entry["user"]) == (hash_token(token), "ada")
    assert token not in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TokenStore(path).user_of(token) == "ada"
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # no temporary file left


def test_an_in_memory_store_writes_nothing(tmp_path: Path) -> None:
    store = TokenStore()
    assert not store.configured
    assert store.user_of(store.issue("bob")) == "bob"
    with pytest.raises(ValueError, match="a token needs a user"):
        store.issue("")


def test_tokens_are_256_random_bits_and_hashes_are_sha256() -> None:
    store = TokenStore()
    first, second = store.issue("ada"), store.issue("ada")
    assert first != second
    assert len(first) == 43  # token_urlsafe(32)
    assert hash_token("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_a_stored_hash_in_capitals_still_matches(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(
        json.dumps({"version": 1, "tokens": [{"sha256": hash_token("t").upper(), "user": "ada"}]})
    )
    assert TokenStore(path).user_of("t") == "ada"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "cannot read the token store"),
        ("[]", 'a token store is {"version": 1, "tokens": [...]}'),
        ('{"tokens": {}}', 'a token store is {"version": 1, "tokens": [...]}'),
        ('{"tokens": [1]}', "each token is an object with sha256 and user"),
        (
            '{"tokens": [{"sha256": "ab", "user": "ada"}]}',
            "each token needs a 64-hex sha256 and a non-empty user",
        ),
        ('{"tokens": [{"sha256": "' + "a" * 64 + '", "user": ""}]}', "each token needs a 64-hex sha256"),
        ('{"tokens": [{"sha256": "' + "a" * 64 + '", "user": 1}]}', "each token needs a 64-hex sha256"),
        ('{"tokens": [{"sha256": 1, "user": "ada"}]}', "each token needs a 64-hex sha256"),
    ],
)
def test_a_bad_store_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(content)
    with pytest.raises(TokenStoreError, match=message.replace("[", r"\[").replace("{", r"\{")):
        TokenStore(path)


def test_a_login_code_works_once_until_its_lifetime_ends() -> None:
    now = [1000.0]
    codes = LoginCodes(lifetime=10.0, clock=lambda: now[0])
    code = codes.issue("ada")
    assert codes.redeem(code) == "ada"
    assert codes.redeem(code) is None
    late = codes.issue("bob")
    now[0] += 9.999
    assert codes.redeem(late) == "bob"
    expired = codes.issue("eve")
    now[0] += 10.0  # exactly its lifetime: gone
    assert codes.redeem(expired) is None
    assert LoginCodes().lifetime == LOGIN_CODE_LIFETIME == 600.0


def test_redeeming_clears_expired_codes_but_keeps_live_ones() -> None:
    now = [0.0]
    codes = LoginCodes(lifetime=5.0, clock=lambda: now[0])
    old = codes.issue("ada")
    now[0] = 3.0
    young = codes.issue("bob")
    now[0] = 6.0
    assert codes.redeem("unknown") is None
    assert codes.redeem(old) is None
    assert codes.redeem(young) == "bob"


def test_revoke_removes_every_token_of_a_user_and_a_running_store_refuses_them(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    serving = TokenStore(path)  # the server's store, which keeps its map in memory
    ada1, ada2, bob = serving.issue("ada"), serving.issue("ada"), serving.issue("bob")
    assert serving.user_of(ada1) == "ada"
    # Another process (`sessionflow serve --revoke-token ada`) rewrites the file.
    assert TokenStore(path).revoke("ada") == 2
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [e["user"] for e in json.loads(path.read_text())["tokens"]] == ["bob"]
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]
    assert serving.user_of(ada1) is None and serving.user_of(ada2) is None
    assert serving.user_of(bob) == "bob"
    assert TokenStore(path).revoke("ada") == 0
    # An issue by the server after the revocation does not write the revoked tokens back.
    carl = serving.issue("carl")
    assert TokenStore(path).user_of(ada1) is None
    assert TokenStore(path).user_of(carl) == "carl"


def test_a_store_file_that_becomes_unreadable_grants_nothing(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    store = TokenStore(path)
    token = store.issue("ada")
    path.write_text("{not json")
    assert store.user_of(token) is None
    path.unlink()
    assert store.user_of(token) is None


def test_an_existing_store_file_readable_by_others_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"version": 1, "tokens": [{"sha256": hash_token("t"), "user": "ada"}]}))
    path.chmod(0o644)
    assert TokenStore(path).user_of("t") == "ada"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_store_path_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "tokens.json"
    folder.mkdir()
    with pytest.raises(TokenStoreError, match="cannot read the token store"):
        TokenStore(folder)


def test_after_the_file_is_removed_a_new_token_starts_a_new_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    store = TokenStore(path)
    old = store.issue("ada")
    path.unlink()  # the operator removed every token
    carl = store.issue("carl")
    assert store.user_of(old) is None and store.user_of(carl) == "carl"
    assert [e["user"] for e in json.loads(path.read_text())["tokens"]] == ["carl"]


@pytest.mark.parametrize("in_file", [False, True])
def test_the_revoking_store_itself_refuses_the_revoked_tokens(tmp_path: Path, in_file: bool) -> None:
    store = TokenStore(tmp_path / "tokens.json" if in_file else None)
    ada, bob = store.issue("ada"), store.issue("bob")
    assert store.revoke("ada") == 1
    assert store.user_of(ada) is None
    assert store.user_of(bob) == "bob"
    assert store.revoke("ada") == 0
    assert store.user_of(bob) == "bob"


def test_a_login_code_is_192_random_bits() -> None:
    codes = LoginCodes()
    first, second = codes.issue("ada"), codes.issue("ada")
    assert first != second
    assert len(first) == 32  # token_urlsafe(24)
