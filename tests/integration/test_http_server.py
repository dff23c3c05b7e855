"""The real local server (waitress + the shared Powertools router) on a free loopback port, driven
over HTTP with the Python client: every route, authentication failures and isolation attempts."""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from waitress.server import create_server

from memvault.adapters.local.keys import SqliteKeyStore, load_pepper
from memvault.adapters.local.sqlite_db import SqliteDatabase
from memvault.api import app as api
from memvault.bootstrap import build_services
from memvault.client import ApiError, MemvaultClient
from memvault.config import Settings
from memvault.domain.models import Scope
from memvault.entrypoints.local_server import make_wsgi_app

NOW = datetime.now(UTC)


class Server:
    def __init__(self, tmp: Path) -> None:
        settings = Settings(embedder="hashing", data_dir=tmp)
        self.svc = build_services(settings)
        api.use_services(lambda: self.svc)
        db = SqliteDatabase(settings.database_path)
        self.keys = SqliteKeyStore(db, load_pepper(tmp / "pepper"))
        self.server = create_server(
            make_wsgi_app(self.keys.authenticate), host="127.0.0.1", port=0, threads=4
        )
        self.url = f"http://127.0.0.1:{self.server.effective_port}"  # type: ignore[union-attr]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with contextlib.suppress(OSError):  # close() pulls the socket from under the poll loop
            self.server.run()

    def key(self, tenant: str = "acme", **kw: object) -> str:
        key, _ = self.keys.create(tenant, now=NOW, **kw)  # type: ignore[arg-type]
        return key

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    yield s
    s.close()


