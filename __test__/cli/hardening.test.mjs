// The command line against careless and hostile input, run as a process:
// values that would overflow a stored time, terminal escapes in task names
// and messages, another application's SQLite file, URLs of other databases,
// files it may not read, passwords in a DSN, and exit codes (README,
// "Command line").

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import {
  REPO_ROOT,
  claimTask,
  defer,
  makeTempDir,
  runProcess,
  runPython,
  sha256OfFile,
  submitAndSucceed,
  waitUntilPast,
} from "../support/helpers.mjs";
import { forEachDialect, postgres, sqlite, test } from "../support/dialects.mjs";
import { dsnWithCredentials, passwordOf } from "../support/pg-helpers.mjs";
import { CLI, assertFailure, cli, cliJson, cliOk, spawnCli } from "../support/cli-helpers.mjs";

const ESC = String.fromCharCode(27);
const BEL = String.fromCharCode(7);
/** Retitles the terminal window, then clears the screen. */
const HOSTILE = `evil${ESC}]0;pwned${BEL}${ESC}[2Jname\u202Eexe.txt`;
/** How the human output shows it: every control character as an escape. */
const SHOWN = "evil\\u001b]0;pwned\\u0007\\u001b[2Jname\\u202eexe.txt";

/** A client on `db` the test owns. */
function clientOn(t, dialect, db) {
  const client = dialect.client(db);
  defer(t, () => client.close());
  return client;
}

