"use strict";
// The command line's option parsers (commander's argParser): each turns one
// bad value into one clear line.

const { InvalidArgumentError } = require("commander");
const { parseDuration } = require("../admin/duration.js");
/** @param {string} v */
function positiveInt(v) {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError("must be a positive integer.");
  return n;
}

/** @param {string} v */
function nonNegativeInt(v) {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InvalidArgumentError("must be a non-negative integer.");
  return n;
}

/** @param {string} v */
function port(v) {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65535) throw new InvalidArgumentError("must be a port number from 0 to 65535.");
  return n;
}

/** @param {string} v */
function basePath(v) {
  const { normalizeBase } = require("../dashboard/handler.js");
  try {
    normalizeBase(v);
  } catch (err) {
    throw new InvalidArgumentError(`${/** @type {Error} */ (err).message.replace(/^basePath /, "")}.`);
  }
  return v;
}

/** @param {string} v */
function integer(v) {
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InvalidArgumentError("must be an integer.");
  return n;
}

/** @param {string} v */
function duration(v) {
  try {
    return parseDuration(v);
  } catch (err) {
    throw new InvalidArgumentError(`${/** @type {Error} */ (err).message}.`);
  }
}

/** @param {string} v */
function positiveDuration(v) {
  const ms = duration(v);
  if (ms <= 0) throw new InvalidArgumentError("must be a positive duration.");
  return ms;
}

module.exports = { positiveInt, nonNegativeInt, port, basePath, integer, duration, positiveDuration };
