"use strict";
// `cairnq top`: a live terminal view, redrawn in place (log-update) until
// Ctrl-C. Each refresh is one `stats` read, one bounded `list` of running
// tasks and, per queue with queued tasks, a one-row `list` for the oldest.

const inspect = require("../admin/inspect.js");
const { redact } = require("../admin/redact.js");
const fmt = require("./format.js");
const STATUSES = /** @type {import("../../index.js").TaskStatus[]} */ ([...require("../models.js").STATUSES]);

/**
 * @typedef {import("../client.js").CairnQ} CairnQ
 * @typedef {import("./format.js").Colors} Colors
 */

const RUNNING_SHOWN = 15;

/**
 * @param {CairnQ} client
 * @param {{ db: string, queue?: string, intervalMs: number, json: boolean, out: { write: (s: string) => unknown }, colors: Colors }} opts
 * @returns {Promise<"SIGINT" | "SIGTERM" | null>} the signal that stopped it
 */
async function runTop(client, opts) {
  const c = opts.colors;
  const throughput = new inspect.Throughput(40, opts.intervalMs);
  /** @type {((text: string) => void) & { done?: () => void }} */
  let render;
  if (opts.json) {
    render = (text) => opts.out.write(`${text}\n`);
  } else {
    const { createLogUpdate } = await import("log-update");
    // log-update writes to a stream; anything with write() will do here.
    render = createLogUpdate(/** @type {NodeJS.WriteStream} */ (/** @type {unknown} */ (opts.out)), {
      showCursor: false,
    });
  }
  /** @type {{ by: "SIGINT" | "SIGTERM" | null }} */
  const stopped = { by: null };
  /** @type {() => void} */
  let wake = () => {};
  const onInt = () => stop("SIGINT");
  const onTerm = () => stop("SIGTERM");
  /** @param {"SIGINT" | "SIGTERM"} signal */
  const stop = (signal) => {
    stopped.by = signal;
    wake();
  };
  process.once("SIGINT", onInt);
  process.once("SIGTERM", onTerm);
  try {
    while (stopped.by === null) {
      const frame = await snapshot(client, opts.queue, throughput);
      render(opts.json ? JSON.stringify(frame) : draw(c, opts.db, frame, throughput));
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, opts.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve(undefined);
        };
      });
    }
  } finally {
    process.removeListener("SIGINT", onInt);
    process.removeListener("SIGTERM", onTerm);
    render.done?.();
  }
  return stopped.by;
}

/**
 * @param {CairnQ} client
 * @param {string | undefined} queue
 * @param {inspect.Throughput} throughput
 */
async function snapshot(client, queue, throughput) {
  const counts = await inspect.stats(client, queue);
  throughput.add(counts);
  const oldest = /** @type {Record<string, number | null>} */ ({});
  for (const [q, row] of Object.entries(counts)) oldest[q] = await inspect.oldestQueuedAgeMs(client, q, row.queued);
  const running = await inspect.listSummaries(client, { status: "running", queue, limit: RUNNING_SHOWN });
  const rates = Object.fromEntries(Object.keys(counts).map((q) => [q, throughput.series(q).at(-1) ?? 0]));
  return { at: Date.now(), counts, throughputPerSec: rates, oldestQueuedMs: oldest, running };
}

/**
 * @param {Colors} c
 * @param {string} db
 * @param {Awaited<ReturnType<typeof snapshot>>} frame
 * @param {inspect.Throughput} throughput
 */
function draw(c, db, frame, throughput) {
  const lines = [
    `${c.bold("cairnq top")}  ${c.dim(redact(db))}  ${c.dim(new Date(frame.at).toISOString())}  ${c.dim("Ctrl-C to quit")}`,
    "",
  ];
  const queues = fmt.table(c, ["QUEUE", ...STATUSES.map((s) => s.toUpperCase()), "DONE/S", "TREND", "OLDEST QUEUED"], {
    align: ["left", "right", "right", "right", "right", "right", "right", "left", "right"],
  });
  for (const [queue, row] of Object.entries(frame.counts)) {
    const age = frame.oldestQueuedMs[queue];
    queues.push([
      fmt.plain(queue),
      ...STATUSES.map((s) => (row[s] > 0 ? fmt.paintStatus(c, s, String(row[s])) : String(row[s]))),
      (frame.throughputPerSec[queue] ?? 0).toFixed(1),
      fmt.sparkline(throughput.series(queue).slice(-20)),
      age == null ? "-" : fmt.humanDuration(age),
    ]);
  }
  lines.push(Object.keys(frame.counts).length ? fmt.render(queues) : "no tasks", "");
  if (frame.running.length) {
    const running = fmt.table(c, ["RUNNING", "NAME", "QUEUE", "ATTEMPT", "PROGRESS", "MESSAGE", "LEASE LEFT"]);
    for (const task of frame.running) {
      const left =
        task.lease_until_ms == null
          ? "-"
          : task.lease_until_ms > frame.at
            ? fmt.humanDuration(task.lease_until_ms - frame.at)
            : c.red("expired");
      running.push([
        fmt.plain(task.id),
        fmt.truncate(task.name, 30),
        fmt.plain(task.queue),
        `${task.attempt}/${task.max_attempts}`,
        fmt.progressBar(task.progress),
        fmt.truncate(task.message ?? "", 30),
        left,
      ]);
    }
    lines.push(fmt.render(running));
  } else {
    lines.push(c.dim("nothing running"));
  }
  return lines.join("\n");
}

module.exports = { runTop };
