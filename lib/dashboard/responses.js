"use strict";
// The dashboard's answers: the headers every one carries, their shapes
// (JSON, text, redirect) and the limits of what it accepts. Shared by the
// fetch-style handler and the Node adapter, which answers a request the
// Fetch API cannot carry before the handler sees it.

/** The largest request body read (an action's JSON is a few hundred bytes). */
const MAX_BODY = 16 * 1024;

/** The methods the dashboard serves; any other is 405. */
const METHODS = ["GET", "HEAD", "POST"];

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** A refusal with its HTTP status, answered as `{ error }`. */
class HttpError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}

/**
 * @param {unknown} value
 * @param {number} [status]
 */
function json(value, status = 200) {
  return new Response(JSON.stringify(value), {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8" },
  });
}

/**
 * @param {number} status
 * @param {string} body
 * @param {Record<string, string>} [headers]
 */
function text(status, body, headers = {}) {
  return new Response(`${body}\n`, {
    status,
    headers: { ...SECURITY_HEADERS, ...headers, "content-type": "text/plain; charset=utf-8" },
  });
}

/**
 * A 303 to a path of this site: leading slashes and backslashes collapse to
 * one, so `//evil.example/` cannot become another host.
 * @param {string} path
 * @param {Record<string, string>} [headers]
 */
function redirect(path, headers = {}) {
  return new Response(null, {
    status: 303,
    headers: { ...SECURITY_HEADERS, ...headers, location: `/${path.replace(/^[/\\]+/, "")}` },
  });
}

module.exports = { MAX_BODY, METHODS, SECURITY_HEADERS, HttpError, json, text, redirect };
