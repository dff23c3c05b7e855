"""The ``memvault`` CLI in local mode (on a data dir) and in remote mode (against the real server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.entrypoints.cli import main
from tests.integration.test_http_server import Server


@pytest.fixture(autouse=True)
def hashing_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hashing")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_local_save_recall_snapshot_get_list_update_delete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(tmp_path), "--json"]
    code, out = run(
        capsys,
        *base,
        "save",
        "--agent",
        "a1",
        "--user",
        "u1",
        "--type",
        "preference",
        "--content",
        "User prefers window seats",
        "--tags",
        "travel",
    )
    assert code == 0
    saved = json.loads(out)
    assert saved["action"] == "created"
    mid = saved["memory"]["id"]
    _, out = run(capsys, *base, "recall", "window seats", "--agent", "a1", "--user", "u1")
    assert json.loads(out)["hits"][0]["memory"]["id"] == mid
    _, out = run(capsys, *base, "snapshot", "--agent", "a1", "--user", "u1", "--trigger", "trip planning")
    snap = json.loads(out)
    assert snap["tokens"] <= 500 and snap["prompt_block"].startswith("## Recent Experience")
    _, out = run(
        capsys,
        *base,
        "update",
        mid,
        "--agent",
        "a1",
        "--user",
        "u1",
        "--content",
        "User prefers aisle seats",
        "--if-match",
        "1",
    )
    assert json.loads(out)["memory"]["version"] == 2
    _, out = run(capsys, *base, "list", "--agent", "a1", "--user", "u1")
    assert [m["content"] for m in json.loads(out)["items"]] == ["User prefers aisle seats"]
    code, out = run(capsys, *base, "delete", mid, "--agent", "a1", "--user", "u1")
    assert code == 0
    code, out = run(capsys, *base, "get", mid, "--agent", "a1", "--user", "u1")
    assert code == 2 and json.loads(out)["error"]["code"] == "not_found"


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(
        capsys,
        "--data-dir",
        str(tmp_path),
        "--json",
        "save",
        "--agent",
        "a1",
        "--type",
        "nope",
        "--content",
        "x",
    )
    assert code == 2
    assert json.loads(out)["error"] == {
        "code": "validation_error",
        "field": "type",
        "message": json.loads(out)["error"]["message"],
    }


def test_confidential_content_is_masked_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(tmp_path)]
    run(capsys, *base, "save", "--agent", "a1", "--content", "Carol's salary is 90k")
    _, table = run(capsys, *base, "list", "--agent", "a1")
    assert "[CONFIDENTIAL]" in table and "90k" not in table
    _, shown = run(capsys, *base, "--show-confidential", "list", "--agent", "a1")
    assert "90k" in shown


def test_keys_create_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--data-dir", str(tmp_path), "--json"]
    _, out = run(capsys, *base, "keys", "create", "--tenant", "acme", "--agents", "a1,a2", "--roles", "read")
    created = json.loads(out)
    assert created["key"].startswith("mv_") and created["roles"] == "read"
    _, out = run(capsys, *base, "keys", "list")
    listed = json.loads(out)
    assert [k["key_id"] for k in listed] == [created["key_id"]]
    assert "key" not in listed[0] and created["key"] not in out  # the secret is never stored or shown again
    code, out = run(capsys, *base, "keys", "revoke", created["key_id"])
    assert code == 0 and json.loads(out) == {"revoked": True}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "server")
    yield s
    s.close()


def test_remote_mode_drives_the_server(server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    remote = ["--url", server.url, "--key", server.key(), "--json"]
    _, out = run(
        capsys, *remote, "save", "--agent", "a1", "--content", "the release train leaves on Thursdays"
    )
    mid = json.loads(out)["memory"]["id"]
    _, out = run(capsys, *remote, "recall", "release train", "--agent", "a1")
    assert json.loads(out)["hits"][0]["memory"]["id"] == mid
    _, out = run(capsys, *remote, "get", mid, "--agent", "a1")
    assert json.loads(out)["memory"]["content"].endswith("Thursdays")
    code, out = run(
        capsys, "--url", server.url, "--key", "mv_bad_key", "--json", "recall", "x", "--agent", "a1"
    )
    assert code == 2 and json.loads(out)["error"]["code"] == "unauthenticated"
