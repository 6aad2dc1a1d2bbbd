"""Drive the Python cairnq SDK (PyPI cairnq 0.7.0 or 0.15.1) from the command line.

The Node interop tests spawn this script so that the Python side of every
exchange runs through the real Python SDK. Every subcommand prints exactly one
JSON document on stdout. A cairnq error that a scenario expects (AlreadyExists,
LostLease, ...) is printed as {"error": {"name": ..., "message": ...}} with exit
status 0; anything else is a crash: traceback on stderr, non-zero exit.

The target database is `--db`: a postgres:// (or postgresql://) URL selects the
Postgres store, anything else is a SQLite file path.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import inspect
import json
import os
import sqlite3
import sys
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cairnq import CairnQ, CairnQError, TaskCanceled, TaskFailed, TaskTimeout


def is_postgres(target: str) -> bool:
    return target.startswith(("postgres://", "postgresql://"))


def open_client(target: str) -> CairnQ:
    if is_postgres(target):
        # One connection is plenty for a single command and keeps a test run
        # from exhausting the server's connection slots.
        return CairnQ.postgres(target, min_size=1, max_size=2)
    return CairnQ.sqlite(target)


def task_json(task: Any) -> Any:
    return None if task is None else dataclasses.asdict(task)


def emit(document: Any) -> None:
    sys.stdout.write(json.dumps(document, allow_nan=False))
    sys.stdout.write("\n")


def parse_json_arg(text: str | None) -> Any:
    return None if text is None else json.loads(text)


async def with_client(target: str, action):
    client = open_client(target)
    try:
        await client.connect()
        return await action(client)
    finally:
        await client.close()


# ------------------------------------------------------------------ commands


async def cmd_create_db(args: argparse.Namespace) -> Any:
    """Open (and so migrate, if needed) the database, then report its ledger."""

    async def action(client: CairnQ) -> Any:
        return {"protocol_version": await client.store.protocol_version()}

    opened = await with_client(args.db, action)
    return {**opened, **await read_ledger(args.db)}


async def read_ledger(target: str) -> dict[str, Any]:
    """The migration ledger, the meta rows and the schema objects, read without
    the SDK so that reading can never migrate anything. `schema` maps
    "<type> <name>" to the stored text (SQLite) or the index definition
    (Postgres, which keeps only the parsed form)."""
    if is_postgres(target):
        import asyncpg

        conn = await asyncpg.connect(target)
        try:
            migrations = await conn.fetch(
                "select name, applied_at_ms from cairnq_migrations order by name"
            )
            meta = await conn.fetch("select key, value from cairnq_meta order by key")
            schema = await conn.fetch(
                "select 'index ' || indexname, indexdef from pg_indexes"
                " where tablename like 'cairnq%' order by indexname"
            )
        finally:
            await conn.close()
    else:
        if not os.path.exists(target):
            raise SystemExit(f"no database file at {target}")
        conn = sqlite3.connect(target)
        try:
            migrations = conn.execute(
                "select name, applied_at_ms from cairnq_migrations order by name"
            ).fetchall()
            meta = conn.execute("select key, value from cairnq_meta order by key").fetchall()
            schema = conn.execute(
                "select type || ' ' || name, sql from sqlite_master"
                " where name like 'cairnq%' and sql is not null order by type, name"
            ).fetchall()
        finally:
            conn.close()
    return {
        "migrations": [{"name": name, "applied_at_ms": at} for name, at in migrations],
        "meta": {key: value for key, value in meta},
        "schema": {name: sql for name, sql in schema},
    }


async def cmd_ledger(args: argparse.Namespace) -> Any:
    return await read_ledger(args.db)


async def cmd_submit(args: argparse.Namespace) -> Any:
    options: dict[str, Any] = {"queue": args.queue, "conflict": args.conflict}
    if args.key is not None:
        options["key"] = args.key
    if args.max_attempts is not None:
        options["max_attempts"] = args.max_attempts
    if args.priority is not None:
        options["priority"] = args.priority
    if args.metadata is not None:
        options["metadata"] = parse_json_arg(args.metadata)

    async def action(client: CairnQ) -> Any:
        task = await client.submit(args.name, parse_json_arg(args.payload), **options)
        return {"task": task_json(task)}

    return await with_client(args.db, action)


async def cmd_get(args: argparse.Namespace) -> Any:
    async def action(client: CairnQ) -> Any:
        return {"task": task_json(await client.get(args.task_id))}

    return await with_client(args.db, action)


async def cmd_get_by_key(args: argparse.Namespace) -> Any:
    async def action(client: CairnQ) -> Any:
        return {"task": task_json(await client.get_by_key(args.key))}

    return await with_client(args.db, action)


async def cmd_cancel(args: argparse.Namespace) -> Any:
    async def action(client: CairnQ) -> Any:
        return {"task": task_json(await client.cancel(args.task_id))}

    return await with_client(args.db, action)


async def cmd_retry(args: argparse.Namespace) -> Any:
    async def action(client: CairnQ) -> Any:
        task = await client.retry(args.task_id, reset_attempt=args.reset_attempt)
        return {"task": task_json(task)}

    return await with_client(args.db, action)


async def cmd_claim_fail(args: argparse.Namespace) -> Any:
    """Worker side through the store: claim one task, then fail it with the given
    envelope. Reports both rows so a test can check the claim as well."""
    envelope = parse_json_arg(args.error)

    async def action(client: CairnQ) -> Any:
        claimed = await client.store.claim(
            queues=[args.queue], worker_id=args.worker_id, lease_ms=args.lease_ms
        )
        if not claimed:
            return {"claimed": [], "failed": None}
        failed = await client.store.fail(
            task_id=claimed[0].id,
            worker_id=args.worker_id,
            error=envelope,
            retryable=args.retryable,
        )
        return {"claimed": [task_json(t) for t in claimed], "failed": task_json(failed)}

    return await with_client(args.db, action)


async def cmd_call(args: argparse.Namespace) -> Any:
    """The API side of a worker exchange: `--count` concurrent `CairnQ.call`s
    (submit + wait) of one name. Each outcome is {"result": ...} or, for the
    errors call raises, {"error": {...}} with the exception's fields."""
    # 0.7.0 names the wait's timeout wait_timeout_ms, 0.15 timeout_ms.
    call_parameters = inspect.signature(CairnQ.call).parameters
    timeout_keyword = "wait_timeout_ms" if "wait_timeout_ms" in call_parameters else "timeout_ms"
    options: dict[str, Any] = {"queue": args.queue, timeout_keyword: args.wait_timeout_ms}
    if args.max_attempts is not None:
        options["max_attempts"] = args.max_attempts
    payload = parse_json_arg(args.payload)

    async def one(client: CairnQ) -> dict[str, Any]:
        try:
            return {"result": await client.call(args.name, payload, **options)}
        except TaskFailed as exc:
            return {
                "error": {
                    "name": "TaskFailed",
                    "type": exc.type,
                    "code": exc.code,
                    "message": exc.message,
                    "retryable": exc.retryable,
                    "details": exc.details,
                    "envelope": exc.error,
                }
            }
        except TaskCanceled as exc:
            return {"error": {"name": "TaskCanceled", "task_id": exc.task_id}}
        except TaskTimeout as exc:
            return {"error": {"name": "TaskTimeout", "message": str(exc), "task": task_json(exc.task)}}

    async def action(client: CairnQ) -> Any:
        outcomes = await asyncio.gather(*(one(client) for _ in range(args.count)))
        return {"outcomes": list(outcomes)}

    return await with_client(args.db, action)


