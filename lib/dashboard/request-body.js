"use strict";
// An action's request body: at most MAX_BODY bytes (else 413), a JSON object
// with only the fields its route takes, each of the type it takes (else 400).
// A body the route does not expect is refused before anything is done, never
// read as "no filters".

const { MAX_BODY, HttpError } = require("./responses.js");

/** @typedef {"string" | "number" | "boolean"} FieldType */

/**
 * @param {Request} request
 * @param {Record<string, FieldType[]>} fields what the route takes: name → accepted JSON types
 * @returns {Promise<Record<string, string | number | boolean>>}
 */
async function readJsonBody(request, fields) {
  const raw = await readBounded(request);
  let value;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw new HttpError(400, "the request body is not JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new HttpError(400, "the request body must be a JSON object");
  }
  for (const [name, v] of Object.entries(value)) {
    const types = Object.hasOwn(fields, name) ? fields[name] : null;
    if (types === null) {
      const known = Object.keys(fields);
      throw new HttpError(
        400,
        `unknown field in the request body: ${JSON.stringify(name)}${known.length ? ` (this action takes ${known.join(", ")})` : " (this action takes none)"}`,
      );
    }
    if (!types.includes(/** @type {FieldType} */ (typeof v)))
      throw new HttpError(400, `${name} must be a ${types.join(" or ")}`);
  }
  return value;
}

/**
 * The body's bytes, read no further than MAX_BODY.
 * @param {Request} request
 * @returns {Promise<Uint8Array>}
 */
async function readBounded(request) {
  const tooLarge = () => new HttpError(413, `request body too large (at most ${MAX_BODY} bytes)`);
  if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY) throw tooLarge();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

module.exports = { readJsonBody };
