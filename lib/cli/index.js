"use strict";
// `cairnq <command> <db|dsn> [options]`: the command line (README, "Command
// line"). Argument parsing is commander's; every command opens the database
// through the client API (lib/admin/inspect.js) and prints a table, or JSON with --json.

const { Command, Option, CommanderError } = require("commander");

const models = require("../models.js");
const inspect = require("../admin/inspect.js");
const {
  positiveInt,
  nonNegativeInt,
  port,
  basePath,
  integer,
  duration,
  positiveDuration,
} = require("./option-parsers.js");
const { submitError, submitFile, parsePayload } = require("./submit-input.js");
const fmt = require("./format.js");
const { defineSchedulesCommand } = require("./schedules.js");
const { definePauseCommands } = require("./pauses.js");
const { defineBulkCommands } = require("./bulk.js");
const { stepSections } = require("./steps.js");

const { EXIT, InspectError } = inspect;
const STATUSES = /** @type {import("../../index.js").TaskStatus[]} */ ([...models.STATUSES]);

/**
 * @typedef {import("../../index.js").Task} Task
 * @typedef {import("../client.js").CairnQ} CairnQ
 * @typedef {{ write: (s: string) => unknown, isTTY?: boolean }} Out
 * @typedef {{ stdout: Out, stderr: Out, env: NodeJS.ProcessEnv }} Io
 */

const EXIT_CODES_HELP = `
Exit codes:
  0   success (wait: the task succeeded)
  1   wait: the task failed
  2   bad usage: unknown command or option, bad value
  3   no cairnq database there (missing file, another kind of database,
      another protocol version) or the database is unreachable
  4   no task with that id or key
  5   wait: the task did not finish within --timeout
  6   wait: the task was canceled
  7   the task's state does not allow the action, or a keyed submit was rejected
  10  any other failure
  130 top, events: stopped by Ctrl-C (SIGINT); 143 by SIGTERM

<db> is a SQLite file path or a postgres:// DSN. Only submit creates a
database (not in a SQLite file holding another application's tables, unless
--init); every other command refuses a missing or non-cairnq database and
changes nothing. Colours only on a terminal, never with NO_COLOR set.`;

// --- the program ----------------------------------------------------------------

/**
 * Run the command line; resolves with the exit code (never throws).
 * @param {string[]} argv process.argv-shaped
 * @param {Partial<Io>} [io]
 * @returns {Promise<number>}
 */
