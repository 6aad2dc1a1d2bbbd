"use strict";
// `cairnq ui`: the dashboard handler on Node's http server. Binds 127.0.0.1
// by default; any other address requires a token (given, or generated and
// printed), and a loopback bind only answers to loopback host names.

const crypto = require("node:crypto");
const http = require("node:http");

const { createDashboard, toNodeHandler } = require("./handler.js");
const { redact } = require("../cli/top.js");

/** @typedef {import("../client.js").CairnQ} CairnQ */

/** @param {string} host */
function isLoopback(host) {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Serve until SIGINT/SIGTERM.
 * @param {CairnQ} client
 * @param {{ db: string, port: number, host: string, token?: string, readOnly: boolean, basePath: string, json: boolean, out: { write: (s: string) => unknown } }} opts
 * @returns {Promise<void>}
 */
async function serve(client, opts) {
  const loopback = isLoopback(opts.host);
  const token = opts.token ?? (loopback ? undefined : crypto.randomBytes(18).toString("base64url"));
  const server = http.createServer();
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve(undefined));
  });
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  // A loopback dashboard answers only to loopback names (no DNS rebinding).
  const allowedHosts = loopback ? ["127.0.0.1", "localhost", "[::1]"].map((h) => `${h}:${address.port}`) : undefined;
  const handler = createDashboard({ client: /** @type {any} */ (client), basePath: opts.basePath, readOnly: opts.readOnly, token, allowedHosts });
  server.on("request", toNodeHandler(handler));
  const base = opts.basePath.startsWith("/") ? opts.basePath : `/${opts.basePath}`;
  const url = `http://${shownHost}:${address.port}${base.endsWith("/") ? base : `${base}/`}`;
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

module.exports = { serve, isLoopback };
