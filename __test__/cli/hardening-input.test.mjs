// The command line's second round of hardening (issue 34), run as a process
// on a pipe and on a pseudo-terminal: stored values escaped in `schedules`
// and `metrics`, a reader that goes away (`| head`), passwords with a raw
// `@`, databases the CLI cannot keep, a directory that does not exist, a
// search_path without cairnq, and values the API refuses (README, "Command
// line"; docs/security.md).

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { defer, makeTempDir } from "../support/helpers.mjs";
import { forEachDialect, postgres, sqlite, test } from "../support/dialects.mjs";
import { dsnWithCredentials, psql, randomName, requireDsn } from "../support/pg-helpers.mjs";
import { assertFailure, cli, cliIntoPipe, cliJson, cliOk, cliOnTerminal, spawnCli } from "../support/cli-helpers.mjs";

const ESC = String.fromCharCode(27);
const BEL = String.fromCharCode(7);
/** Retitles the terminal window, then clears the screen. */
const HOSTILE = `evil${ESC}]0;pwned${BEL}${ESC}[2Jq\u202Eexe`;
const SHOWN = "evil\\u001b]0;pwned\\u0007\\u001b[2Jq\\u202eexe";

/** No control character a terminal would act on. */
function assertNoRawControls(text, what) {
  assert.ok(
    !text.includes(ESC) && !text.includes(BEL) && !text.includes("\u202E"),
    `${what} printed a raw control: ${JSON.stringify(text)}`,
  );
}