async function main(argv, io = {}) {
  const out = io.stdout ?? process.stdout;
  const err = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  const c = fmt.colorsFor(out, env);
  const ce = fmt.colorsFor(err, env);
  /** @type {{ code: number }} */
  const state = { code: EXIT.OK };
  /** @type {CairnQ | null} */
  let client = null;

  /** @param {string} db @param {{ create?: boolean, init?: boolean }} [opts] */
  const open = (db, opts) => {
    client = inspect.openClient(db, opts);
    return client;
  };
  /** @param {string} line @returns {void} */
  const print = (line) => {
    out.write(`${line}\n`);
  };
  /** @param {unknown} value @returns {void} */
  const printJson = (value) => {
    out.write(`${JSON.stringify(value)}\n`);
  };

  const program = new Command("cairnq");
  program
    .description("Inspect and operate any cairnq database (SQLite file or postgres:// DSN).")
    .version(require("../../package.json").version, "-V, --version")
    .showSuggestionAfterError(true)
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => out.write(s),
      writeErr: (s) => err.write(s),
      // Commander puts its suggestion on a line of its own: keep one line.
      outputError: (s, write) => write(`${ce.red(s.trimEnd().replace(/\n+/g, " "))}\n`),
    })
    .addHelpText("after", EXIT_CODES_HELP);

  /**
   * A subcommand with the options every command shares.
   * @param {string} spec
   * @param {string} description
   */
  const command = (spec, description) =>
    program
      .command(spec)
      .description(description)
      .option("--json", "print JSON instead of tables")
      .addHelpText("after", "\n<db> is a SQLite file path or a postgres:// DSN. Exit codes: cairnq --help.");

  command("stats <db>", "task counts per queue and status")
    .option("--queue <queue>", "only this queue")
    .action(async (db, opts) => {
      const counts = await inspect.stats(open(db), opts.queue);
      if (opts.json) return printJson(counts);
      const t = fmt.table(c, ["QUEUE", ...STATUSES.map((s) => s.toUpperCase()), "TOTAL"], {
        align: ["left", "right", "right", "right", "right", "right", "right"],
      });
      const totals = inspect.zeroCounts();
      for (const [queue, row] of Object.entries(counts)) {
        t.push([
          fmt.plain(queue),
          ...STATUSES.map((s) => String(row[s])),
          String(STATUSES.reduce((a, s) => a + row[s], 0)),
        ]);
        for (const s of STATUSES) totals[s] += row[s];
      }
      if (Object.keys(counts).length === 0) return print("no tasks");
      if (Object.keys(counts).length > 1) {
        t.push([
          c.bold("all"),
          ...STATUSES.map((s) => c.bold(String(totals[s]))),
          c.bold(String(STATUSES.reduce((a, s) => a + totals[s], 0))),
        ]);
      }
      print(fmt.render(t));
    });

  command("list <db>", "tasks, newest first")
    .option("--queue <queue>", "only this queue")
    .addOption(new Option("--status <status>", "only this status").choices(STATUSES))
    .option("--name <name>", "only tasks of this name")
    .option("--limit <n>", "at most this many (default 20)", positiveInt, 20)
    .option("--offset <n>", "skip this many first (paging)", nonNegativeInt, 0)
    .action(async (db, opts) => {
      const cq = open(db);
      // JSON lines carry whole rows; the table shows no bodies, so reads none.
      const input = {
        queue: opts.queue,
        status: opts.status,
        name: opts.name,
        limit: opts.limit + 1,
        offset: opts.offset,
      };
      const rows = opts.json ? await cq.list(input) : await inspect.listSummaries(cq, input);
      const page = rows.slice(0, opts.limit);
      if (opts.json) {
        for (const task of page) printJson(task);
        return;
      }
      if (page.length === 0) return print(opts.offset > 0 ? "no more tasks" : "no tasks");
      const now = Date.now();
      const t = fmt.table(c, ["ID", "NAME", "QUEUE", "STATUS", "ATTEMPT", "CREATED", "UPDATED"]);
      for (const task of page) {
        t.push([
          fmt.plain(task.id),
          fmt.truncate(task.name, 40),
          fmt.plain(task.queue),
          fmt.paintStatus(c, task.status),
          `${task.attempt}/${task.max_attempts}`,
          fmt.relativeTime(task.created_at_ms, now),
          fmt.relativeTime(task.updated_at_ms, now),
        ]);
      }
      print(fmt.render(t));
      if (rows.length > opts.limit) print(c.dim(`more: --offset ${opts.offset + opts.limit}`));
    });

  command("get <db> [id]", "one task by id (or --key), with its lineage and the tasks it spawned")
    .option("--key <key>", "the task a key points at")
    .action(async (db, id, opts) => {
      const ref = taskRef(id, opts.key);
      const cq = open(db);
      const task = await inspect.getTask(cq, ref);
      const children = await inspect.spawned(cq, task);
      const steps = await cq.steps(task.id);
      if (opts.json)
        return printJson({
          ...task,
          spawned: children.map((t) => ({ id: t.id, name: t.name, status: t.status })),
          ...steps,
        });
      print([describeTask(c, task, children), ...stepSections(c, steps, Date.now())].join("\n"));
    });

  command("retry <db> [id]", "put a failed or canceled task back in its queue")
    .option("--key <key>", "the task a key points at")
    .option("--reset-attempt", "start counting attempts from zero again")
    .option("--from-step <step>", "drop the stored steps from this one on (a succeeded task too)")
    .action(async (db, id, opts) => {
      const task = await inspect.retryTask(open(db), taskRef(id, opts.key), {
        resetAttempt: opts.resetAttempt === true,
        fromStep: opts.fromStep,
      });
      if (opts.json) return printJson(task);
      print(
        `retried ${fmt.plain(task.id)}: ${fmt.paintStatus(c, task.status)} (attempt ${task.attempt}/${task.max_attempts})`,
      );
    });

  command("cancel <db> [id]", "cancel a queued task, or ask a running one to stop")
    .option("--key <key>", "the task a key points at")
    .action(async (db, id, opts) => {
      const task = await inspect.cancelTask(open(db), taskRef(id, opts.key));
      if (opts.json) return printJson(task);
      const note = task.status === "running" ? " (cancel requested; the handler stops at its next check)" : "";
      print(`canceled ${fmt.plain(task.id)}: ${fmt.paintStatus(c, task.status)}${note}`);
    });

  command(
    "signal <db> <args...>",
    "send a signal to a task: <id> <name> [payload-json], or --key <key> <name> [payload-json]",
  )
    .option("--key <key>", "the task a key points at")
    .action(async (db, args, opts) => {
      const [id, name, payloadJson, ...extra] = opts.key !== undefined ? [undefined, ...args] : args;
      if (name === undefined || extra.length > 0) {
        throw new InspectError("give <id> <name> [payload-json], or --key <key> <name> [payload-json]", EXIT.USAGE);
      }
      const ref = taskRef(id, opts.key);
      const payload = payloadJson === undefined ? undefined : parsePayload(payloadJson);
      const sent = await inspect.signalTask(open(db), ref, name, payload);
      if (opts.json) return printJson({ sent });
      print(`signal ${fmt.plain(name)} sent to ${fmt.plain(ref.key !== undefined ? `key ${ref.key}` : String(id))}`);
    });

  command("purge <db>", "delete finished tasks (oldest completion first)")
    .option("--older-than <duration>", "completed at least this long ago (e.g. 7d, 12h; default 0)", duration)
    .addOption(new Option("--status <status>", "only this terminal status").choices([...models.TERMINAL_STATUSES]))
    .option("--queue <queue>", "only this queue")
    .option("--name <name>", "only tasks of this name")
    .option("--limit <n>", "at most this many (default 1000)", positiveInt)
    .option("--dry-run", "count what would be purged; delete nothing")
    .action(async (db, opts) => {
      const done = await inspect.purge(open(db), {
        olderThanMs: opts.olderThan,
        status: opts.status,
        queue: opts.queue,
        name: opts.name,
        limit: opts.limit,
        dryRun: opts.dryRun === true,
      });
      if (opts.json) return printJson(done);
      print(
        done.dryRun
          ? `would purge ${done.count} task${done.count === 1 ? "" : "s"} (dry run: nothing deleted)`
          : `purged ${done.count} task${done.count === 1 ? "" : "s"}`,
      );
    });

  command("wait <db> <id>", "wait until a task finishes; the exit code tells how")
    .option("--timeout <duration>", "give up after this long (default 30s)", positiveDuration, 30_000)
    .action(async (db, id, opts) => {
      const cq = open(db);
      await inspect.getTask(cq, { id });
      let task;
      try {
        task = await cq.wait(id, { timeoutMs: opts.timeout });
      } catch (e) {
        if (/** @type {Error} */ (e).name === "TaskTimeout")
          throw new InspectError(/** @type {Error} */ (e).message, EXIT.TIMEOUT);
        throw e;
      }
      if (opts.json) printJson(task);
      else {
        const why = task.status === "failed" && task.error ? `: ${fmt.plain(task.error.message)}` : "";
        print(`${fmt.plain(task.id)} ${fmt.paintStatus(c, task.status)}${why}`);
      }
      state.code = task.status === "succeeded" ? EXIT.OK : task.status === "failed" ? EXIT.FAILED : EXIT.CANCELED;
    });

  command(
    "submit <db> [name] [payload]",
    "submit a task (creates the database if needed); payload is JSON; --file submits many in one transaction",
  )
    .option(
      "--file <path>",
      "submit every line of this JSON Lines file, { task, payload?, options? } each, all or nothing (- reads stdin)",
    )
    .option("--key <key>", "idempotency key")
    .addOption(
      new Option("--conflict <strategy>", "what a key already in use does").choices([
        "reuse",
        "reuse-succeeded",
        "reject",
        "replace",
      ]),
    )
    .option("--queue <queue>", "queue (default: default)")
    .option("--delay <duration>", "run no earlier than this from now", duration)
    .option(
      "--debounce <duration>",
      "with --key: a queued task under the key takes this payload and starts this long after this submit",
      duration,
    )
    .option(
      "--max-delay <duration>",
      "with --debounce: start no later than this after the burst's first submit",
      duration,
    )
    .option("--priority <n>", "higher runs first", integer)
    .option("--max-attempts <n>", "attempts before it fails for good", positiveInt)
    .option("--group <name>", "its group, for groupConcurrency and per-group rate limits")
    .option("--init", "install cairnq's tables even in a SQLite file that holds another application's tables")
    .action(async (db, name, payloadText, opts) => {
      if (opts.file !== undefined) {
        if (name !== undefined) throw new InspectError("submit: give a task name or --file, not both", EXIT.USAGE);
        const refs = await submitFile(open(db, { create: true, init: opts.init === true }), opts.file);
        if (opts.json) return printJson(refs);
        for (const ref of refs) print(`${fmt.plain(ref.id)} ${fmt.paintStatus(c, ref.status)}`);
        return;
      }
      if (name === undefined) throw new InspectError("submit: a task name (or --file) is required", EXIT.USAGE);
      const payload = payloadText === undefined ? {} : parsePayload(payloadText);
      const submitted = open(db, { create: true, init: opts.init === true }).submit(name, payload, {
        key: opts.key,
        conflict: opts.conflict,
        queue: opts.queue,
        runAtDelayMs: opts.delay,
        debounceMs: opts.debounce,
        maxDelayMs: opts.maxDelay,
        priority: opts.priority,
        maxAttempts: opts.maxAttempts,
        group: opts.group,
      });
      const task = await submitted.catch(submitError);
      if (opts.json) return printJson(task);
      print(`${fmt.plain(task.id)} ${fmt.paintStatus(c, task.status)} on queue ${fmt.plain(task.queue)}`);
    });

  defineSchedulesCommand({ command, open, print, printJson, colors: c });
  definePauseCommands({ command, open, print, printJson, colors: c });
  defineBulkCommands({ command, open, print, printJson, colors: c, positiveInt, duration });

  command("top <db>", "a live view: counts, throughput, oldest queued, running tasks (Ctrl-C to quit)")
    .option("--queue <queue>", "only this queue")
    .option("--interval <duration>", "refresh every (default 1s)", positiveDuration, 1000)
    .action(async (db, opts) => {
      const { runTop } = require("./top.js");
      const signal = await runTop(open(db), {
        db,
        queue: opts.queue,
        intervalMs: opts.interval,
        json: opts.json === true,
        out,
        colors: c,
      });
      // Stopped by a signal, on a terminal or piped alike: the shell's 128 + n.
      state.code = EXIT.SIGNALED + (signal === "SIGTERM" ? 15 : 2);
    });

  command("events <db>", "print task events as they happen (Ctrl-C to quit)")
    .option("--queue <queue>", "only this queue")
    .option("--name <name>", "only this task name")
    .option("--task <id>", "only this task")
    .option("--after <position>", "resume after this event position (0: from the oldest kept)")
    .option("--count <n>", "stop after n events", positiveInt)
    .action(async (db, opts) => {
      const { runEvents } = require("./events.js");
      const signal = await runEvents(open(db), { ...opts, json: opts.json === true, out, colors: c });
      if (signal !== null) state.code = EXIT.SIGNALED + (signal === "SIGTERM" ? 15 : 2);
    });

  require("./metrics.js").defineMetrics(program, open, out);

  command("ui <db>", "serve the web dashboard")
    .option("--port <port>", "port (default 4680; 0 picks a free one)", port, 4680)
    .option("--host <host>", "address to bind (default 127.0.0.1)", "127.0.0.1")
    .option(
      "--token <token>",
      "required on every request, 16 characters or more (default: $CAIRNQ_UI_TOKEN; generated when --host is not loopback)",
    )
    .option("--read-only", "no retry, cancel or purge")
    .option("--base-path <path>", "serve under this path prefix", basePath, "/")
    .option("--no-live", "pages poll instead of following task events (which need the events tables)")
    .action(async (db, opts) => {
      const { serve } = require("../dashboard/server.js");
      const { tokenProblem } = require("../dashboard/handler.js");
      // From the environment, the token stays out of the process list.
      const token = opts.token ?? env.CAIRNQ_UI_TOKEN;
      const weak = token === undefined ? null : tokenProblem(token);
      if (weak !== null)
        throw new InspectError(`${opts.token !== undefined ? "--token" : "CAIRNQ_UI_TOKEN"} ${weak}`, EXIT.USAGE);
      const cq = open(db);
      // Refuse a missing or foreign database before listening.
      await cq.store.connect();
      await serve(cq, {
        db,
        port: opts.port,
        host: opts.host,
        token,
        readOnly: opts.readOnly === true,
        live: opts.live !== false,
        basePath: opts.basePath,
        out,
        json: opts.json === true,
      });
    });

  try {
    await program.parseAsync(argv);
    return state.code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version print and exit 0; every other parse error has
      // printed its one line already.
      return e.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    const failure = inspect.classify(e);
    err.write(`${ce.red(`error: ${fmt.plain(failure.message)}`)}\n`);
    return failure.exitCode;
  } finally {
    await closeQuietly(client);
  }
}

