"""The local HTTP server: waitress (a production WSGI server) in front of the same Powertools
resolver the Lambda functions use. Each HTTP request becomes an API Gateway REST proxy event with
the authenticated caller in ``requestContext.authorizer``, exactly as the Lambda authorizer puts it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import signal
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from memvault.api import app as api
from memvault.api.caller import Caller
from memvault.domain.models import SecurityLevel

log = logging.getLogger("memvault.server")

StartResponse = Callable[..., Any]
Authenticator = Callable[[str], Caller | None]

DEV_CALLER = Caller(
    tenant_id="local", agents=None, roles=("read", "write", "admin"), clearance=SecurityLevel.RESTRICTED
)
PUBLIC_PATHS = {"/v1/health", "/v1/openapi.json", "/docs"}


class _LambdaContext:
    function_name = "memvault-local"
    memory_limit_in_mb = 0
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:memvault-local"
    aws_request_id = ""

    def __init__(self) -> None:
        self.aws_request_id = str(uuid.uuid4())

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def _error(
    start: StartResponse, status: str, code: str, message: str, extra: list[tuple[str, str]] | None = None
) -> list[bytes]:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    start(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *(extra or [])])
    return [body]


def build_event(environ: dict[str, Any], body: bytes, caller: Caller | None) -> dict[str, Any]:
    headers = {k[5:].replace("_", "-").title(): v for k, v in environ.items() if k.startswith("HTTP_")}
    # The API speaks JSON only: bodies are parsed as JSON whatever Content-Type says (curl -d
    # sends a form type by default).
    headers["Content-Type"] = "application/json"
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    path = environ.get("PATH_INFO") or "/"
    # Bodies that are not UTF-8 are passed base64-encoded, as API Gateway does; the router answers
    # them with 400 invalid_json.
    try:
        text = body.decode("utf-8")
        is_b64 = False
    except UnicodeDecodeError:
        text, is_b64 = base64.b64encode(body).decode(), True
    return {
        "resource": path,
        "path": path,
        "httpMethod": environ["REQUEST_METHOD"],
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": environ["REQUEST_METHOD"],
            "path": path,
            "stage": "local",
            "requestId": str(uuid.uuid4()),
            "identity": {"sourceIp": environ.get("REMOTE_ADDR", "")},
            "authorizer": caller.to_context() if caller else {},
        },
        "body": text or None,
        "isBase64Encoded": is_b64,
    }


def make_wsgi_app(authenticate: Authenticator | None, *, dev: bool = False) -> Callable[..., Iterable[bytes]]:
    """The WSGI application. ``dev`` skips authentication (the server then binds to loopback)."""

    def application(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        seen: list[str] = []

        def recording_start(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            seen.append(status)
            return start_response(status, headers, *exc)

        try:
            return _handle(environ, recording_start)
        finally:
            log.info(
                "%s %s %s %.1fms",
                environ["REQUEST_METHOD"],
                environ.get("PATH_INFO", "/"),
                seen[0].split(" ")[0] if seen else "-",
                (time.perf_counter() - started) * 1000,
            )

    def _handle(environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/v1/openapi.json":
            body = api.openapi_json().encode()
            start_response(
                "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return [body]
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _error(start_response, "400 Bad Request", "bad_request", "invalid Content-Length")
        if length > api.MAX_BODY_BYTES:
            return _error(
                start_response,
                "413 Payload Too Large",
                "payload_too_large",
                f"request body over {api.MAX_BODY_BYTES} bytes",
            )
        body = environ["wsgi.input"].read(length) if length else b""
        caller: Caller | None = None
        if dev:
            caller = DEV_CALLER
        elif path not in PUBLIC_PATHS:
            header = environ.get("HTTP_AUTHORIZATION", "")
            token = header[7:].strip() if header.lower().startswith("bearer ") else ""
            if not token:
                return _error(
                    start_response,
                    "401 Unauthorized",
                    "unauthenticated",
                    "missing Authorization: Bearer <key>",
                    [("WWW-Authenticate", "Bearer")],
                )
            caller = authenticate(token) if authenticate else None
            if caller is None:
                return _error(
                    start_response,
                    "401 Unauthorized",
                    "unauthenticated",
                    "invalid or revoked key",
                    [("WWW-Authenticate", "Bearer")],
                )
        event = build_event(environ, body, caller)
        try:
            response = api.app.resolve(event, _LambdaContext())  # type: ignore[arg-type]
        except Exception:
            log.exception("unhandled error for %s %s", environ["REQUEST_METHOD"], path)
            return _error(start_response, "500 Internal Server Error", "internal_error", "internal error")
        code = int(response["statusCode"])
        payload = response.get("body") or ""
        data = base64.b64decode(payload) if response.get("isBase64Encoded") else payload.encode()
        headers: list[tuple[str, str]] = []
        for k, values in (response.get("multiValueHeaders") or {}).items():
            headers.extend((k, str(v)) for v in values)
        for k, v in (response.get("headers") or {}).items():
            headers.append((k, str(v)))
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        headers.append(("Content-Length", str(len(data))))
        start_response(f"{code} {_reason(code)}", headers)
        return [data] if code != 204 else []

    return application


def _reason(code: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "Unknown"


def build_app(settings: Any, *, dev: bool) -> Callable[..., Iterable[bytes]]:
    """The composed WSGI application for ``settings`` (one per process)."""
    from memvault.adapters.local.keys import SqliteKeyStore, load_pepper
    from memvault.adapters.local.sqlite_db import SqliteDatabase
    from memvault.bootstrap import build_services

    svc = build_services(settings)
    api.use_services(lambda: svc)
    keys = SqliteKeyStore(SqliteDatabase(settings.database_path), load_pepper(settings.data_dir / "pepper"))
    return make_wsgi_app(keys.authenticate, dev=dev)


def serve(
    host: str,
    port: int,
    *,
    data_dir: str | None = None,
    dev: bool = False,
    threads: int = 8,
    workers: int = 1,
    ready: Callable[[int], None] | None = None,
) -> None:
    """Run the server until SIGINT/SIGTERM; in-flight requests finish before it exits.

    One process (waitress, ``threads`` threads) by default; ``workers`` > 1 runs gunicorn with that
    many pre-forked processes of ``threads`` threads each, every one with its own model and vector
    cache over the same SQLite file (WAL; each process sees the others' writes through the write
    sequence). Python's GIL caps one process at about one core.
    """
    from memvault.config import Settings, get_settings

    settings = get_settings() if data_dir is None else Settings(data_dir=Path(data_dir))
    if dev and host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("--dev runs without authentication: binding to 127.0.0.1 instead of %s", host)
        host = "127.0.0.1"
    log.info(
        "memvault %s on http://%s:%s (%s, data %s, %d worker(s) x %d threads)",
        "dev mode" if dev else "auth",
        host,
        port,
        settings.embedder,
        settings.data_dir,
        workers,
        threads,
    )
    if workers > 1:
        _serve_gunicorn(settings, host, port, dev=dev, threads=threads, workers=workers)
        return
    from waitress.server import create_server

    server = create_server(
        build_app(settings, dev=dev), host=host, port=port, threads=threads, ident="memvault"
    )
    bound = server.effective_port

    def stop(signum: int, _frame: Any) -> None:
        log.info("signal %s: shutting down", signum)
        server.close()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if ready:
        ready(int(bound))
    with contextlib.suppress(OSError):  # closed by the signal handler
        server.run()
    log.info("stopped at %s", datetime.now(UTC).isoformat())


def _serve_gunicorn(settings: Any, host: str, port: int, *, dev: bool, threads: int, workers: int) -> None:
    from gunicorn.app.base import BaseApplication

    class _App(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            self.cfg.set("bind", f"{host}:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("threads", threads)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("graceful_timeout", 30)
            self.cfg.set("accesslog", None)

        def load(self) -> Callable[..., Iterable[bytes]]:
            return build_app(settings, dev=dev)  # in each worker, after the fork

    _App().run()
