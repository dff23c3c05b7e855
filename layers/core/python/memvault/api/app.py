"""The HTTP API: one Powertools REST resolver used by every Lambda function and by the local server.

Handlers parse, call one service, and map the result. Domain errors map to HTTP in one table and
every error body is ``{"error": {"code", "message", "field"?}}``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer
from aws_lambda_powertools.event_handler.openapi.params import Query

from memvault import __version__
from memvault.api.caller import Caller
from memvault.api.schemas import (
    BatchBody,
    BatchResponse,
    HealthResponse,
    ListResponse,
    MemoryOut,
    RecallBody,
    RecallResponse,
    SaveBody,
    SaveResponse,
    SnapshotBody,
    SnapshotResponse,
    masked,
    memory_view,
    responses,
)
from memvault.bootstrap import Services
from memvault.domain.errors import (
    ForbiddenError,
    IdempotencyConflictError,
    MemvaultError,
    NotFoundError,
    PoisoningRejectedError,
    UnavailableError,
    ValidationError,
    VersionConflictError,
)
from memvault.domain.models import Memory, Scope, UpdateCommand, parse
from memvault.domain.prompt import context_block

log = logging.getLogger("memvault.api")

MAX_BODY_BYTES = 1024 * 1024

ERROR_STATUS: dict[type[MemvaultError], int] = {
    ValidationError: 422,
    NotFoundError: 404,
    ForbiddenError: 403,
    VersionConflictError: 412,
    IdempotencyConflictError: 409,
    PoisoningRejectedError: 422,
    UnavailableError: 503,
}

app = APIGatewayRestResolver(enable_validation=True)

AgentParam = Annotated[str, Query(max_length=128, description="the agent the memory belongs to")]
UserParam = Annotated[str, Query(max_length=128, description="end user; empty for agent-wide memories")]
app.enable_swagger(
    path="/docs",
    title="memvault",
    version=__version__,
    description="Long-term memory for AI agents. Authenticate with `Authorization: Bearer <key>`.",
    security_schemes={"bearer": HTTPBearer(description="memvault API key (mv_<id>_<secret>)")},
    security=[{"bearer": []}],
)

_services_provider: Callable[[], Services] | None = None


def use_services(provider: Callable[[], Services]) -> None:
    """Point the routes at a composition (the local server and tests call this)."""
    global _services_provider  # noqa: PLW0603 - the one injection point of the router
    _services_provider = provider


def services() -> Services:
    if _services_provider is None:
        from memvault.bootstrap import services as default

        return default()
    return _services_provider()


def caller() -> Caller:
    ctx = app.current_event.request_context.authorizer.raw_event
    return Caller.from_context(ctx)


def authorize(role: str, agent_id: str, user_id: str) -> tuple[Caller, Scope]:
    """The caller, checked for ``role``, and the scope it asks for (its agents only)."""
    who = caller()
    who.require(role)
    return who, who.scope(agent_id, user_id)


def error_response(status: int, code: str, message: str, field: str | None = None) -> Response[str]:
    body: dict[str, Any] = {"code": code, "message": message}
    if field:
        body["field"] = field
    return Response(status_code=status, content_type="application/json", body=json.dumps({"error": body}))


def _json(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response[str]:
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps(payload, ensure_ascii=False),
        headers=headers,
    )


def _view(memory: Memory, who: Caller) -> dict[str, Any]:
    return memory_view(memory.public_dict(), who.clearance)


# -- errors ------------------------------------------------------------------------------------
@app.exception_handler(MemvaultError)
def _domain_error(exc: MemvaultError) -> Response[str]:
    status = next((s for cls, s in ERROR_STATUS.items() if isinstance(exc, cls)), 400)
    return error_response(status, exc.code, exc.message, exc.field)


@app.exception_handler(RequestValidationError)
def _request_error(exc: RequestValidationError) -> Response[str]:
    first = exc.errors()[0] if exc.errors() else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path", "header")]
    field = ".".join(loc) or None
    msg = str(first.get("msg") or first.get("type") or "invalid request").removeprefix("Value error, ")
    if first.get("type") == "json_invalid":
        return error_response(400, "invalid_json", "request body is not valid JSON")
    return error_response(422, "validation_error", f"{field or 'body'}: {msg}", field)


@app.exception_handler([json.JSONDecodeError, UnicodeDecodeError])
def _bad_json(_: Exception) -> Response[str]:
    return error_response(400, "invalid_json", "request body is not valid UTF-8 JSON")


ROUTES: list[tuple[re.Pattern[str], set[str]]] = []


def _route_table() -> list[tuple[re.Pattern[str], set[str]]]:
    if not ROUTES:
        table: dict[str, set[str]] = {}
        for route in app._static_routes + app._dynamic_routes:
            table.setdefault(route.rule.pattern, set()).add(route.method)
        ROUTES.extend((re.compile(p), m) for p, m in table.items())
    return ROUTES


@app.not_found
def _not_found(_: Exception) -> Response[str]:
    path = app.current_event.path
    for pattern, methods in _route_table():
        if pattern.match(path):
            return Response(
                status_code=405,
                content_type="application/json",
                body=json.dumps({"error": {"code": "method_not_allowed", "message": "method not allowed"}}),
                headers={"Allow": ", ".join(sorted(methods))},
            )
    return error_response(404, "route_not_found", f"no route {path}")


# -- routes ------------------------------------------------------------------------------------
@app.get("/v1/health", responses=responses(200, HealthResponse, "service health"))
def health() -> Response[str]:
    svc = services()
    body: dict[str, Any] = {"status": "ok", "version": __version__, "embedder": svc.embedder.model_id}
    emb = svc.embedder  # a CachedEmbedder unless a test composed another
    cache = {
        "hits": getattr(emb, "hits", 0),
        "misses": getattr(emb, "misses", 0),
        "hit_rate": round(getattr(emb, "hit_rate", 0.0), 4),
    }
    return _json(200, {**body, "backend": svc.settings.backend, "query_cache": cache})


@app.post("/v1/memories", responses=responses(201, SaveResponse, "created (200: updated or unchanged)"))
def save_memory(body: SaveBody) -> Response[str]:
    who = caller()
    who.require("write")
    scope = who.scope(body.agent_id, body.user_id)
    command = body.command()
    key = app.current_event.headers.get("Idempotency-Key") or app.current_event.headers.get("idempotency-key")
    if key:
        command = command.model_copy(update={"idempotency_key": key})
    if command.created_at is not None and "admin" not in who.roles:
        raise ForbiddenError("only admin keys may set created_at", field="created_at")
    result = services().memories.save(scope, command, trusted="admin" in who.roles)
    status = 201 if result.action == "created" else 200
    return _json(status, {"memory": _view(result.memory, who), "action": result.action})


@app.post("/v1/memories:batch", responses=responses(200, BatchResponse, "per-item results"))
def save_batch(body: BatchBody) -> Response[str]:
    who = caller()
    who.require("write")
    scope = who.scope(body.agent_id, body.user_id)
    if any(i.created_at is not None for i in body.items) and "admin" not in who.roles:
        raise ForbiddenError("only admin keys may set created_at", field="created_at")
    results = services().memories.save_batch(scope, list(body.items), trusted="admin" in who.roles)
    return _json(200, {"results": [{"memory": _view(r.memory, who), "action": r.action} for r in results]})


@app.get("/v1/memories/<memory_id>", responses=responses(200, MemoryOut, "the memory"))
def get_memory(
    memory_id: str,
    agent_id: AgentParam,
    user_id: UserParam = "",
) -> Response[str]:
    who, scope = authorize("read", agent_id, user_id)
    memory = services().memories.get(scope, memory_id)
    return _json(200, _view(memory, who), headers={"ETag": str(memory.version)})


@app.patch("/v1/memories/<memory_id>", responses=responses(200, MemoryOut, "the updated memory"))
def update_memory(
    memory_id: str,
    agent_id: AgentParam,
    user_id: UserParam = "",
) -> Response[str]:
    who, scope = authorize("write", agent_id, user_id)
    command = parse(UpdateCommand, app.current_event.json_body)
    if_match = app.current_event.headers.get("If-Match") or app.current_event.headers.get("if-match")
    expected = None
    if if_match:
        try:
            expected = int(if_match.strip('"W/ '))
        except ValueError:
            raise ValidationError("If-Match: must be a memory version number", field="If-Match") from None
    memory = services().memories.update(scope, memory_id, command, expected_version=expected)
    return _json(200, _view(memory, who), headers={"ETag": str(memory.version)})


@app.delete("/v1/memories/<memory_id>", responses=responses(204, None, "deleted"))
def delete_memory(
    memory_id: str,
    agent_id: AgentParam,
    user_id: UserParam = "",
) -> Response[str]:
    _, scope = authorize("write", agent_id, user_id)
    services().memories.delete(scope, memory_id)
    return Response(status_code=204, content_type="application/json", body="")


@app.get("/v1/memories", responses=responses(200, ListResponse, "a page of memories"))
def list_memories(
    agent_id: AgentParam,
    user_id: UserParam = "",
    type: Annotated[str | None, Query(max_length=32)] = None,
    tag: Annotated[str | None, Query(max_length=64)] = None,
    session_id: Annotated[str | None, Query(max_length=128)] = None,
    include_archived: bool = False,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> Response[str]:
    who, scope = authorize("read", agent_id, user_id)
    page = services().memories.list_page(
        scope,
        types=[type] if type else [],
        tags=[tag] if tag else [],
        session_id=session_id,
        include_archived=include_archived,
        limit=limit,
        cursor=cursor,
    )
    return _json(200, {"items": [_view(m, who) for m in page.items], "next_cursor": page.next_cursor})


@app.post("/v1/recall", responses=responses(200, RecallResponse, "ranked hits"))
def recall(body: RecallBody) -> Response[str]:
    who = caller()
    who.require("read")
    result = services().recall.recall(who.scope(body.agent_id, body.user_id), body.query_model())
    hits = [
        {**h.model_dump(mode="json", exclude={"memory"}), "memory": _view(h.memory, who)} for h in result.hits
    ]
    shown = [masked(h.memory, who.clearance) for h in result.hits]
    return _json(
        200,
        {
            "hits": hits,
            "degraded": result.degraded,
            "retrievers": result.retrievers,
            "prompt_block": context_block(shown),
        },
    )


@app.post("/v1/snapshot", responses=responses(200, SnapshotResponse, "the snapshot"))
def snapshot(body: SnapshotBody) -> Response[str]:
    who = caller()
    who.require("read")
    snap = services().snapshot.snapshot(
        who.scope(body.agent_id, body.user_id), body.request(), max_security_rank=who.clearance.rank
    )
    items = [
        {"memory": _view(i.memory, who), "reason": i.reason, "text": i.text, "tokens": i.tokens}
        for i in snap.items
    ]
    return _json(
        200,
        {
            "items": items,
            "prompt_block": snap.prompt_block,
            "tokens": snap.tokens,
            "token_budget": snap.token_budget,
        },
    )


def openapi_json() -> str:
    return app.get_openapi_json_schema(
        title="memvault",
        version=__version__,
        security_schemes={"bearer": HTTPBearer()},
        security=[{"bearer": []}],
    )
