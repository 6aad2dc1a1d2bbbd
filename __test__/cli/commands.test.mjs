// `cairnq <command>` run as a process against a real SQLite file and a real
// Postgres database: human and --json output, exit codes (README, "Command
// line"), and never creating or migrating a database it was not asked to.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";

import { claimTask, defer, submitAndFail, submitAndSucceed, waitUntilPast } from "../support/helpers.mjs";

import { forEachDialect, postgres, sqlite, test } from "../support/dialects.mjs";
import { psql } from "../support/pg-helpers.mjs";
import { assertFailure, cli, cliJson, cliOk, spawnCli, uiUrl } from "../support/cli-helpers.mjs";

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);

/** A client on `db` the test owns. */
function clientOn(t, dialect, db) {
  const client = dialect.client(db);
  defer(t, () => client.close());
  return client;
}

/** What the database holds outside the catalog: files (SQLite) or tables (Postgres). */
async function footprint(dialect, db) {
  if (dialect === sqlite) {
    const dir = db.slice(0, db.lastIndexOf("/"));
    return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : null;
  }
  return psql(db, "select count(*) from pg_tables where schemaname not in ('pg_catalog', 'information_schema')");
}

forEachDialect("cli", (dialect) => {
  test("no database there: every reading command says so, exits 3 and creates nothing", async (t) => {
    // SQLite: a path with no file; Postgres: an empty database.
    const db = await dialect.createDatabase(t);
    const before = await footprint(dialect, db);
    const pattern =
      dialect === sqlite ? /^error: no cairnq database at .*does not exist/ : /^error: .* is not a cairnq database/;
    for (const args of [
      ["stats", db],
      ["list", db],
      ["get", db, "task_x"],
      ["retry", db, "task_x"],
      ["cancel", db, "--key", "k"],
      ["purge", db],
      ["purge", db, "--dry-run"],
      ["wait", db, "task_x"],
      ["top", db],
      ["ui", db, "--port", "0"],
    ]) {
      assertFailure(await cli(args), 3, pattern);
    }
    assert.deepEqual(await footprint(dialect, db), before, "a reading command changed the database");
  });

  test("submit --file stores every line in one transaction, or none naming the bad line", async (t) => {
    const db = await dialect.createDatabase(t);
    const dir = fs.mkdtempSync(`${os.tmpdir()}/cairnq-jsonl-`);
    defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = `${dir}/tasks.jsonl`;
    fs.writeFileSync(
      file,
      ['{"task":"a","payload":{"n":1}}', "", '{"task":"b","options":{"queue":"q2","key":"k"}}'].join("\n"),
    );
    const refs = await cliJson(["submit", db, "--file", file]);
    assert.deepEqual(
      refs.map((ref) => ref.status),
      ["queued", "queued"],
    );
    const client = clientOn(t, dialect, db);
    assert.deepEqual((await client.get(refs[0].id)).payload, { n: 1 });
    assert.equal((await client.getByKey("k")).id, refs[1].id);
    const human = await cliOk(["submit", db, "--file", file]);
    assert.match(human, /^task_\w+ queued\ntask_\w+ queued\n$/);

    const bad = `${dir}/bad.jsonl`;
    fs.writeFileSync(bad, ['{"task":"c"}', "", '{"task":"d","options":{"priority":1e12}}'].join("\n"));
    assertFailure(await cli(["submit", db, "--file", bad]), 2, /^error: line 3: options\.priority must be a number/);
    fs.writeFileSync(bad, '{"task":"c"}\n{oops\n');
    assertFailure(await cli(["submit", db, "--file", bad]), 2, /^error: line 2: not valid JSON/);
    assertFailure(await cli(["submit", db, "x", "--file", file]), 2, /^error: submit: give a task name or --file/);
    assert.equal((await client.list({ limit: 100 })).length, 3, "the refused files stored nothing");
  });

  test("submit creates the database; stats counts per queue and status", async (t) => {
    const db = await dialect.createDatabase(t);
    const first = await cliJson([
      "submit",
      db,
      "emails.send",
      '{"to":"a@example.com"}',
      "--queue",
      "mail",
      "--priority",
      "5",
      "--max-attempts",
      "4",
    ]);
    assert.equal(first.status, "queued");
    assert.equal(first.queue, "mail");
    assert.deepEqual(first.payload, { to: "a@example.com" });
    assert.equal(first.priority, 5);
    assert.equal(first.max_attempts, 4);
    const human = await cliOk(["submit", db, "report.build"]);
    assert.match(human, /^task_\w+ queued on queue default\n$/);
    const client = clientOn(t, dialect, db);
    await submitAndFail(client, "report.fail");

    const stats = await cliJson(["stats", db]);
    assert.deepEqual(stats, {
      default: { queued: 1, running: 0, succeeded: 0, failed: 1, canceled: 0 },
      mail: { queued: 1, running: 0, succeeded: 0, failed: 0, canceled: 0 },
    });
    const table = await cliOk(["stats", db]);
    const lines = table.trimEnd().split("\n");
    assert.match(lines[0], /^QUEUE\s+QUEUED\s+RUNNING\s+SUCCEEDED\s+FAILED\s+CANCELED\s+TOTAL$/);
    assert.match(lines[1], /^default\s+1\s+0\s+0\s+1\s+0\s+2$/);
    assert.match(lines[2], /^mail\s+1\s+0\s+0\s+0\s+0\s+1$/);
    assert.match(lines[3], /^all\s+2\s+0\s+0\s+1\s+0\s+3$/);
    // Columns line up: every row's counts end where the header's do.
    assert.equal(new Set(lines.map((l) => l.length)).size, 1, `ragged table:\n${table}`);
    assert.doesNotMatch(table, ANSI, "no colours on a pipe");

    assert.deepEqual(await cliJson(["stats", db, "--queue", "mail"]), { mail: stats.mail });
    assert.deepEqual(await cliJson(["stats", db, "--queue", "nosuch"]), {
      nosuch: { queued: 0, running: 0, succeeded: 0, failed: 0, canceled: 0 },
    });
  });

  test("list: newest first, filters, paging, JSON lines", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const ids = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await client.submit(i % 2 ? "odd" : "even", { i }, { queue: i < 4 ? "a" : "b" })).id);
      await waitUntilPast(Date.now());
    }
    const lines = (await cliOk(["list", db, "--json"])).trimEnd().split("\n");
    assert.deepEqual(
      lines.map((l) => JSON.parse(l).id),
      [...ids].reverse(),
    );
    const page1 = (await cliOk(["list", db, "--json", "--limit", "2"]))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    const page2 = (await cliOk(["list", db, "--json", "--limit", "2", "--offset", "2"]))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    assert.deepEqual([...page1, ...page2], [ids[4], ids[3], ids[2], ids[1]]);
    const odd = (await cliOk(["list", db, "--json", "--name", "odd", "--queue", "a"]))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    assert.deepEqual(odd, [ids[3], ids[1]]);
    assert.equal(await cliOk(["list", db, "--json", "--status", "failed"]), "");

    const human = await cliOk(["list", db, "--limit", "2"]);
    const rows = human.trimEnd().split("\n");
    assert.match(rows[0], /^ID\s+NAME\s+QUEUE\s+STATUS\s+ATTEMPT\s+CREATED\s+UPDATED$/);
    assert.match(rows[1], new RegExp(`^${ids[4]}\\s+even\\s+b\\s+queued\\s+0/3\\s+(now|\\d+s ago)`));
    assert.equal(rows.at(-1), "more: --offset 2");
    assert.equal(await cliOk(["list", db, "--status", "failed"]), "no tasks\n");
  });

  test("get by id and by key: fields, lineage, payload, error envelope, spawned tasks", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const failed = await submitAndFail(client, "parent.job", { key: "order-7", correlationId: "corr-1" });
    const child = await client.submit("child.job", { n: 1 }, { parentId: failed.id, rootId: failed.root_id });

    const byKey = await cliJson(["get", db, "--key", "order-7"]);
    assert.equal(byKey.id, failed.id);
    assert.equal(byKey.status, "failed");
    assert.deepEqual(byKey.error, failed.error);
    assert.deepEqual(byKey.spawned, [{ id: child.id, name: "child.job", status: "queued" }]);
    const byId = await cliJson(["get", db, child.id]);
    assert.equal(byId.parent_id, failed.id);
    assert.deepEqual(byId.spawned, []);

    const human = await cliOk(["get", db, failed.id]);
    assert.match(human, new RegExp(`^id\\s+${failed.id}`, "m"));
    assert.match(human, /^status\s+failed/m);
    assert.match(human, /^correlation\s+corr-1/m);
    assert.match(human, /^completed\s+\d{4}-\d\d-\d\dT[\d:.]+Z \((now|\d+s ago)\)/m);
    assert.match(human, /^error\n\{\n( {2}"\w+": .*\n){5}\}$/m);
    assert.match(human, /^ {2}"code": "boom",?$/m);
    assert.match(human, new RegExp(`^SPAWNED\\s+NAME\\s+STATUS\\n${child.id}\\s+child.job\\s+queued`, "m"));

    assertFailure(await cli(["get", db, "task_nope"]), 4, /^error: no task task_nope$/);
    assertFailure(await cli(["get", db, "--key", "nokey"]), 4, /^error: no task with key "nokey"$/);
    assertFailure(await cli(["get", db]), 2, /^error: give a task id or --key <key>$/);
    assertFailure(await cli(["get", db, failed.id, "--key", "order-7"]), 2, /not both/);
  });

  test("retry and cancel: by id and key, refused for the wrong state, unknown tasks", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const failed = await submitAndFail(client, "flaky");
    const queued = await client.submit("later", {}, { key: "later-1" });

    const retried = await cliJson(["retry", db, failed.id]);
    assert.equal(retried.status, "queued");
    assert.equal(retried.attempt, 1, "attempts keep counting without --reset-attempt");
    assertFailure(
      await cli(["retry", db, failed.id]),
      7,
      new RegExp(`^error: task ${failed.id} is queued: only failed or canceled tasks can be retried$`),
    );

    assert.match(await cliOk(["cancel", db, "--key", "later-1"]), new RegExp(`^canceled ${queued.id}: canceled\\n$`));
    assertFailure(await cli(["cancel", db, queued.id]), 7, /is canceled: only queued or running tasks can be canceled/);
    const again = await cliJson(["retry", db, "--key", "later-1", "--reset-attempt"]);
    assert.equal(again.status, "queued");
    assert.equal(again.attempt, 0);

    const running = await client.submit("slow", {}, { queue: "slow" });
    await claimTask(client.store, running);
    assert.match(await cliOk(["cancel", db, running.id]), /running \(cancel requested/);
    assert.notEqual((await client.get(running.id)).cancel_requested_at_ms, null);

    assertFailure(await cli(["retry", db, "task_nope"]), 4, /^error: no task task_nope$/);
    assertFailure(await cli(["cancel", db, "--key", "nokey"]), 4, /^error: no task with key "nokey"$/);
  });

  test("purge: --dry-run counts and deletes nothing; --older-than and --limit", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const done = [];
    for (let i = 0; i < 3; i++) done.push(await submitAndSucceed(client, "ok"));
    done.push(await submitAndFail(client, "bad"));
    const live = await client.submit("live");
    await waitUntilPast(Math.max(...done.map((d) => d.completed_at_ms)) + dialect.clockSlackMs);

    assert.deepEqual(await cliJson(["purge", db, "--older-than", "1h", "--dry-run"]), { dryRun: true, count: 0 });
    assert.deepEqual(await cliJson(["purge", db, "--dry-run"]), { dryRun: true, count: 4 });
    assert.equal(
      await cliOk(["purge", db, "--dry-run", "--limit", "3"]),
      "would purge 3 tasks (dry run: nothing deleted)\n",
    );
    assert.equal((await client.list()).length, 5, "a dry run deleted something");

    assert.equal(await cliOk(["purge", db, "--older-than", "1h"]), "purged 0 tasks\n");
    const first = await cliJson(["purge", db, "--limit", "1"]);
    assert.deepEqual(first, { dryRun: false, count: 1, ids: [done[0].id] }, "oldest completion first");
    assert.equal(await cliOk(["purge", db]), "purged 3 tasks\n");
    assert.deepEqual(
      (await client.list()).map((x) => x.id),
      [live.id],
    );
  });

  test("purge --status/--queue/--name deletes only the matching tasks", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const ok = await submitAndSucceed(client, "ok");
    const bad = await submitAndFail(client, "bad");
    const other = await submitAndFail(client, "bad", { queue: "other" });
    await waitUntilPast(
      Math.max(ok.completed_at_ms, bad.completed_at_ms, other.completed_at_ms) + dialect.clockSlackMs,
    );
    assert.equal((await cliJson(["purge", db, "--status", "failed", "--dry-run"])).count, 2);
    assert.deepEqual(await cliJson(["purge", db, "--status", "failed", "--queue", "default"]), {
      dryRun: false,
      count: 1,
      ids: [bad.id],
    });
    assert.deepEqual(await cliJson(["purge", db, "--name", "bad"]), { dryRun: false, count: 1, ids: [other.id] });
    assert.deepEqual(
      (await client.list()).map((x) => x.id),
      [ok.id],
    );
  });

  test("wait: exit 0 on success, 1 on failure, 6 on cancel, 5 on timeout, 4 when unknown", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const handle = dialect.makeWorker(t, db, {});
    handle.worker.task("ok", async () => ({ fine: true }));
    handle.worker.task("boom", async () => {
      throw Object.assign(new Error("it broke"), { retryable: false });
    });
    const ok = await client.submit("ok");
    const boom = await client.submit("boom", {}, { maxAttempts: 1 });
    const stuck = await client.submit("nobody-handles-this", {}, { queue: "idle" });
    handle.start();

    const succeeded = await cli(["wait", db, ok.id, "--timeout", "30s"]);
    assert.equal(succeeded.code, 0, succeeded.stderr);
    assert.equal(succeeded.stdout, `${ok.id} succeeded\n`);
    const failed = await cli(["wait", db, boom.id, "--json"]);
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal(JSON.parse(failed.stdout).status, "failed");
    assert.equal(JSON.parse(failed.stdout).error.message, "it broke");

    assertFailure(
      await cli(["wait", db, stuck.id, "--timeout", "300ms"]),
      5,
      new RegExp(`^error: task ${stuck.id} did not finish within 300ms`),
    );
    await client.cancel(stuck.id);
    const canceled = await cli(["wait", db, stuck.id]);
    assert.equal(canceled.code, 6);
    assert.equal(canceled.stdout, `${stuck.id} canceled\n`);
    assertFailure(await cli(["wait", db, "task_nope"]), 4, /^error: no task task_nope$/);
  });

  test("submit: keys and conflicts, delay, bad payload", async (t) => {
    const db = await dialect.createDatabase(t);
    const a = await cliJson(["submit", db, "job", "--key", "k1"]);
    const reused = await cliJson(["submit", db, "job", "--key", "k1"]);
    assert.equal(reused.id, a.id);
    assertFailure(
      await cli(["submit", db, "job", "--key", "k1", "--conflict", "reject"]),
      7,
      /^error: task with key k1 already exists$/,
    );
    const delayed = await cliJson(["submit", db, "job", "--delay", "1h"]);
    assert.ok(delayed.run_at_ms - delayed.created_at_ms >= 3_600_000 - 1000, JSON.stringify(delayed));
    assertFailure(await cli(["submit", db, "job", "{not json"]), 2, /^error: payload is not valid JSON/);
    assertFailure(
      await cli(["submit", db, "job", "--conflict", "maybe"]),
      2,
      /argument 'maybe' is invalid\. Allowed choices are reuse, reuse-succeeded, reject, replace/,
    );
  });

  test("submit: --debounce and --max-delay", async (t) => {
    const db = await dialect.createDatabase(t);
    const save = (payload) =>
      cliJson(["submit", db, "save", payload, "--key", "doc", "--debounce", "1h", "--max-delay", "2h"]);
    const first = await save('{"v":1}');
    assert.equal(first.run_at_ms - first.created_at_ms, 3_600_000);
    const second = await save('{"v":2}');
    assert.equal(second.id, first.id);
    assert.deepEqual(second.payload, { v: 2 });
    assert.equal(second.run_at_ms - second.updated_at_ms, 3_600_000);
    assertFailure(await cli(["submit", db, "save", "--debounce", "1s"]), 2, /^error: debounceMs requires a key$/);
    assertFailure(
      await cli(["submit", db, "save", "--key", "doc", "--debounce", "2s", "--max-delay", "1s"]),
      2,
      /^error: maxDelayMs must be >= debounceMs \(2000\), got 1000$/,
    );
  });

  test("submit: --group, kept in the task's metadata", async (t) => {
    const db = await dialect.createDatabase(t);
    const grouped = await cliJson(["submit", db, "export", '{"n":1}', "--group", "customer:42"]);
    assert.deepEqual(grouped.metadata, { "cairnq.group": "customer:42" });
    const plain = await cliJson(["submit", db, "export"]);
    assert.deepEqual(plain.metadata, {});
    assertFailure(
      await cli(["submit", db, "export", "--group", ""]),
      2,
      /^error: group must be a non-empty string, got ""$/,
    );
    const client = clientOn(t, dialect, db);
    assert.equal((await client.stats()).default.queued, 2);
  });

  test("top: counts, throughput and running tasks until Ctrl-C", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    await client.submit("waiting", {}, { queue: "work" });
    const running = await client.submit("busy", {}, { queue: "hot" });
    await claimTask(client.store, running);
    await client.store.progress({ taskId: running.id, workerId: "w1", progress: 0.5, message: "halfway" });
    const top = spawnCli(t, ["top", db, "--interval", "200ms"]);
    await top.until((s) => s.includes(running.id) && /halfway/.test(s) && /work\s+1\s+0/.test(s), "the first frame");
    await submitAndSucceed(client, "quick", { ok: 1 }, { queue: "work" });
    await top.until((s) => /work\s+1\s+0\s+1\s+0\s+0/.test(s), "a frame with the succeeded task");
    top.child.kill("SIGINT");
    const { code } = await top.exited;
    assert.equal(code, 130, "stopped by SIGINT: 128 + 2, piped as on a terminal");
    assert.equal(top.errors(), "");
  });

  test("ui: serves the dashboard on 127.0.0.1 until Ctrl-C", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    await client.submit("job", {}, { queue: "served" });
    const ui = spawnCli(t, ["ui", db, "--port", "0", "--read-only"]);
    const url = await uiUrl(ui);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.match(ui.output(), /^cairnq dashboard for .* \(read-only\)$/m);
    assert.doesNotMatch(ui.output(), /postgres:postgres@/, "the password was printed");
    const overview = await (await fetch(`${url}api/overview`)).json();
    assert.deepEqual(
      overview.queues.map((q) => [q.queue, q.counts.queued]),
      [["served", 1]],
    );
    ui.child.kill("SIGINT");
    assert.equal((await ui.exited).code, 0);
  });

  if (dialect === sqlite) {
    test("a SQLite file of another application is refused and left byte for byte as it was", async (t) => {
      const db = await dialect.createDatabase(t);
      const dir = db.slice(0, db.lastIndexOf("/"));
      // An empty file is a valid, empty SQLite database (no cairnq tables).
      fs.writeFileSync(db, "");
      fs.writeFileSync(
        `${dir}/notes.txt`,
        "not a database at all, just some text that is long enough to have a header\n".repeat(10),
      );
      const bytes = fs.readFileSync(`${dir}/notes.txt`);
      for (const [file, pattern] of [
        [db, /is not a cairnq database: it has no cairnq_meta/],
        [`${dir}/notes.txt`, /is not a cairnq database: SQLITE_NOTADB/],
      ]) {
        assertFailure(await cli(["stats", file]), 3, pattern);
        assertFailure(await cli(["list", file, "--json"]), 3, pattern);
      }
      assert.equal(fs.statSync(db).size, 0, "the empty database was written to");
      assert.deepEqual(fs.readFileSync(`${dir}/notes.txt`), bytes);
      assert.deepEqual(fs.readdirSync(dir).sort(), ["notes.txt", "queue.db"]);
    });

    test("colours only on a terminal, never with NO_COLOR", async (t) => {
      const db = await dialect.createDatabase(t);
      await cliOk(["submit", db, "job"]);
      assert.doesNotMatch(await cliOk(["list", db]), ANSI);
      assert.match(await cliOk(["list", db], { env: { FORCE_COLOR: "1" } }), ANSI);
      assert.doesNotMatch(await cliOk(["list", db], { env: { FORCE_COLOR: "1", NO_COLOR: "1" } }), ANSI);
      // A real terminal (a pty from script(1)), with and without NO_COLOR.
      if (fs.existsSync("/usr/bin/script")) {
        const { runProcess } = await import("../support/helpers.mjs");
        const onTty = (env) =>
          runProcess(
            "/usr/bin/script",
            ["-qec", `${JSON.stringify(process.execPath)} bin/cairnq.js list ${JSON.stringify(db)}`, "/dev/null"],
            { env: { ...process.env, FORCE_COLOR: "", ...env } },
          );
        const tty = await onTty({});
        assert.equal(tty.code, 0, tty.stderr);
        assert.match(tty.stdout, ANSI);
        assert.match(tty.stdout, /queued/);
        const noColor = await onTty({ NO_COLOR: "1" });
        assert.equal(noColor.code, 0, noColor.stderr);
        assert.doesNotMatch(noColor.stdout, ANSI);
      }
    });
  }

  if (dialect === postgres) {
    test("a Postgres database of another application is refused and left as it was", async (t) => {
      const db = await dialect.createDatabase(t);
      await psql(db, "create table notes (body text); insert into notes values ('hi')");
      assertFailure(await cli(["stats", db]), 3, /^error: the Postgres database at .* is not a cairnq database/);
      assert.equal(await footprint(dialect, db), "1");
      const unreachable = db.replace(/:\d+\//, ":1/");
      assertFailure(await cli(["stats", unreachable]), 3, /^error: cannot connect to Postgres/);
    });
  }
});