forEachDialect("cli hardening", (dialect) => {
  test("a delay past what a stored time holds is exit 2, names the option, and every read keeps working", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    await client.submit("before");
    assertFailure(
      await cli(["submit", db, "job", "--delay", "99999999999w"]),
      2,
      /^error: runAtDelayMs must be a finite number of milliseconds, at most 1e15/,
    );
    assert.equal((await cliJson(["stats", db])).default.queued, 1, "the refused submit wrote a row");
    assert.match(await cliOk(["list", db]), /before/);
  });

  test("terminal escapes in names, messages and errors are shown escaped; JSON stays exact", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const running = await client.submit(HOSTILE, { note: `x${ESC}[2J\u009b` }, { queue: "q" });
    await claimTask(client.store, running);
    await client.store.progress({ taskId: running.id, workerId: "w1", message: HOSTILE });
    const failed = await client.submit("fails");
    await claimTask(client.store, failed);
    await client.store.fail({
      taskId: failed.id,
      workerId: "w1",
      retryable: false,
      error: { type: "TaskError", message: HOSTILE },
    });

    for (const args of [
      ["list", db],
      ["get", db, running.id],
      ["wait", db, failed.id, "--timeout", "5s"],
    ]) {
      const out = await cli(args);
      assert.ok(
        !out.stdout.includes(ESC) && !out.stdout.includes(BEL) && !out.stdout.includes("\u202E"),
        `${args[0]} printed a raw control: ${JSON.stringify(out.stdout)}`,
      );
      assert.ok(
        out.stdout.includes(args[0] === "list" ? "evil\\u001b]0;pwned\\u0007\\u001b[2J" : SHOWN),
        `${args[0]}: ${out.stdout}`,
      );
    }
    assert.match(await cliOk(["get", db, running.id]), /"note": "x\\u001b\[2J\\u009b"/);
    // JSON output carries the values exactly.
    assert.equal((await cliJson(["get", db, running.id])).message, HOSTILE);
    const lines = (await cliOk(["list", db, "--json"]))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.ok(lines.some((row) => row.name === HOSTILE));

    const top = spawnCli(t, ["top", db, "--interval", "200ms"]);
    const frame = await top.until((s) => s.includes("pwned"), "a frame with the running task");
    assert.ok(
      !frame.includes(`${ESC}]0;`) && !frame.includes(`${ESC}[2J`) && !frame.includes("\u202E"),
      `top printed a raw sequence: ${JSON.stringify(frame)}`,
    );
    assert.ok(frame.includes("evil\\u001b]0;pwned"));
    top.child.kill("SIGINT");
    await top.exited;
  });

  test("purge --dry-run counts in the store, with purge's own predicate and limit", async (t) => {
    const db = await dialect.createDatabase(t);
    const client = clientOn(t, dialect, db);
    const done = [];
    for (const queue of ["a", "a", "b"]) done.push(await submitAndSucceed(client, "ok", {}, { queue }));
    await client.submit("live", {}, { queue: "a" });
    await waitUntilPast(Math.max(...done.map((d) => d.completed_at_ms)) + dialect.clockSlackMs);
    assert.deepEqual(await cliJson(["purge", db, "--dry-run"]), { dryRun: true, count: 3 });
    assert.deepEqual(await cliJson(["purge", db, "--dry-run", "--limit", "2"]), { dryRun: true, count: 2 });
    assert.deepEqual(await cliJson(["purge", db, "--dry-run", "--queue", "a"]), { dryRun: true, count: 2 });
    assert.deepEqual(await cliJson(["purge", db, "--dry-run", "--older-than", "1h"]), { dryRun: true, count: 0 });
    assert.equal(await client.store.purgeCount({ status: "failed" }), 0);
    assert.equal(await client.store.purgeCount({ queue: "b", name: "ok" }), 1);
    assert.equal((await client.list()).length, 4, "a dry run deleted something");
    assert.equal((await cliJson(["purge", db, "--queue", "a"])).count, 2);
  });

  test("ui --port out of range, a base path with ? or # and a payload JSON cannot carry are usage errors (exit 2)", async (t) => {
    const db = await dialect.createDatabase(t);
    await cliOk(["submit", db, "job"]);
    assertFailure(
      await cli(["ui", db, "--port", "70000"]),
      2,
      /option '--port <port>' argument '70000' is invalid\. must be a port number from 0 to 65535/,
    );
    for (const base of ["/a?b", "/a#b"]) {
      assertFailure(
        await cli(["ui", db, "--base-path", base]),
        2,
        /option '--base-path <path>' argument '.*' is invalid\. must be a path, without \? or #/,
      );
    }
    assertFailure(
      await cli(["submit", db, "job", "1e999"]),
      2,
      /^error: payload cannot be stored: non-finite number Infinity is not JSON-serializable$/,
    );
  });

  if (dialect === postgres) {
    test("ui and top print a DSN's password= parameter masked, as they mask the user part's", async (t) => {
      const db = await dialect.createDatabase(t);
      await cliOk(["submit", db, "job"]);
      const password = passwordOf(db);
      const url = new URL(dsnWithCredentials(db, { password: "" }));
      url.password = "";
      url.searchParams.set("password", password);
      const dsn = url.toString();
      const ui = spawnCli(t, ["ui", dsn, "--port", "0"]);
      const out = await ui.until((s) => /open http/.test(s), "the banner");
      assert.match(out, /^cairnq dashboard for postgres:\/\/[^ ]*[?&]password=\*\*\*/m);
      assert.ok(!out.includes(`password=${password}`), `the password was printed: ${out}`);
      ui.child.kill("SIGINT");
      await ui.exited;
      const top = spawnCli(t, ["top", dsn, "--interval", "200ms"]);
      const frame = await top.until((s) => /cairnq top/.test(s), "the first frame");
      assert.match(frame, /cairnq top\s+postgres:\/\/[^ ]*[?&]password=\*\*\*/);
      assert.ok(!frame.includes(`password=${password}`), `the password was printed: ${frame}`);
      top.child.kill("SIGINT");
      await top.exited;
    });
  }

  if (dialect === sqlite) {
    test("submit refuses another application's SQLite file unless --init, and leaves it as it was", async (t) => {
      const dir = makeTempDir(t);
      const app = path.join(dir, "app.db");
      await runPython(
        [
          "import sqlite3, sys",
          "c = sqlite3.connect(sys.argv[1])",
          "c.execute('create table users (id integer primary key, name text)')",
          "c.execute(\"insert into users (name) values ('ada')\")",
          "c.commit()",
        ].join("\n"),
        [app],
      );
      const before = sha256OfFile(app);
      assertFailure(
        await cli(["submit", app, "job"]),
        3,
        /^error: .*app\.db is not a cairnq database: it holds another application's tables \(users\).*pass --init/,
      );
      assert.equal(sha256OfFile(app), before, "the file was changed");
      assert.deepEqual(fs.readdirSync(dir), ["app.db"], "a -wal or -shm file appeared: the file was switched to WAL");
      assert.match(await cliOk(["submit", app, "job", "--init"]), /^task_\w+ queued on queue default\n$/);
      assert.equal((await cliJson(["stats", app])).default.queued, 1);
      // An empty or new file is still created as before.
      assert.match(await cliOk(["submit", path.join(dir, "new.db"), "job"]), /queued/);
    });

    test("a URL of another database is refused (exit 2) and creates nothing", async (t) => {
      const dir = makeTempDir(t);
      for (const args of [
        ["submit", "mysql://u:p@h/app", "job"],
        ["stats", "redis://h:6379/0"],
      ]) {
        const out = await runProcess(process.execPath, [CLI, ...args], { cwd: dir });
        assertFailure(
          out,
          2,
          /^error: unsupported database URL (mysql|redis):\/\/…: give a SQLite file path or a postgres:\/\/ DSN$/,
        );
      }
      assert.deepEqual(fs.readdirSync(dir), [], "a directory named after the URL was created");
    });

    test("a file this user may not read says permission denied (exit 3), not that it does not exist", async (t) => {
      const dir = makeTempDir(t);
      fs.chmodSync(dir, 0o755);
      const db = path.join(dir, "queue.db");
      await cliOk(["submit", db, "job"]);
      // The file itself unreadable, and a file in a directory this user may not enter.
      const locked = path.join(dir, "locked");
      fs.mkdirSync(locked);
      fs.copyFileSync(db, path.join(locked, "queue.db"));
      fs.chmodSync(db, 0o000);
      fs.chmodSync(locked, 0o000);
      defer(t, () => {
        fs.chmodSync(locked, 0o755);
        fs.chmodSync(db, 0o644);
      });
      for (const file of [db, path.join(locked, "queue.db")]) {
        for (const args of [
          ["stats", file],
          ["submit", file, "job"],
        ]) {
          const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
          assertFailure(await asAnotherUser(args), 3, new RegExp(`^error: cannot open ${escaped}: permission denied`));
        }
      }
    });

    test("a read-only database still serves the read commands", async (t) => {
      const dir = makeTempDir(t);
      const db = path.join(dir, "queue.db");
      const id = JSON.parse(await cliOk(["submit", db, "job", "--json"])).id;
      // Readable by everyone, writable by no one else: the file and its directory.
      fs.chmodSync(db, 0o644);
      fs.chmodSync(dir, 0o755);
      const stats = await asAnotherUser(["stats", db, "--json"]);
      assert.equal(stats.code, 0, stats.stderr);
      assert.equal(JSON.parse(stats.stdout).default.queued, 1);
      const got = await asAnotherUser(["get", db, id, "--json"]);
      assert.equal(got.code, 0, got.stderr);
      assert.equal(JSON.parse(got.stdout).id, id);
      const listed = await asAnotherUser(["list", db]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, new RegExp(id));
      // A write says so, and changes nothing.
      const cancel = await asAnotherUser(["cancel", db, id]);
      assert.notEqual(cancel.code, 0);
      assert.equal((await cliJson(["get", db, id])).status, "queued");
    });
  }
});

/**
 * `cairnq ...args` as a user who owns none of the test's files: `nobody`
 * through runuser when the tests run as root (root reads every file), else
 * the current user (who then must not own them either: the tests chmod them).
 */
async function asAnotherUser(args) {
  if (process.getuid?.() === 0) {
    return runProcess("runuser", ["-u", "nobody", "--", process.execPath, CLI, ...args], {
      cwd: "/",
      env: { ...process.env, HOME: "/tmp" },
    });
  }
  return runProcess(process.execPath, [CLI, ...args], { cwd: REPO_ROOT });
}