async def cmd_list(args: argparse.Namespace) -> Any:
    async def action(client: CairnQ) -> Any:
        tasks = await client.list(
            status=args.status, queue=args.queue, name=args.name, limit=args.limit
        )
        return {"tasks": [task_json(t) for t in tasks]}

    return await with_client(args.db, action)


async def cmd_status(args: argparse.Namespace) -> Any:
    """The status probe (0.15 API): by id, or by key with --key."""

    async def action(client: CairnQ) -> Any:
        if args.key is not None:
            ref = await client.get_status_by_key(args.key)
        else:
            ref = await client.get_status(args.task_id)
        return {"ref": None if ref is None else {"id": ref.id, "status": ref.status}}

    return await with_client(args.db, action)


async def cmd_purge(args: argparse.Namespace) -> Any:
    """purge with the 0.15 filters; only the given ones are passed."""
    options: dict[str, Any] = {"older_than_ms": args.older_than_ms}
    for field in ("queue", "status", "name"):
        if getattr(args, field) is not None:
            options[field] = getattr(args, field)

    async def action(client: CairnQ) -> Any:
        return {"ids": await client.purge(**options)}

    return await with_client(args.db, action)


async def cmd_stats(args: argparse.Namespace) -> Any:
    async def action(client: CairnQ) -> Any:
        if args.queue is None:
            return {"stats": await client.stats()}
        return {"stats": await client.stats(args.queue)}

    return await with_client(args.db, action)


async def cmd_submit_many(args: argparse.Namespace) -> Any:
    """Submit `--tasks` ([{"name", "payload"?, "queue"?}, ...]) one after the
    other, in order, and report the rows."""

    async def action(client: CairnQ) -> Any:
        out = []
        for spec in parse_json_arg(args.tasks):
            task = await client.submit(
                spec["name"], spec.get("payload"), queue=spec.get("queue", "default")
            )
            out.append(task_json(task))
        return {"tasks": out}

    return await with_client(args.db, action)


