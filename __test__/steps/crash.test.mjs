// Durable steps under SIGKILL (issue 27, "Done when"): 200 tasks of four
// steps each, run by worker processes of which one is SIGKILLed about every
// second (and replaced). Afterwards every task succeeded, every stored step
// result is that of its step's last run, and no step ran again once its
// result was stored: a run whose result was not stored belongs to a killed
// process, killed after that run's last line, and came before the stored run.
// A run that had returned (fn done, commit pending) when its process died is
// the one re-run the design allows; the test counts those.
import assert from "node:assert/strict";
import path from "node:path";

import { forEachDialect, test } from "../support/dialects.mjs";
import { makeTempDir, readJsonLines, spawnFixture } from "../support/helpers.mjs";

const TASKS = 200;
const STEPS = ["fetch", "summarize", "embed", "write"];
const WORKERS = 3;
const KILL_EVERY_MS = 1000;
const MIN_KILLS = 3;

forEachDialect("durable steps under SIGKILL", (dialect) => {
  test(`${TASKS} tasks of ${STEPS.length} steps, a worker process killed about every second`, async (t) => {
    const { client, db } = await dialect.open(t);
    const runsFile = path.join(makeTempDir(t), "runs.jsonl");
    const ids = (
      await Promise.all(Array.from({ length: TASKS }, (_, i) => client.submit("pipeline", { i }, { maxAttempts: 100 })))
    ).map((task) => task.id);

    const config = { dialect: dialect.name, db, runsFile, leaseMs: 1500, concurrency: 4 };
    const spawnWorker = async () => {
      const worker = spawnFixture(t, "steps-worker.mjs", config);
      await worker.waitForEvent((e) => e.event === "serving", { what: "serving" });
      return worker;
    };
    const workers = await Promise.all(Array.from({ length: WORKERS }, spawnWorker));
    const kills = [];
    const allDone = async () => (await client.stats("default")).default.succeeded === TASKS;
    const deadline = Date.now() + 240_000;
    while (!(await allDone())) {
      assert.ok(Date.now() < deadline, `not every task succeeded: ${JSON.stringify(await client.stats("default"))}`);
      await new Promise((resolve) => setTimeout(resolve, KILL_EVERY_MS * (0.7 + Math.random() * 0.6)));
      if (await allDone()) break;
      const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0];
      victim.kill("SIGKILL");
      kills.push({ pid: victim.pid, at: Date.now() });
      workers.push(await spawnWorker());
    }
    for (const worker of workers) worker.kill("SIGTERM");
    for (const worker of workers) await worker.waitExit();
    t.diagnostic(`${kills.length} worker processes killed`);
    assert.ok(kills.length >= MIN_KILLS, `only ${kills.length} kills landed while the tasks ran`);

    const rows = await Promise.all(ids.map((id) => client.get(id)));
    for (const row of rows) assert.equal(row.status, "succeeded", JSON.stringify(row));

    const killedAt = new Map(kills.map((kill) => [kill.pid, kill.at]));
    const runs = new Map();
    for (const line of readJsonLines(runsFile)) {
      const key = `${line.task}/${line.step}`;
      if (!runs.has(key)) runs.set(key, new Map());
      const byNonce = runs.get(key);
      if (!byNonce.has(line.nonce)) byNonce.set(line.nonce, { nonce: line.nonce, pid: line.pid });
      byNonce.get(line.nonce)[line.event] = line.at;
    }
    let reruns = 0;
    let cutShort = 0;
    for (const row of rows) {
      const { steps } = await client.steps(row.id);
      assert.deepEqual(steps.map((s) => s.id).sort(), [...STEPS].sort());
      for (const [index, step] of STEPS.entries()) {
        const stored = row.result[index];
        const all = [...(runs.get(`${row.id}/${step}`)?.values() ?? [])];
        const kept = all.find((run) => run.nonce === stored);
        assert.ok(kept, `the stored result of ${row.id}/${step} comes from a logged run`);
        for (const run of all) {
          if (run === kept) continue;
          const where = `${row.id}/${step} run ${JSON.stringify(run)} (stored: ${JSON.stringify(kept)})`;
          assert.equal(run.stored, undefined, `a run other than the stored one committed: ${where}`);
          const killed = killedAt.get(run.pid);
          assert.ok(killed !== undefined, `a run that was not stored, in a process never killed: ${where}`);
          const last = run.returned ?? run.ran;
          assert.ok(last <= killed, `a run logged after its process was killed: ${where}`);
          assert.ok(run.ran < kept.ran, `a step ran again after its result was stored: ${where}`);
          if (run.returned !== undefined) reruns += 1;
          else cutShort += 1;
        }
      }
    }
    t.diagnostic(
      `step runs the kills cut short: ${cutShort}; re-run because the kill landed between fn returning and its commit: ${reruns}`,
    );
  });
});
