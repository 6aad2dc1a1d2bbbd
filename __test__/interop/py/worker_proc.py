"""A Python cairnq worker process (PyPI cairnq 0.7.0) for the Node interop tests.

    worker_proc.py --db <sqlite path | postgres:// URL> --handlers echo,slow,...

Registers one handler per name in --handlers, on the queues in --queues, and
runs the real SDK Worker until SIGTERM/SIGINT. Handlers by name:

  fail_task_error  raises TaskError("m", code="bad_input", details={"field": "x"},
                   retryable=False)
  fail_generic     raises RuntimeError("boom") (a retryable handler_error)
  slow             sleeps payload["ms"] (default 1000) milliseconds, reporting
                   progress first, then returns like echo
  anything else    echo: returns {"by": "python", "name", "echo": payload,
                   "worker_id", "task_id", "attempt"}

Every line on stdout is one JSON object with an "event" key:
  {"event": "ready", "worker_id", "pid"}      store connected (and migrated)
  {"event": "started", "task_id", "name", "attempt"}   a handler began
  {"event": "error", "phase", "task_id", "error"}      Worker(on_error=...)
  {"event": "stopping", "signal"}                      a signal arrived
  {"event": "stopped"}                                 run() drained, store closed
The process exits 0 after "stopped".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from typing import Any

from cairnq import PostgresStore, SQLiteStore, TaskError, Worker


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def open_store(target: str):
    if target.startswith(("postgres://", "postgresql://")):
        return PostgresStore(target, min_size=1, max_size=4)
    return SQLiteStore(target)


def echo_result(ctx, payload: Any) -> dict[str, Any]:
    return {
        "by": "python",
        "name": ctx.name,
        "echo": payload,
        "worker_id": ctx.worker_id,
        "task_id": ctx.task_id,
        "attempt": ctx.attempt,
    }


def started(ctx) -> None:
    emit("started", task_id=ctx.task_id, name=ctx.name, attempt=ctx.attempt)


async def echo(ctx, payload):
    started(ctx)
    return echo_result(ctx, payload)


async def fail_task_error(ctx, payload):
    started(ctx)
    raise TaskError("m", code="bad_input", details={"field": "x"}, retryable=False)


async def fail_generic(ctx, payload):
    started(ctx)
    raise RuntimeError("boom")


async def slow(ctx, payload):
    started(ctx)
    await ctx.progress(0.5, "sleeping")
    await asyncio.sleep(float((payload or {}).get("ms", 1000)) / 1000)
    return echo_result(ctx, payload)


SPECIAL = {"fail_task_error": fail_task_error, "fail_generic": fail_generic, "slow": slow}


async def main(args: argparse.Namespace) -> None:
    store = open_store(args.db)
    await store.connect()

    def on_error(exc: BaseException, info: dict[str, Any]) -> None:
        emit(
            "error",
            phase=info.get("phase"),
            task_id=info.get("task_id"),
            error=f"{type(exc).__name__}: {exc}",
        )

    worker = Worker(
        store,
        args.queues.split(","),
        concurrency=args.concurrency,
        lease_ms=args.lease_ms,
        poll_interval_ms=args.poll_ms,
        on_error=on_error,
    )
    for name in filter(None, args.handlers.split(",")):
        worker.register(name, SPECIAL.get(name, echo))

    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        emit("stopping", signal=signal.Signals(signum).name)
        worker.stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)

    emit("ready", worker_id=worker.worker_id, pid=os.getpid())
    try:
        await worker.run()
    finally:
        await store.close()
    emit("stopped")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="SQLite path or postgres:// URL")
    parser.add_argument("--handlers", required=True, help="comma-separated task names")
    parser.add_argument("--queues", default="default", help="comma-separated queues")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--lease-ms", type=int, default=30_000)
    parser.add_argument("--poll-ms", type=int, default=50)
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
    sys.exit(0)
