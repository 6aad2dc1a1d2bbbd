"use strict";
// What `cairnq submit` reads: a payload as JSON text, or `--file` lines as
// `submitMany`'s items; and how a submit's failure is reported.

const fs = require("node:fs");
const { EXIT, InspectError } = require("../admin/inspect.js");

/**
 * A submit's failure as the command line reports it.
 * @param {Error & { code?: string }} e
 * @returns {never}
 */
function submitError(e) {
  if (e.code === "CAIRNQ_NOT_CAIRNQ")
    throw new InspectError(`${e.message}; pass --init to add cairnq's tables to it anyway`, EXIT.NO_DATABASE);
  // JSON text that parses to what JSON cannot store (1e999 is Infinity).
  if (e.name === "SerializationError") throw new InspectError(`payload cannot be stored: ${e.message}`, EXIT.USAGE);
  throw e;
}

/**
 * `submit --file`: the file's non-blank lines as `submitMany`'s items, one
 * transaction; a refusal names the file's line, not the item's index.
 * @param {import("../client.js").CairnQ} cq
 * @param {string} path a file, or "-" for stdin
 */
async function submitFile(cq, path) {
  let text;
  try {
    text = path === "-" ? await readAll(process.stdin) : await fs.promises.readFile(path, "utf8");
  } catch (e) {
    throw new InspectError(`cannot read ${path}: ${/** @type {Error} */ (e).message}`, EXIT.USAGE);
  }
  /** @type {number[]} */
  const lineOf = [];
  const items = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      items.push(JSON.parse(line));
    } catch (e) {
      throw new InspectError(`line ${i + 1}: not valid JSON: ${/** @type {Error} */ (e).message}`, EXIT.USAGE);
    }
    lineOf.push(i + 1);
  }
  return cq.submitMany(items).catch((/** @type {Error} */ e) => {
    const at = /items\[(\d+)\]/.exec(e.message);
    if (at === null) return submitError(e);
    // "items[3].options.priority …" reads "line 4: options.priority …"; a
    // refusal naming the item further in keeps its words.
    const rest = at.index === 0 ? e.message.slice(at[0].length).replace(/^[.:] ?/, "") : e.message;
    throw new InspectError(`line ${lineOf[Number(at[1])]}: ${rest}`, EXIT.USAGE);
  });
}

/** @param {NodeJS.ReadableStream} stream */
async function readAll(stream) {
  /** @type {Buffer[]} */
  const chunks = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A payload given as JSON text on the command line.
 * @param {string} text
 * @returns {unknown}
 */
function parsePayload(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InspectError(`payload is not valid JSON: ${/** @type {Error} */ (e).message}`, EXIT.USAGE);
  }
}

module.exports = { submitError, submitFile, parsePayload };
