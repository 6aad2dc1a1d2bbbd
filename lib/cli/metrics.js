"use strict";
// `cairnq metrics <db>`: the Prometheus text `/metrics` serves, printed once
// (its finished counters start at this reading, so they read 0). On a
// terminal its control characters are shown escaped, as every command shows
// stored values; piped, the text is exact, for programs.

const { createMetrics } = require("../metrics.js");
const { plainLines } = require("./format.js");

/**
 * @param {import("commander").Command} program
 * @param {(db: string) => import("../client.js").CairnQ} open
 * @param {{ write: (s: string) => unknown, isTTY?: boolean }} out
 */
function defineMetrics(program, open, out) {
  program
    .command("metrics <db>")
    .description("print the Prometheus metrics once (what `cairnq ui` serves at /metrics)")
    .addHelpText("after", "\n<db> is a SQLite file path or a postgres:// DSN. Exit codes: cairnq --help.")
    .action(async (db) => {
      const text = await createMetrics({ client: /** @type {any} */ (open(db)) }).render();
      out.write(out.isTTY === true ? plainLines(text) : text);
    });
}

module.exports = { defineMetrics };