/** @param {CairnQ | null} client */
async function closeQuietly(client) {
  if (!client) return;
  try {
    await client.close();
  } catch {
    // Closing after a failed open has nothing to report.
  }
}

/**
 * @param {string | undefined} id
 * @param {string | undefined} key
 * @returns {{ id?: string, key?: string }}
 */
function taskRef(id, key) {
  if (id !== undefined && key !== undefined) throw new InspectError("give a task id or --key, not both", EXIT.USAGE);
  if (id === undefined && key === undefined) throw new InspectError("give a task id or --key <key>", EXIT.USAGE);
  return key !== undefined ? { key } : { id };
}

/**
 * The human form of `get`.
 * @param {fmt.Colors} c
 * @param {Task} task
 * @param {import("../../index.js").TaskSummary[]} children
 */
function describeTask(c, task, children) {
  const now = Date.now();
  const lease =
    task.lease_until_ms == null
      ? "-"
      : `${fmt.plain(task.worker_id ?? "?")}, ${task.lease_until_ms > now ? `expires ${fmt.relativeTime(task.lease_until_ms, now)}` : `expired ${fmt.relativeTime(task.lease_until_ms, now)}`}`;
  const t = fmt.table(c, ["", ""]);
  t.options.head = [];
  /** @type {[string, string][]} */
  const rows = [
    ["id", fmt.plain(task.id)],
    ["name", fmt.plain(task.name)],
    ["queue", fmt.plain(task.queue)],
    [
      "status",
      fmt.paintStatus(c, task.status) + (task.cancel_requested_at_ms != null ? c.yellow(" (cancel requested)") : ""),
    ],
    ["attempt", `${task.attempt}/${task.max_attempts}`],
    ["priority", String(task.priority)],
    ["progress", task.progress == null ? "-" : fmt.progressBar(task.progress)],
    ["message", task.message == null ? "-" : fmt.plain(task.message)],
    ["lease", lease],
    ["run at", fmt.timestamp(task.run_at_ms, now)],
    ["created", fmt.timestamp(task.created_at_ms, now)],
    ["updated", fmt.timestamp(task.updated_at_ms, now)],
    ["completed", fmt.timestamp(task.completed_at_ms, now)],
    ["parent", fmt.plain(task.parent_id ?? "-")],
    ["root", fmt.plain(task.root_id ?? "-")],
    ["correlation", fmt.plain(task.correlation_id ?? "-")],
  ];
  for (const [k, v] of rows) t.push([c.dim(k), v]);
  const sections = [fmt.render(t), "", c.bold("payload"), fmt.prettyJson(task.payload)];
  if (task.metadata && Object.keys(task.metadata).length > 0)
    sections.push("", c.bold("metadata"), fmt.prettyJson(task.metadata));
  if (task.result != null) sections.push("", c.bold("result"), fmt.prettyJson(task.result));
  if (task.error != null) sections.push("", c.bold(c.red("error")), fmt.prettyJson(task.error));
  if (children.length > 0) {
    const s = fmt.table(c, ["SPAWNED", "NAME", "STATUS"]);
    for (const child of children)
      s.push([fmt.plain(child.id), fmt.plain(child.name), fmt.paintStatus(c, child.status)]);
    sections.push("", fmt.render(s));
  }
  return sections.join("\n");
}

module.exports = { main, EXIT };
