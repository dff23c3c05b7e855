"""``memvault`` command line. Local mode works on the data dir directly (tenant ``local`` unless
``--tenant``); remote mode (``--url`` and ``--key``) talks to a server through the Python client.
Tables by default, ``--json`` for scripts; confidential content masked unless ``--show-confidential``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memvault.api.schemas import memory_view
from memvault.domain.models import RecallResult, SecurityLevel, Snapshot


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memvault", description="Long-term memory for AI agents.")
    p.add_argument("--data-dir", default=None, help="local data directory (default ~/.memvault)")
    p.add_argument("--url", default=None, help="remote server URL (remote mode)")
    p.add_argument("--key", default=None, help="API key for remote mode")
    p.add_argument("--tenant", default="local", help="tenant in local mode (default: local)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--show-confidential", action="store_true", help="do not mask confidential content")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("serve", help="run the HTTP server")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8080)
    s.add_argument("--dev", action="store_true", help="no authentication; binds to 127.0.0.1 only")
    s.add_argument("--threads", type=int, default=8, help="threads per process")
    s.add_argument("--workers", type=int, default=1, help="processes (gunicorn when > 1; one per core)")

    k = sub.add_parser("keys", help="manage API keys of the local server")
    ksub = k.add_subparsers(dest="keys_cmd", required=True)
    kc = ksub.add_parser("create")
    kc.add_argument("--tenant", dest="key_tenant", required=True)
    kc.add_argument("--agents", default="", help="comma-separated agent ids (default: all)")
    kc.add_argument("--roles", default="read,write", help="comma-separated: read,write,admin")
    kc.add_argument(
        "--clearance", default="internal", choices=["public", "internal", "confidential", "restricted"]
    )
    kc.add_argument("--description", default=None)
    ksub.add_parser("list")
    kr = ksub.add_parser("revoke")
    kr.add_argument("key_id")

    def scoped(name: str, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--agent", required=True)
        sp.add_argument("--user", default="")
        return sp

    sv = scoped("save", "save a memory")
    sv.add_argument("--content", required=True)
    sv.add_argument("--type", default="fact")
    sv.add_argument("--name")
    sv.add_argument("--tags", default="", help="comma-separated")
    sv.add_argument("--importance", type=float, default=0.5)
    sv.add_argument("--pinned", action="store_true")
    sv.add_argument("--session")

    rc = scoped("recall", "recall memories for a query")
    rc.add_argument("query")
    rc.add_argument("--limit", type=int, default=5)
    rc.add_argument("--types", default="")
    rc.add_argument("--tags", default="")
    rc.add_argument("--min-score", type=float, default=None)
    rc.add_argument("--session")

    sn = scoped("snapshot", "start-of-run snapshot")
    sn.add_argument("--trigger", required=True)
    sn.add_argument("--focus")
    sn.add_argument("--budget", type=int, default=500)

    g = scoped("get", "show one memory")
    g.add_argument("id")
    ls = scoped("list", "list memories, newest first")
    ls.add_argument("--type")
    ls.add_argument("--tag")
    ls.add_argument("--limit", type=int, default=20)
    ls.add_argument("--cursor")
    ls.add_argument("--include-archived", action="store_true")
    up = scoped("update", "change a memory")
    up.add_argument("id")
    up.add_argument("--content")
    up.add_argument("--tags")
    up.add_argument("--importance", type=float)
    up.add_argument("--pinned", choices=["true", "false"])
    up.add_argument("--if-match", type=int)
    d = scoped("delete", "delete a memory")
    d.add_argument("id")

    b = sub.add_parser("bench", help="benchmarks")
    bsub = b.add_subparsers(dest="bench_cmd", required=True)
    br = bsub.add_parser("retrieval", help="LoCoMo-format retrieval benchmark (recall@k, MRR by mode)")
    br.add_argument("--dataset", type=Path, default=Path("../shared/datasets/locomo/locomo-dev.json"))
    br.add_argument(
        "--models", default="e5,use", help="comma-separated local embedders; the first is the default"
    )
    br.add_argument("--modes", default="keyword,vector,hybrid,rrf")
    br.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    br.add_argument("--out", type=Path, default=None, help="write retrieval.json and retrieval.md here")
    return p


def _csv(value: str | None) -> list[str]:
    return [x.strip() for x in (value or "").split(",") if x.strip()]


def _settings(args: argparse.Namespace) -> Any:
    from memvault.config import Settings, get_settings

    return Settings(data_dir=Path(args.data_dir)) if args.data_dir else get_settings()


def _mask(memory: dict[str, Any], show: bool) -> dict[str, Any]:
    """The CLI shows public and internal content; confidential and above only when asked."""
    return memory_view(memory, SecurityLevel.RESTRICTED if show else SecurityLevel.INTERNAL)


def _print_table(rows: list[dict[str, Any]], cols: list[str]) -> None:
    if not rows:
        print("(none)")
        return
    widths = {c: min(60, max(len(c), *(len(str(r.get(c, ""))) for r in rows))) for c in cols}
    print("  ".join(c.upper().ljust(widths[c]) for c in cols))
    for r in rows:
        cells = []
        for c in cols:
            text = str(r.get(c, "")).replace("\n", " ")
            cells.append((text[: widths[c] - 1] + "…" if len(text) > widths[c] else text).ljust(widths[c]))
        print("  ".join(cells))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.cmd == "serve" else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    from memvault.client import ApiError
    from memvault.domain.errors import MemvaultError

    try:
        return _run(args)
    except MemvaultError as exc:
        _fail(args, exc.code, exc.message, exc.field)
    except ApiError as exc:
        _fail(args, exc.code, exc.message, exc.field)
    return 2


def _fail(args: argparse.Namespace, code: str, message: str, field: str | None) -> None:
    if args.json:
        print(json.dumps({"error": {"code": code, "message": message, "field": field}}))
    else:
        print(f"error [{code}]: {message}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    if args.cmd == "serve":
        from memvault.entrypoints.local_server import serve

        serve(
            args.host,
            args.port,
            data_dir=args.data_dir,
            dev=args.dev,
            threads=args.threads,
            workers=args.workers,
        )
        return 0
    if args.cmd == "keys":
        return _keys(args)
    if args.cmd == "bench":
        return _bench(args)
    backend = RemoteBackend(args) if args.url else LocalBackend(args)
    out = backend.run(args)
    _emit(args, out)
    return 0


def _keys(args: argparse.Namespace) -> int:
    from memvault.adapters.local.keys import SqliteKeyStore, load_pepper
    from memvault.adapters.local.sqlite_db import SqliteDatabase

    settings = _settings(args)
    store = SqliteKeyStore(SqliteDatabase(settings.database_path), load_pepper(settings.data_dir / "pepper"))
    now = datetime.now(UTC)
    if args.keys_cmd == "create":
        key, info = store.create(
            args.key_tenant,
            agents=_csv(args.agents) or None,
            roles=_csv(args.roles),
            clearance=args.clearance,
            description=args.description,
            now=now,
        )
        data = {"key": key, **info.__dict__}
        if args.json:
            print(json.dumps(data))
        else:
            print(
                f"key: {key}\n(store it now: it is not shown again)\nkey_id: {info.key_id} tenant: "
                f"{info.tenant_id} agents: {info.agents} roles: {info.roles} clearance: {info.clearance}"
            )
    elif args.keys_cmd == "list":
        rows = [k.__dict__ for k in store.list()]
        if args.json:
            print(json.dumps(rows))
        else:
            _print_table(
                rows, ["key_id", "tenant_id", "agents", "roles", "clearance", "created_at", "revoked_at"]
            )
    else:
        ok = store.revoke(args.key_id, now)
        print(json.dumps({"revoked": ok}) if args.json else ("revoked" if ok else "no such active key"))
        return 0 if ok else 1
    return 0


def _bench(args: argparse.Namespace) -> int:
    from memvault.benchmarks import locomo

    if not args.dataset.is_file():
        print(f"skipped: dataset {args.dataset} not found (LoCoMo-format JSON; pass --dataset PATH)")
        return 0
    result = locomo.run(
        args.dataset,
        _csv(args.models),
        modes=tuple(_csv(args.modes)),
        limit_conversations=args.conversations,
        progress=not args.json,
    )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "retrieval.json").write_text(json.dumps(result, indent=2))
        (args.out / "retrieval.md").write_text(locomo.markdown(result))
    print(json.dumps(result) if args.json else locomo.markdown(result))
    return 0


def _emit(args: argparse.Namespace, out: dict[str, Any]) -> None:
    kind = out.pop("_kind")
    show = args.show_confidential
    if "memory" in out:
        out["memory"] = _mask(out["memory"], show)
    for key in ("items", "hits"):
        for item in out.get(key, []):
            if "memory" in item:
                item["memory"] = _mask(item["memory"], show)
            elif "content" in item:
                item.update(_mask(item, show))
    if args.json:
        print(json.dumps(out, ensure_ascii=False, default=str))
        return
    if kind == "memory":
        m = out["memory"]
        if "action" in out:
            print(f"{out['action']}: {m['id']}")
        for field in (
            "id",
            "type",
            "name",
            "content",
            "tags",
            "importance",
            "pinned",
            "security_level",
            "version",
            "created_at",
            "updated_at",
            "access_count",
        ):
            print(f"{field:>15}: {m.get(field)}")
    elif kind == "recall":
        _print_table(
            [
                {
                    "score": f"{h['score']:.3f}",
                    "rel": f"{h['relevance']:.3f}",
                    "id": h["memory"]["id"],
                    "type": h["memory"]["type"],
                    "content": h["memory"]["content"],
                }
                for h in out["hits"]
            ],
            ["score", "rel", "id", "type", "content"],
        )
        if out.get("degraded"):
            print("(degraded: " + ", ".join(out.get("retrievers", [])) + ")")
    elif kind == "snapshot":
        print(out["prompt_block"] or "(empty snapshot)")
        print(f"\n[{out['tokens']} tokens, {len(out['items'])} items]")
    elif kind == "list":
        _print_table(
            [
                {
                    "id": m["id"],
                    "type": m["type"],
                    "created_at": m["created_at"][:19],
                    "content": m["content"],
                }
                for m in out["items"]
            ],
            ["id", "type", "created_at", "content"],
        )
        if out.get("next_cursor"):
            print(f"next: --cursor {out['next_cursor']}")
    elif kind == "deleted":
        print(f"deleted {out['id']}")


def _recall_out(res: RecallResult) -> dict[str, Any]:
    hits = [
        {**h.model_dump(mode="json", exclude={"memory"}), "memory": h.memory.public_dict()} for h in res.hits
    ]
    return {
        "_kind": "recall",
        "hits": hits,
        "degraded": res.degraded,
        "retrievers": res.retrievers,
        "prompt_block": res.prompt_block,
    }


def _snapshot_out(snap: Snapshot) -> dict[str, Any]:
    items = [
        {"memory": i.memory.public_dict(), "reason": i.reason, "text": i.text, "tokens": i.tokens}
        for i in snap.items
    ]
    return {"_kind": "snapshot", "items": items, "prompt_block": snap.prompt_block, "tokens": snap.tokens}


class LocalBackend:
    def __init__(self, args: argparse.Namespace) -> None:
        from memvault.bootstrap import build_services
        from memvault.domain.models import Scope

        self.svc = build_services(_settings(args))
        self.scope = Scope(tenant_id=args.tenant, agent_id=args.agent, user_id=args.user)

    def run(self, args: argparse.Namespace) -> dict[str, Any]:
        from memvault.domain.models import RecallQuery, SaveCommand, SnapshotRequest, UpdateCommand, parse

        s, cmd = self.svc, args.cmd
        if cmd == "save":
            command = parse(
                SaveCommand,
                {
                    "type": args.type,
                    "content": args.content,
                    "name": args.name,
                    "tags": _csv(args.tags),
                    "importance": args.importance,
                    "pinned": args.pinned,
                    "session_id": args.session,
                },
            )
            r = s.memories.save(self.scope, command)
            return {"_kind": "memory", "memory": r.memory.public_dict(), "action": r.action}
        if cmd == "recall":
            q = parse(
                RecallQuery,
                {
                    "query": args.query,
                    "top_k": args.limit,
                    "types": _csv(args.types),
                    "tags": _csv(args.tags),
                    "min_score": args.min_score,
                    "session_id": args.session,
                },
            )
            res = s.recall.recall(self.scope, q)
            return _recall_out(res)
        if cmd == "snapshot":
            snap = s.snapshot.snapshot(
                self.scope,
                parse(
                    SnapshotRequest,
                    {"trigger": args.trigger, "focus": args.focus, "token_budget": args.budget},
                ),
            )
            return _snapshot_out(snap)
        if cmd == "get":
            return {"_kind": "memory", "memory": s.memories.get(self.scope, args.id).public_dict()}
        if cmd == "list":
            page = s.memories.list_page(
                self.scope,
                types=[args.type] if args.type else [],
                tags=[args.tag] if args.tag else [],
                limit=args.limit,
                cursor=args.cursor,
                include_archived=args.include_archived,
            )
            return {
                "_kind": "list",
                "items": [m.public_dict() for m in page.items],
                "next_cursor": page.next_cursor,
            }
        if cmd == "update":
            changes = _changes(args)
            m = s.memories.update(
                self.scope, args.id, parse(UpdateCommand, changes), expected_version=args.if_match
            )
            return {"_kind": "memory", "memory": m.public_dict()}
        s.memories.delete(self.scope, args.id)
        return {"_kind": "deleted", "id": args.id}


def _changes(args: argparse.Namespace) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if args.content is not None:
        changes["content"] = args.content
    if args.tags is not None:
        changes["tags"] = _csv(args.tags)
    if args.importance is not None:
        changes["importance"] = args.importance
    if args.pinned is not None:
        changes["pinned"] = args.pinned == "true"
    return changes


class RemoteBackend:
    def __init__(self, args: argparse.Namespace) -> None:
        from memvault.client import MemvaultClient

        self.client = MemvaultClient(args.url, args.key)

    def run(self, args: argparse.Namespace) -> dict[str, Any]:
        c, cmd, agent, user = self.client, args.cmd, args.agent, args.user
        if cmd == "save":
            r = c.save(
                agent,
                args.content,
                type=args.type,
                user_id=user,
                name=args.name,
                tags=_csv(args.tags),
                importance=args.importance,
                pinned=args.pinned,
                session_id=args.session,
            )
            return {"_kind": "memory", "memory": r.memory.public_dict(), "action": r.action}
        if cmd == "recall":
            opts: dict[str, Any] = {
                "top_k": args.limit,
                "types": _csv(args.types),
                "tags": _csv(args.tags),
                "session_id": args.session,
            }
            if args.min_score is not None:
                opts["min_score"] = args.min_score
            res = c.recall(agent, args.query, user_id=user, **opts)
            return _recall_out(res)
        if cmd == "snapshot":
            snap = c.snapshot(agent, args.trigger, user_id=user, focus=args.focus, token_budget=args.budget)
            return _snapshot_out(snap)
        if cmd == "get":
            return {"_kind": "memory", "memory": c.get(args.id, agent, user_id=user).public_dict()}
        if cmd == "list":
            items, cursor = c.list(
                agent,
                user_id=user,
                type=args.type,
                tag=args.tag,
                limit=args.limit,
                cursor=args.cursor,
                include_archived=str(args.include_archived).lower(),
            )
            return {"_kind": "list", "items": [m.public_dict() for m in items], "next_cursor": cursor}
        if cmd == "update":
            m = c.update(args.id, agent, user_id=user, if_match=args.if_match, **_changes(args))
            return {"_kind": "memory", "memory": m.public_dict()}
        c.delete(args.id, agent, user_id=user)
        return {"_kind": "deleted", "id": args.id}


if __name__ == "__main__":
    raise SystemExit(main())