forEachDialect("cli hardening, second round", (dialect) => {
  test("schedules and metrics show stored controls escaped, on a pipe and on a terminal", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.schedule(HOSTILE, { task: HOSTILE, cron: "0 2 * * *", queue: HOSTILE });
    await client.submit("job", {}, { queue: HOSTILE });

    for (const run of [cli, cliOnTerminal]) {
      const out = await run(["schedules", db]);
      const text = out.output ?? out.stdout;
      assert.equal(out.code, 0, text);
      assertNoRawControls(text, `schedules (${run.name})`);
      assert.ok(text.includes(SHOWN.slice(0, 30)), text);
    }
    const onTerminal = await cliOnTerminal(["metrics", db]);
    assert.equal(onTerminal.code, 0, onTerminal.output);
    assertNoRawControls(onTerminal.output, "metrics on a terminal");
    assert.ok(onTerminal.output.includes(`cairnq_tasks{queue="${SHOWN}",status="queued"} 1`), onTerminal.output);
    // Piped, the exposition is exact: a program reads the label as stored.
    const piped = await cliOk(["metrics", db]);
    assert.ok(piped.includes(`cairnq_tasks{queue="${HOSTILE}",status="queued"} 1`), piped);
    assert.deepEqual((await cliJson(["schedules", db]))[0].queue, HOSTILE, "--json is exact");
  });

  test("top | head and list --json | head end quietly when the reader goes away", async (t) => {
    const { client, db } = await dialect.open(t);
    // More than a pipe holds (64 KiB), so writes go on after the reader left.
    await Promise.all(Array.from({ length: 400 }, (_, i) => client.submit("job", { pad: "x".repeat(400), i })));
    const listed = await cliIntoPipe(["list", db, "--json", "--limit", "400"], "head -c 100");
    assert.equal(listed.readerOutput.length, 100);
    assert.equal(listed.stderr, "", "list --json | head wrote to stderr");
    assert.equal(listed.code, 0);
    const top = await cliIntoPipe(["top", db, "--interval", "50ms"], "head -c 200");
    assert.equal(top.stderr, "", "top | head wrote to stderr");
    assert.equal(top.code, 0);
  });

  test("an empty or overlong task name or queue, or a priority past the column, is exit 2 and writes nothing", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.submit("before");
    for (const [args, message] of [
      [["submit", db, ""], /^error: name must be a non-empty string, got ""$/],
      [["submit", db, "job", "--queue", ""], /^error: queue must be a non-empty string, got ""$/],
      [["submit", db, "n".repeat(513)], /^error: name must be at most 512 bytes of UTF-8, got 513 bytes$/],
      [
        ["submit", db, "job", "--queue", "é".repeat(257)],
        /^error: queue must be at most 512 bytes of UTF-8, got 514 bytes$/,
      ],
      [
        ["submit", db, "job", "--priority", "99999999999"],
        /^error: priority must be a number from -2147483648 to 2147483647, got 99999999999$/,
      ],
      [
        ["submit", db, "job", "--priority", "-2147483649"],
        /^error: priority must be a number from -2147483648 to 2147483647, got -2147483649$/,
      ],
    ]) {
      assertFailure(await cli(args), 2, message);
    }
    assert.equal((await cliJson(["stats", db])).default.queued, 1, "a refused submit wrote a row");
    const edge = await cliJson(["submit", db, "n".repeat(512), "--priority", "2147483647", "--queue", "q".repeat(512)]);
    assert.equal(edge.priority, 2147483647);
    assert.equal(edge.name.length, 512);
  });

  if (dialect === sqlite) {
    test("submit refuses in-memory databases, whose task would be lost, and changes nothing", async (t) => {
      const dir = makeTempDir(t);
      for (const db of [
        ":memory:",
        "file:x?mode=memory",
        "file::memory:",
        "file:kept?mode=memory&cache=shared",
        `file:${dir}/q.db?vfs=memdb`,
      ]) {
        assertFailure(
          await cli(["submit", db, "job"], { timeoutMs: 20_000 }),
          2,
          /^error: db must be a database that outlives this process, got .*: an in-memory database ends with the process, and its tasks with it$/,
        );
      }
      assert.deepEqual(fs.readdirSync(dir), []);
      // A file URI names a file the command keeps.
      const kept = path.join(dir, "kept.db");
      assert.equal((await cliJson(["submit", `file:${kept}`, "job"])).status, "queued");
      assert.equal((await cliJson(["stats", kept])).default.queued, 1);
    });

    test("submit into a directory that does not exist refuses, names it, and creates nothing", async (t) => {
      const dir = makeTempDir(t);
      const missing = path.join(dir, "typo", "deeper");
      assertFailure(
        await cli(["submit", path.join(missing, "q.db"), "job"]),
        3,
        new RegExp(
          `^error: no cairnq database at .*: the directory ${missing} does not exist \\(nothing was created\\)$`,
        ),
      );
      assert.deepEqual(fs.readdirSync(dir), []);
      // --init says: install here, whatever is there or not.
      assert.equal((await cliJson(["submit", path.join(missing, "q.db"), "job", "--init"])).status, "queued");
    });
  }

  if (dialect === postgres) {
    test("a DSN whose search_path names a schema without cairnq: the message names that schema", async (t) => {
      const { client, db } = await dialect.open(t);
      await client.submit("job");
      await psql(db, "create schema elsewhere");
      const withPath = (searchPath) =>
        `${db}${db.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${searchPath}`)}`;
      assertFailure(
        await cli(["stats", withPath("elsewhere")]),
        3,
        /is not a cairnq database: schema "elsewhere" \(its search_path\) has no cairnq_meta, cairnq_migrations and cairnq_tasks tables; cairnq is installed in schema "public"/,
      );
      assertFailure(
        await cli(["list", withPath("nowhere")]),
        3,
        /is not a cairnq database: its search_path names no schema that exists, so it has no cairnq_meta/,
      );
    });

    test("ui and top never show a password holding a raw @", async (t) => {
      const { db } = await dialect.open(t);
      await cliOk(["submit", db, "job"]);
      const role = randomName("cq_at");
      const password = "sec@ret@tail";
      const admin = requireDsn();
      await psql(admin, `create role ${role} login superuser password '${password}'`);
      defer(t, () => psql(admin, `drop role if exists ${role}`));
      const url = new URL(dsnWithCredentials(db, { user: role, password: "" }));
      // The password written raw, as people type it: the last @ ends it.
      const dsn = url.toString().replace(`${role}@`, `${role}:${password}@`);
      const ui = spawnCli(t, ["ui", dsn, "--port", "0"]);
      const banner = await ui.until((s) => /open http/.test(s), "the banner");
      assert.match(banner, new RegExp(`^cairnq dashboard for postgres://${role}:\\*\\*\\*@127\\.0\\.0\\.1`, "m"));
      for (const part of ["sec", "ret@", "tail"]) assert.ok(!banner.includes(part), `${part} shown: ${banner}`);
      ui.child.kill("SIGINT");
      await ui.exited;
      const top = spawnCli(t, ["top", dsn, "--interval", "200ms"]);
      const frame = await top.until((s) => /cairnq top/.test(s), "the first frame");
      assert.match(frame, new RegExp(`cairnq top\\s+postgres://${role}:\\*\\*\\*@127\\.0\\.0\\.1`));
      assert.ok(!frame.includes("tail@"), frame);
      top.child.kill("SIGINT");
      await top.exited;
    });
  }
});
