"use strict";
// `cairnq ui`: the dashboard handler on Node's http server. Binds 127.0.0.1
// by default, and a loopback bind answers only to loopback host names; any
// other address requires a token (given, or generated and printed) and
// answers any host name. Slow clients are cut off: a request must arrive
// whole within REQUEST_TIMEOUT_MS, its headers within HEADERS_TIMEOUT_MS.

const crypto = require("node:crypto");
const http = require("node:http");

const { createDashboard, normalizeBase } = require("./handler.js");
const { toNodeHandler } = require("./node-adapter.js");
const { isLoopback } = require("./hosts.js");
const { redact } = require("../admin/redact.js");

/** @typedef {import("../client.js").CairnQ} CairnQ */

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * Serve until SIGINT/SIGTERM.
 * @param {CairnQ} client
 * @param {{ db: string, port: number, host: string, token?: string, readOnly: boolean, live: boolean, basePath: string, json: boolean, out: { write: (s: string) => unknown } }} opts
 * @returns {Promise<void>}
 */
async function serve(client, opts) {
  const loopback = isLoopback(opts.host);
  const token = opts.token ?? (loopback ? undefined : crypto.randomBytes(18).toString("base64url"));
  const handler = createDashboard({
    client: /** @type {any} */ (client),
    basePath: opts.basePath,
    readOnly: opts.readOnly,
    live: opts.live,
    token,
    // A loopback bind keeps the default: loopback names only (no DNS rebinding).
    allowedHosts: loopback ? undefined : true,
  });
  const server = http.createServer({
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // How often Node looks for connections past those limits (30 s by default).
    connectionsCheckingInterval: 1_000,
  });
  // Node hands CONNECT to this event and, unanswered, drops the socket.
  server.on("connect", (_req, socket) =>
    socket.end("HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"),
  );
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve(undefined));
  });
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  server.on("request", toNodeHandler(handler));
  const url = `http://${shownHost}:${address.port}${normalizeBase(opts.basePath)}`;
  const openUrl = token ? `${url}?token=${encodeURIComponent(token)}` : url;
  if (opts.json) {
    opts.out.write(`${JSON.stringify({ url, openUrl, token: token ?? null, readOnly: opts.readOnly })}\n`);
  } else {
    opts.out.write(`cairnq dashboard for ${redact(opts.db)}${opts.readOnly ? " (read-only)" : ""}\n`);
    opts.out.write(`open ${openUrl}\n`);
    if (token && !opts.token) opts.out.write(`token (generated): ${token}\n`);
    opts.out.write("Ctrl-C to stop\n");
  }
  await new Promise((resolve) => {
    const stop = () => {
      process.removeListener("SIGINT", stop);
      process.removeListener("SIGTERM", stop);
      server.closeAllConnections?.();
      server.close(() => resolve(undefined));
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await handler.close();
}

module.exports = { serve };