// Usage errors need no database: one line, exit 2, never a stack trace.
test("bad usage: one clear line and exit 2; --help everywhere", async () => {
  assertFailure(await cli(["stats", "x.db", "--bogus"]), 2, /^error: unknown option '--bogus'$/);
  assertFailure(await cli(["stat", "x.db"]), 2, /^error: unknown command 'stat'.*Did you mean stats\?/);
  assertFailure(await cli(["stats"]), 2, /^error: missing required argument 'db'$/);
  assertFailure(
    await cli(["list", "x.db", "--limit", "0"]),
    2,
    /--limit <n>' argument '0' is invalid\. must be a positive integer/,
  );
  assertFailure(
    await cli(["list", "x.db", "--status", "done"]),
    2,
    /Allowed choices are queued, running, succeeded, failed, canceled/,
  );
  assertFailure(await cli(["purge", "x.db", "--older-than", "7x"]), 2, /invalid duration "7x"/);
  assertFailure(
    await cli(["purge", "x.db", "--status", "queued"]),
    2,
    /Allowed choices are succeeded, failed, canceled/,
  );
  assertFailure(await cli(["wait", "x.db", "t", "--timeout", "0"]), 2, /must be a positive duration/);
  assert.equal(fs.existsSync("x.db"), false);

  const top = await cli(["--help"]);
  assert.equal(top.code, 0);
  for (const command of ["stats", "list", "get", "retry", "cancel", "purge", "wait", "submit", "top", "ui"]) {
    assert.match(top.stdout, new RegExp(`^ {2}${command} `, "m"));
    const help = await cli([command, "--help"]);
    assert.equal(help.code, 0, `${command} --help: ${help.stderr}`);
    assert.match(help.stdout, new RegExp(`^Usage: cairnq ${command} \\[options\\] <db>`));
  }
  assert.match(top.stdout, /Exit codes:\n {2}0 /);
  const version = await cli(["--version"]);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

test("a Postgres DSN that does not parse: one line, exit 3", async () => {
  assertFailure(await cli(["stats", "postgres://user@host:notaport/db"]), 3, /^error: /);
});
