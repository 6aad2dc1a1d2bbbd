"use strict";
// The dashboard's fetch-style handler on Node's http (and Express, Connect,
// Fastify's raw handlers): `(req, res, next?)`. What the Fetch API cannot
// carry is answered here with a 4xx before the handler sees it (a request
// target that is not a path, a Host that is not a host name, a method the
// dashboard does not serve, a body over MAX_BODY), and nothing a client sends
// throws out of the adapter: the server that embeds it stays up.

const { MAX_BODY, METHODS, text } = require("./responses.js");
const { parseHost } = require("./hosts.js");

/**
 * @typedef {import("../../index.js").DashboardHandler} DashboardHandler
 * @typedef {import("node:http").IncomingMessage} IncomingMessage
 * @typedef {import("node:http").ServerResponse} ServerResponse
 */

/**
 * Under Express, mount it with the same path as the handler's `basePath`
 * (the adapter reads `req.originalUrl`).
 * @param {DashboardHandler} handler
 * @returns {(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void}
 */
function toNodeHandler(handler) {
  return (req, res, next) => {
    /** @param {unknown} err */
    const fail = (err) => {
      try {
        if (next) next(err);
        else if (res.headersSent) res.destroy();
        else res.writeHead(500, { connection: "close" }).end();
      } catch {
        res.destroy();
      }
    };
    /**
     * Answered before the body is read: the connection closes after it.
     * @param {Response} response
     */
    const refuse = (response) => {
      response.headers.set("connection", "close");
      send(req, res, response).catch(fail);
    };
    req.on("error", () => res.destroy());

    const method = req.method ?? "GET";
    const url = requestUrl(req);
    if (url === null)
      return refuse(text(400, "bad request: the target must be a path and the Host header a host name"));
    if (!METHODS.includes(method)) return refuse(text(405, "method not allowed", { allow: METHODS.join(", ") }));
    const tooLarge = () => refuse(text(413, `request body too large (at most ${MAX_BODY} bytes)`));
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY) return tooLarge();

    const chunks = /** @type {Buffer[]} */ ([]);
    let size = 0;
    req.on("data", (chunk) => {
      if (size > MAX_BODY) return;
      size += chunk.length;
      if (size > MAX_BODY) {
        chunks.length = 0;
        tooLarge();
      } else chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY) return;
      let request;
      try {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
          if (v === undefined) continue;
          for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
        }
        request = new Request(url, {
          method,
          headers,
          body: method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks),
        });
      } catch {
        return refuse(text(400, "bad request"));
      }
      handler(request)
        .then((response) => send(req, res, response))
        .catch(fail);
    });
  };
}

/**
 * The request's absolute URL, or null when the target is not a path (the
 * absolute form `GET http://x/` is for proxies; `*`, `host:port`) or the Host
 * header is missing or not a host name.
 * @param {IncomingMessage} req
 * @returns {string | null}
 */
function requestUrl(req) {
  const target = /** @type {{ originalUrl?: string }} */ (req).originalUrl ?? req.url ?? "";
  const host = req.headers.host;
  if (!target.startsWith("/") || host === undefined || parseHost(host) === null) return null;
  try {
    return new URL(`http://${host}${target}`).href;
  } catch {
    return null;
  }
}

/**
 * @param {IncomingMessage} req
 * @param {ServerResponse} res
 * @param {Response} response
 */
async function send(req, res, response) {
  /** @type {Record<string, string>} */
  const headers = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  if (req.method === "HEAD" || !headers["content-type"]?.startsWith("text/event-stream")) {
    const body = req.method === "HEAD" ? null : Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  // The live updates: streamed as they come (they never end by themselves);
  // a client that goes away cancels the stream.
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader();
  res.once("close", () => reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

module.exports = { toNodeHandler };