def database_url(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


async def cmd_pg_create_database(args: argparse.Namespace) -> Any:
    """Create an empty database on the server of `--db` and print its URL, so a
    scenario starts from a schema nobody has migrated yet."""
    import asyncpg

    name = f"{args.prefix}_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(args.db)
    try:
        # A generated identifier of [a-z0-9_] only: safe to splice into DDL.
        await conn.execute(f'create database "{name}"')
    finally:
        await conn.close()
    return {"dsn": database_url(args.db, name), "database": name}


async def cmd_pg_drop_database(args: argparse.Namespace) -> Any:
    import asyncpg

    if not args.database.replace("_", "").isalnum():
        raise SystemExit(f"refusing to drop oddly named database {args.database!r}")
    conn = await asyncpg.connect(args.db)
    try:
        await conn.execute(f'drop database if exists "{args.database}" with (force)')
    finally:
        await conn.close()
    return {"dropped": args.database}


# ---------------------------------------------------------------- arguments


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, handler, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--db", required=True, help="SQLite path or postgres:// URL")
        sub.set_defaults(handler=handler)
        return sub

    command("create-db", cmd_create_db, "open the database through the SDK (migrating it)")
    command("ledger", cmd_ledger, "read cairnq_migrations and cairnq_meta without the SDK")

    submit = command("submit", cmd_submit, "submit a task")
    submit.add_argument("--name", required=True)
    submit.add_argument("--payload", help="JSON")
    submit.add_argument("--metadata", help="JSON")
    submit.add_argument("--key")
    submit.add_argument("--conflict", default="reuse")
    submit.add_argument("--queue", default="default")
    submit.add_argument("--max-attempts", type=int)
    submit.add_argument("--priority", type=int)

    for name, handler in (("get", cmd_get), ("cancel", cmd_cancel)):
        sub = command(name, handler, f"{name} a task by id")
        sub.add_argument("task_id")

    retry = command("retry", cmd_retry, "re-queue a failed or canceled task")
    retry.add_argument("task_id")
    retry.add_argument("--reset-attempt", action="store_true")

    get_by_key = command("get-by-key", cmd_get_by_key, "read the task a key points at")
    get_by_key.add_argument("key")

    claim_fail = command("claim-fail", cmd_claim_fail, "claim one task and fail it")
    claim_fail.add_argument("--worker-id", required=True)
    claim_fail.add_argument("--error", required=True, help="error envelope, JSON")
    claim_fail.add_argument("--queue", default="default")
    claim_fail.add_argument("--lease-ms", type=int, default=30_000)
    claim_fail.add_argument(
        "--retryable", action=argparse.BooleanOptionalAction, default=False
    )

    call = command("call", cmd_call, "CairnQ.call a name --count times, concurrently")
    call.add_argument("--name", required=True)
    call.add_argument("--payload", help="JSON")
    call.add_argument("--count", type=int, default=1)
    call.add_argument("--queue", default="default")
    call.add_argument("--max-attempts", type=int)
    call.add_argument("--wait-timeout-ms", type=int, default=60_000)

    list_ = command("list", cmd_list, "list tasks (newest first)")
    list_.add_argument("--name")
    list_.add_argument("--status")
    list_.add_argument("--queue")
    list_.add_argument("--limit", type=int, default=1000)

    status = command("status", cmd_status, "get_status / get_status_by_key (0.15 API)")
    status.add_argument("task_id", nargs="?")
    status.add_argument("--key")

    purge = command("purge", cmd_purge, "purge finished tasks (filters: 0.15 API)")
    purge.add_argument("--older-than-ms", type=int, default=0)
    purge.add_argument("--queue")
    purge.add_argument("--status")
    purge.add_argument("--name")

    stats = command("stats", cmd_stats, "counts per queue and status (--queue: 0.15 API)")
    stats.add_argument("--queue")

    submit_many = command("submit-many", cmd_submit_many, "submit several tasks in order")
    submit_many.add_argument("--tasks", required=True, help='JSON [{"name", "payload"?}]')

    create_database = command(
        "pg-create-database", cmd_pg_create_database, "create a fresh Postgres database"
    )
    create_database.add_argument("--prefix", default="cairnq_interop")

    drop_database = command("pg-drop-database", cmd_pg_drop_database, "drop a database")
    drop_database.add_argument("database")
    return parser


def main() -> int:
    args = build_parser().parse_args()
    try:
        result = asyncio.run(args.handler(args))
    except CairnQError as exc:
        # Expected by some scenarios (e.g. AlreadyExists): report, don't crash.
        result = {"error": {"name": type(exc).__name__, "message": str(exc)}}
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
