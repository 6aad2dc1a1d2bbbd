// Scheduling (docs/api.md, "Poll loop"): concurrency, per-name limits,
// resources, claimBatch, batch chunking, the in-flight byte budget and rotation
// between names.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

import { PYTHON, runPython, waitFor } from "../support/helpers.mjs";
import { jsonBytes, makeGate, makeInFlight, staysFalse, waitAllTerminal } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("scheduling", (dialect) => {
  /** A handler that counts itself in flight and waits for `gate`. */
  function gated(gate, tracker, log) {
    return async (ctxOrItems) => {
      const items = Array.isArray(ctxOrItems) ? ctxOrItems : [ctxOrItems];
      log?.push(items.map((c) => c.taskId));
      tracker.enter();
      try {
        await gate.promise;
      } finally {
        tracker.leave();
      }
      return undefined;
    };
  }

  async function submitN(client, name, n, opts = {}, payload = (i) => ({ i })) {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await client.submit(name, payload(i), opts)).id);
    return ids;
  }

  async function countRunning(client, names) {
    const rows = await client.list({ status: "running", limit: 1000 });
    return rows.filter((r) => names.includes(r.name)).length;
  }

  test("concurrency counts handler calls in flight and is never exceeded", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 3 });
    const gate = makeGate();
    const inFlight = makeInFlight();
    worker.task("job", gated(gate, inFlight));
    const ids = await submitN(client, "job", 8);
    handle.start();
    await waitFor(() => inFlight.now === 3);
    assert.ok(await staysFalse(() => inFlight.now > 3, 300), "a fourth call started");
    assert.equal(await countRunning(client, ["job"]), 3, "the rest stay queued");
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(inFlight.peak, 3);
  });

  test("a batch call counts as one call", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 2 });
    const gate = makeGate();
    const inFlight = makeInFlight();
    const calls = [];
    worker.task("b", { batch: 3 }, gated(gate, inFlight, calls));
    const ids = await submitN(client, "b", 7);
    handle.start();
    await waitFor(() => inFlight.now === 2);
    assert.ok(await staysFalse(() => inFlight.now > 2, 300));
    assert.equal(await countRunning(client, ["b"]), 6, "two calls of three tasks each");
    gate.release();
    await waitAllTerminal(client, ids);
    assert.deepEqual(calls.map((c) => c.length).sort(), [1, 3, 3]);
    assert.equal(inFlight.peak, 2);
  });

  test("run({concurrency}) overrides the option and is clamped to at least 1", async (t) => {
    const { client, db, handle, worker } = await setupWorker(t, dialect, { concurrency: 1 });
    const gate = makeGate();
    const inFlight = makeInFlight();
    worker.task("job", gated(gate, inFlight));
    const ids = await submitN(client, "job", 4);
    handle.start({ concurrency: 2 });
    await waitFor(() => inFlight.now === 2);
    assert.ok(await staysFalse(() => inFlight.now > 2, 200));
    gate.release();
    await waitAllTerminal(client, ids);

    const zero = dialect.makeWorker(t, db, { concurrency: 5 });
    const inFlight0 = makeInFlight();
    const gate0 = makeGate();
    zero.worker.task("zero", gated(gate0, inFlight0));
    const ids0 = await submitN(client, "zero", 3);
    zero.start({ concurrency: 0 });
    await waitFor(() => inFlight0.now === 1);
    assert.ok(await staysFalse(() => inFlight0.now > 1, 200), "concurrency 0 runs as 1");
    gate0.release();
    await waitAllTerminal(client, ids0);
    assert.equal(inFlight0.peak, 1);
  });

  test("a per-name concurrency caps that name only", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 6 });
    const gate = makeGate();
    const limited = makeInFlight();
    const free = makeInFlight();
    worker.task("limited", { concurrency: 2 }, gated(gate, limited));
    worker.task("free", gated(gate, free));
    const ids = [...(await submitN(client, "limited", 5)), ...(await submitN(client, "free", 3))];
    handle.start();
    await waitFor(() => limited.now === 2 && free.now === 3);
    assert.ok(await staysFalse(() => limited.now > 2, 300));
    assert.equal(await countRunning(client, ["limited"]), 2);
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(limited.peak, 2);
  });

  test("a resource caps the calls of every name that declares it; other names are unaffected", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 8, resources: { gpu: 2 } });
    const gate = makeGate();
    const gpu = makeInFlight();
    const cpu = makeInFlight();
    worker.task("train", { resource: "gpu" }, gated(gate, gpu));
    worker.task("infer", { resource: "gpu" }, gated(gate, gpu));
    worker.task("cpu", gated(gate, cpu));
    const ids = [
      ...(await submitN(client, "train", 3)),
      ...(await submitN(client, "infer", 3)),
      ...(await submitN(client, "cpu", 2)),
    ];
    handle.start();
    await waitFor(() => gpu.now === 2 && cpu.now === 2);
    assert.ok(await staysFalse(() => gpu.now > 2, 300));
    assert.equal(await countRunning(client, ["train", "infer"]), 2, "held-back work stays queued");
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(gpu.peak, 2);
  });

  test("a resource of capacity 1 makes its names mutually exclusive; the tighter of concurrency and resource binds", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, {
      concurrency: 8,
      resources: { lock: 1, pool: 3 },
    });
    const lock = makeInFlight();
    const pooled = makeInFlight();
    const work = (tracker) => async () => {
      tracker.enter();
      await new Promise((resolve) => setTimeout(resolve, 20));
      tracker.leave();
    };
    worker.task("a", { resource: "lock" }, work(lock));
    worker.task("b", { resource: "lock" }, work(lock));
    worker.task("p", { resource: "pool", concurrency: 1 }, work(pooled));
    const ids = [
      ...(await submitN(client, "a", 4)),
      ...(await submitN(client, "b", 4)),
      ...(await submitN(client, "p", 4)),
    ];
    handle.start();
    await waitAllTerminal(client, ids);
    assert.equal(lock.peak, 1);
    assert.equal(pooled.peak, 1);
  });

  test("claimBatch caps the rows of one draw (seen through a byte budget that stops further claims)", async (t) => {
    const run = async (claimBatch) => {
      const { client, handle, worker } = await setupWorker(t, dialect, {
        concurrency: 5,
        maxInFlightBytes: 1,
        claimBatch,
      });
      const gate = makeGate();
      const inFlight = makeInFlight();
      worker.task("job", gated(gate, inFlight));
      const ids = await submitN(client, "job", 6);
      handle.start();
      await waitFor(() => inFlight.now > 0);
      const expected = claimBatch ?? 5;
      await waitFor(() => inFlight.now === expected);
      assert.ok(await staysFalse(() => inFlight.now > expected, 300));
      gate.release();
      await waitAllTerminal(client, ids);
      return inFlight.peak;
    };
    // One draw, then the budget is exhausted: its size is all that runs.
    assert.equal(await run(2), 2);
    assert.equal(await run(undefined), 5);
  });

  test("claimBatch is converted to calls and never drops below one whole batch", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { claimBatch: 2 });
    const calls = [];
    worker.task("b", { batch: 4 }, (items) => {
      calls.push(items.length);
    });
    const ids = await submitN(client, "b", 8);
    handle.start();
    await waitAllTerminal(client, ids);
    assert.deepEqual(calls, [4, 4]);
  });

  test("a draw is chunked by batch size and never padded: 5 tasks with batch 4 → calls of 4 and 1", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 2 });
    const calls = [];
    worker.task("b", { batch: 4 }, (items) => {
      calls.push(items.map((c) => c.taskId));
    });
    const ids = await submitN(client, "b", 5);
    handle.start();
    await waitAllTerminal(client, ids);
    assert.deepEqual(calls.map((c) => c.length).sort(), [1, 4]);
    assert.deepEqual(new Set(calls.flat()), new Set(ids));
    assert.equal(calls.flat().length, 5);
  });

  test("maxInFlightBytes bounds resident payload bytes (UTF-8 of the JSON payload)", async (t) => {
    const budget = 250;
    const { client, handle, worker } = await setupWorker(t, dialect, {
      concurrency: 10,
      claimBatch: 1,
      maxInFlightBytes: budget,
    });
    // 100 UTF-8 bytes, 54 UTF-16 code units.
    const payload = { s: "é".repeat(46) };
    assert.equal(jsonBytes(payload), 100);
    const gate = makeGate();
    const inFlight = makeInFlight();
    let bytes = 0;
    let peakBytes = 0;
    worker.task("heavy", async (ctx, p) => {
      inFlight.enter();
      bytes += jsonBytes(p);
      peakBytes = Math.max(peakBytes, bytes);
      await gate.promise;
      bytes -= jsonBytes(p);
      inFlight.leave();
    });
    const ids = await submitN(client, "heavy", 6, {}, () => payload);
    handle.start();
    // 100 + 100 < 250 allows a third claim; 300 ≥ 250 stops the fourth.
    await waitFor(() => inFlight.now === 3);
    assert.ok(await staysFalse(() => inFlight.now > 3, 300));
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(inFlight.peak, 3);
    assert.ok(peakBytes <= budget + jsonBytes(payload), `peak ${peakBytes} bytes`);
  });

  // The Python SDK writes the SQLite file.
  if (dialect === sqlite) {
    test("the byte charge follows JSON.stringify(payload) also for payloads the Python SDK wrote (\\u escapes)", async (t) => {
      if (spawnSync(PYTHON, ["-c", "import cairnq"]).status !== 0) {
        t.skip("the Python SDK (PyPI cairnq) is not importable");
        return;
      }
      const budget = 250;
      const { client, dbPath, handle, worker } = await setupWorker(t, dialect, {
        concurrency: 10,
        claimBatch: 1,
        maxInFlightBytes: budget,
      });
      await client.connect();
      const payload = { s: "é".repeat(46) };
      assert.equal(jsonBytes(payload), 100);
      const stored = JSON.parse(
        await runPython(
          [
            "import asyncio, json, sqlite3, sys",
            "from cairnq import CairnQ",
            "async def main():",
            "    c = CairnQ.sqlite(sys.argv[1])",
            "    await c.connect()",
            "    for _ in range(int(sys.argv[3])):",
            "        await c.submit('heavy', json.loads(sys.argv[2]))",
            "    await c.close()",
            "asyncio.run(main())",
            "rows = sqlite3.connect(sys.argv[1]).execute('select payload from cairnq_tasks').fetchall()",
            "print(json.dumps([len(r[0].encode()) for r in rows]))",
          ].join("\n"),
          [dbPath, JSON.stringify(payload), "6"],
          { timeoutMs: 60_000 },
        ),
      );
      // Python stores é as \u00e9: 284 bytes of text for a 100-byte payload.
      assert.deepEqual(stored, Array(6).fill(284));
      const gate = makeGate();
      const inFlight = makeInFlight();
      worker.task("heavy", gated(gate, inFlight));
      handle.start();
      await waitFor(() => inFlight.now >= 1);
      // 100 + 100 < 250 allows a third claim, exactly as for a JS-written payload.
      const reached = await waitFor(() => inFlight.now === 3, { timeoutMs: 3000 }).catch(() => false);
      const peakSoFar = inFlight.peak;
      gate.release();
      const ids = (await client.list({ name: "heavy" })).map((r) => r.id);
      await waitAllTerminal(client, ids);
      assert.ok(reached, `only ${peakSoFar} call(s) ran at once: the charge was computed from the stored text`);
      assert.equal(inFlight.peak, 3);
    });
  }

  test("a payload larger than the whole byte budget still runs, by itself", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, {
      concurrency: 5,
      claimBatch: 1,
      maxInFlightBytes: 10,
    });
    const inFlight = makeInFlight();
    worker.task("huge", async (ctx, p) => {
      inFlight.enter();
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight.leave();
      return p.s.length;
    });
    const ids = await submitN(client, "huge", 3, {}, () => ({ s: "x".repeat(1000) }));
    handle.start();
    const rows = await waitAllTerminal(client, ids);
    for (const row of rows) {
      assert.equal(row.status, "succeeded");
      assert.equal(row.result, 1000);
    }
    assert.equal(inFlight.peak, 1);
  });

  test("rotation: names with their own source alternate, whatever their priorities", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 1 });
    const order = [];
    worker.task("a", { concurrency: 10 }, (ctx) => {
      order.push(ctx.name);
    });
    worker.task("b", { concurrency: 10 }, (ctx) => {
      order.push(ctx.name);
    });
    const ids = [...(await submitN(client, "a", 4, { priority: 10 })), ...(await submitN(client, "b", 4))];
    handle.start();
    await waitAllTerminal(client, ids);
    assert.deepEqual(order, ["a", "b", "a", "b", "a", "b", "a", "b"]);
  });
});
