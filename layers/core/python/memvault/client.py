"""Python client for the memvault HTTP API (stdlib only), used by the CLI's remote mode and tests.

Retries 429 and 503 with backoff, honouring ``Retry-After``. Errors raise :class:`ApiError` with
the server's machine-readable code.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from memvault.domain.models import Memory, RecallResult, SaveResult, Snapshot, SnapshotItem


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field


class MemvaultClient:
    def __init__(self, url: str, key: str | None = None, *, timeout: float = 30.0, retries: int = 3) -> None:
        self.url = url.rstrip("/")
        self.key = key
        self.timeout = timeout
        self.retries = retries

    # -- transport ---------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        data = None if body is None else json.dumps(body).encode()
        hdrs = {"Accept": "application/json", **(headers or {})}
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        if self.key:
            hdrs["Authorization"] = f"Bearer {self.key}"
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    return resp.status, json.loads(raw) if raw else None, dict(resp.headers)
            except urllib.error.HTTPError as exc:
                raw = exc.read()
                if exc.code in (429, 503) and attempt < self.retries:
                    attempt += 1
                    time.sleep(_retry_after(exc.headers.get("Retry-After"), attempt))
                    continue
                try:
                    err = json.loads(raw)["error"]
                except (ValueError, KeyError, TypeError):
                    err = {"code": "http_error", "message": raw.decode(errors="replace")[:200]}
                raise ApiError(
                    exc.code, err.get("code", "error"), err.get("message", ""), err.get("field")
                ) from None

    # -- API ---------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return dict(self.request("GET", "/v1/health")[1])

    def save(
        self,
        agent_id: str,
        content: str,
        *,
        type: str = "fact",
        user_id: str = "",
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> SaveResult:
        body = {"agent_id": agent_id, "user_id": user_id, "type": type, "content": content, **fields}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        _, data, _ = self.request("POST", "/v1/memories", body=body, headers=headers)
        return SaveResult.model_validate(data)

    def save_batch(
        self, agent_id: str, items: list[dict[str, Any]], *, user_id: str = ""
    ) -> list[SaveResult]:
        _, data, _ = self.request(
            "POST", "/v1/memories:batch", body={"agent_id": agent_id, "user_id": user_id, "items": items}
        )
        return [SaveResult.model_validate(r) for r in data["results"]]

    def get(self, memory_id: str, agent_id: str, *, user_id: str = "") -> Memory:
        _, data, _ = self.request(
            "GET", f"/v1/memories/{memory_id}", query={"agent_id": agent_id, "user_id": user_id}
        )
        return Memory.model_validate(data)

    def update(
        self, memory_id: str, agent_id: str, *, user_id: str = "", if_match: int | None = None, **changes: Any
    ) -> Memory:
        headers = {"If-Match": str(if_match)} if if_match is not None else None
        _, data, _ = self.request(
            "PATCH",
            f"/v1/memories/{memory_id}",
            body=changes,
            query={"agent_id": agent_id, "user_id": user_id},
            headers=headers,
        )
        return Memory.model_validate(data)

    def delete(self, memory_id: str, agent_id: str, *, user_id: str = "") -> None:
        self.request("DELETE", f"/v1/memories/{memory_id}", query={"agent_id": agent_id, "user_id": user_id})

    def list(self, agent_id: str, *, user_id: str = "", **query: Any) -> tuple[list[Memory], str | None]:
        _, data, _ = self.request(
            "GET", "/v1/memories", query={"agent_id": agent_id, "user_id": user_id, **query}
        )
        return [Memory.model_validate(m) for m in data["items"]], data.get("next_cursor")

    def recall(self, agent_id: str, query: str, *, user_id: str = "", **options: Any) -> RecallResult:
        body = {"agent_id": agent_id, "user_id": user_id, "query": query, **options}
        _, data, _ = self.request("POST", "/v1/recall", body=body)
        return RecallResult.model_validate(data)

    def snapshot(self, agent_id: str, trigger: str, *, user_id: str = "", **options: Any) -> Snapshot:
        body = {"agent_id": agent_id, "user_id": user_id, "trigger": trigger, **options}
        _, data, _ = self.request("POST", "/v1/snapshot", body=body)
        return Snapshot(
            items=[SnapshotItem.model_validate(i) for i in data["items"]],
            prompt_block=data["prompt_block"],
            tokens=data["tokens"],
            token_budget=data["token_budget"],
        )


def _retry_after(value: str | None, attempt: int) -> float:
    if value:
        try:
            return float(min(max(float(value), 0.0), 30.0))
        except ValueError:
            pass
    return float(min(0.25 * 2.0**attempt, 5.0))