def raw(
    url: str, method: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            data = r.read()
            return r.status, json.loads(data) if data else {}
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_every_route_round_trip(server: Server) -> None:
    c = MemvaultClient(server.url, server.key(roles=["read", "write"]))
    assert c.health()["status"] == "ok"
    saved = c.save(
        "a1", "User prefers dark mode in every editor", type="preference", user_id="u1", tags=["ui"]
    )
    assert saved.action == "created"
    mid = saved.memory.id
    again = c.save("a1", "User prefers dark mode in every editor", type="preference", user_id="u1")
    assert again.action == "unchanged" and again.memory.id == mid
    batch = c.save_batch(
        "a1", [{"type": "fact", "content": f"fact number {i} about kafka"} for i in range(3)], user_id="u1"
    )
    assert [r.action for r in batch] == ["created"] * 3
    got = c.get(mid, "a1", user_id="u1")
    assert got.content.startswith("User prefers dark mode")
    updated = c.update(mid, "a1", user_id="u1", if_match=1, content="User prefers light mode now")
    assert updated.version == 2
    with pytest.raises(ApiError) as stale:
        c.update(mid, "a1", user_id="u1", if_match=1, content="stale write")
    assert stale.value.status == 412 and stale.value.code == "version_conflict"
    items, cursor = c.list("a1", user_id="u1", limit=2)
    assert len(items) == 2 and cursor
    more, _ = c.list("a1", user_id="u1", limit=10, cursor=cursor)
    assert len(more) == 2
    result = c.recall("a1", "light mode editor", user_id="u1")
    assert result.hits[0].memory.id == mid
    c.recall("a1", "light mode editor", user_id="u1")
    assert c.health()["query_cache"]["hits"] >= 1
    assert result.prompt_block.startswith("<memory-context>")
    snap = c.snapshot("a1", "start of run", user_id="u1", focus="editor")
    assert snap.tokens <= 500 and snap.prompt_block.startswith("## Recent Experience")
    c.delete(mid, "a1", user_id="u1")
    with pytest.raises(ApiError) as gone:
        c.get(mid, "a1", user_id="u1")
    assert gone.value.status == 404


def test_idempotency_key_header_replays_and_conflicts(server: Server) -> None:
    c = MemvaultClient(server.url, server.key())
    a = c.save("a1", "only once", idempotency_key="req-1")
    b = c.save("a1", "only once", idempotency_key="req-1")
    assert a.memory.id == b.memory.id
    with pytest.raises(ApiError) as err:
        c.save("a1", "different body", idempotency_key="req-1")
    assert err.value.status == 409


def test_authentication_failures(server: Server) -> None:
    status, body = raw(server.url + "/v1/recall", "POST", b"{}")
    assert status == 401 and body["error"]["code"] == "unauthenticated"
    bad = MemvaultClient(server.url, "mv_nope_nothing")
    with pytest.raises(ApiError) as e1:
        bad.recall("a1", "x")
    assert e1.value.status == 401
    key = server.key()
    tampered = MemvaultClient(server.url, key[:-2] + "xx")
    with pytest.raises(ApiError) as e2:
        tampered.recall("a1", "x")
    assert e2.value.status == 401
    key_id = key.split("_")[1]
    assert server.keys.revoke(key_id, NOW)
    with pytest.raises(ApiError) as e3:
        MemvaultClient(server.url, key).recall("a1", "x")
    assert e3.value.status == 401


def test_roles_and_agents_are_enforced(server: Server) -> None:
    reader = MemvaultClient(server.url, server.key(roles=["read"]))
    with pytest.raises(ApiError) as e1:
        reader.save("a1", "no write role")
    assert e1.value.status == 403 and e1.value.code == "forbidden"
    writer = MemvaultClient(server.url, server.key(roles=["read", "write"]))
    with pytest.raises(ApiError) as e2:
        writer.save("a1", "backdated", created_at="2020-01-01T00:00:00Z")
    assert e2.value.status == 403
    only_a1 = MemvaultClient(server.url, server.key(agents=["a1"]))
    with pytest.raises(ApiError) as e3:
        only_a1.recall("a2", "anything")
    assert e3.value.status == 403


def test_other_tenant_and_agent_get_the_same_404_as_missing(server: Server) -> None:
    owner = MemvaultClient(server.url, server.key("acme"))
    mid = owner.save("a1", "acme's secret roadmap item", user_id="u1").memory.id
    intruder = MemvaultClient(server.url, server.key("globex"))
    for client, agent, user in [(intruder, "a1", "u1"), (owner, "a2", "u1"), (owner, "a1", "u2")]:
        with pytest.raises(ApiError) as err:
            client.get(mid, agent, user_id=user)
        assert err.value.status == 404
        missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
        with pytest.raises(ApiError) as err2:
            client.get(missing, agent, user_id=user)
        assert (err2.value.status, err2.value.code) == (err.value.status, err.value.code)
        with pytest.raises(ApiError):
            client.delete(mid, agent, user_id=user)
        assert client.recall(agent, "secret roadmap", user_id=user).hits == []
    assert owner.get(mid, "a1", user_id="u1").content == "acme's secret roadmap item"


def test_confidential_content_is_masked_without_clearance(server: Server) -> None:
    writer = MemvaultClient(server.url, server.key(clearance="restricted"))
    mid = writer.save("a1", "Bob's salary is 150k", security_level="confidential").memory.id
    low = MemvaultClient(server.url, server.key(clearance="internal"))
    assert low.get(mid, "a1").content == "[CONFIDENTIAL]"
    hits = low.recall("a1", "Bob salary").hits
    assert hits and all(h.memory.content == "[CONFIDENTIAL]" for h in hits)
    assert writer.get(mid, "a1").content == "Bob's salary is 150k"


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("POST", "/v1/memories", b"{not json", 400, "invalid_json"),
        ("POST", "/v1/memories", b'{"agent_id":"a1","type":"fact","content":""}', 422, "validation_error"),
        ("POST", "/v1/memories", b'{"agent_id":"a1","type":"nope","content":"x"}', 422, "validation_error"),
        ("POST", "/v1/recall", b'{"agent_id":"a1","query":"x","limit":50}', 422, "validation_error"),
        ("GET", "/v1/nothing-here", None, 404, "route_not_found"),
        ("PUT", "/v1/recall", b"{}", 405, "method_not_allowed"),
        ("POST", "/v1/memories", b"x" * (1024 * 1024 + 1), 413, "payload_too_large"),
    ],
)
def test_bad_requests_get_clear_4xx(
    server: Server, method: str, path: str, body: bytes | None, status: int, code: str
) -> None:
    key = server.key()
    got, data = raw(server.url + path, method, body, {"Authorization": f"Bearer {key}"})
    assert got == status
    assert data["error"]["code"] == code
    assert server.svc.repository.count(Scope(tenant_id="acme", agent_id="a1"), include_archived=True) == 0


def test_openapi_document_is_served(server: Server) -> None:
    status, doc = raw(server.url + "/v1/openapi.json", "GET")
    assert status == 200
    assert {"/v1/memories", "/v1/recall", "/v1/snapshot", "/v1/memories/{memory_id}"} <= set(doc["paths"])


def test_swagger_ui_is_served_with_bundled_assets(server: Server) -> None:
    with urllib.request.urlopen(server.url + "/docs", timeout=10) as r:
        page = r.read().decode()
    assert r.status == 200 and "swagger" in page.lower()
    with urllib.request.urlopen(server.url + "/docs?format=js", timeout=10) as r:
        assert r.status == 200 and len(r.read()) > 100_000  # served locally, no CDN needed
