"use strict";
// The web dashboard as a fetch-style handler (`Request → Response`, what
// Bun.serve, Hono, Deno and others accept), plus an adapter for Node's http
// and Express. Everything it knows comes through the client API
// (lib/cli/inspect.js); the page is static files of this package that build
// their DOM from text nodes only, so no database value is ever parsed as HTML.
//
// Safety: an optional token checked on every request (cookie, bearer header,
// or ?token= which sets the cookie); actions only as POST with a CSRF token
// and a same-origin check; an optional Host allow-list (DNS rebinding); a
// Content-Security-Policy that allows nothing but this origin.

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const inspect = require("../cli/inspect.js");
const { metricsRoute } = require("./metrics.js");
const { parseDuration } = require("../cli/format.js");
const { STATUSES } = require("../models.js");

/**
 * @typedef {import("../client.js").CairnQ} CairnQ
 * @typedef {import("../../index.js").DashboardOptions} DashboardOptions
 * @typedef {import("../../index.js").DashboardHandler} DashboardHandler
 * @typedef {import("../../index.js").TaskStatus} TaskStatus
 */

const ASSETS = path.join(__dirname, "assets");
const FILES = /** @type {const} */ ({
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
});
const MAX_PAGE = 100;
const MAX_BODY = 16 * 1024;

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/**
 * @param {DashboardOptions} options
 * @returns {DashboardHandler}
 */
function createDashboard(options) {
  if (!options || (options.client === undefined && options.db === undefined)) {
    throw new TypeError("createDashboard needs { client } or { db }");
  }
  const ownsClient = options.client === undefined;
  const client = /** @type {CairnQ} */ (options.client ?? inspect.openClient(/** @type {string} */ (options.db)));
  const basePath = normalizeBase(options.basePath ?? "/");
  const readOnly = options.readOnly === true;
  const token = options.token ?? null;
  const allowedHosts = options.allowedHosts ? options.allowedHosts.map((h) => h.toLowerCase()) : null;
  const refreshMs = Math.max(250, options.refreshMs ?? 2000);
  const csrf = crypto.randomBytes(24).toString("base64url");
  const cookieName = "cairnq_dashboard_token";
  const assets = new Map(Object.entries(FILES).map(([name, type]) => [name, { body: fs.readFileSync(path.join(ASSETS, name)), type }]));
  const throughput = new inspect.Throughput(60);
  const metrics = metricsRoute(client, options.workers);
  /** @type {{ at: number, body: unknown } | null} */
  let overview = null;
  /** @type {Promise<unknown> | null} */
  let sampling = null;

  /**
   * Counts and throughput, read at most once per half refresh whatever the
   * number of open pages: one `stats` read.
   */
  async function readOverview() {
    if (overview && Date.now() - overview.at < refreshMs / 2) return overview.body;
    if (!sampling) {
      sampling = (async () => {
        const counts = await inspect.stats(client);
        const at = Date.now();
        throughput.add(counts, at);
        const body = {
          at,
          refreshMs,
          queues: Object.entries(counts).map(([queue, row]) => ({
            queue,
            counts: row,
            perSecond: throughput.series(queue),
          })),
          perSecond: throughput.series(),
        };
        overview = { at, body };
        return body;
      })().finally(() => {
        sampling = null;
      });
    }
    return sampling;
  }

  /**
   * @param {Request} request
   * @returns {Promise<Response>}
   */
  async function handle(request) {
    const url = new URL(request.url);
    // The Host header where the server passes it on, else the URL's host.
    if (allowedHosts && !allowedHosts.includes((request.headers.get("host") ?? url.host).toLowerCase())) {
      return text(421, "this dashboard does not answer for that host name");
    }
    if (token !== null) {
      const offered = url.searchParams.get("token");
      if (offered !== null && request.method === "GET" && sameSecret(offered, token)) {
        // Trade the URL's token for a cookie, then drop it from the address bar.
        url.searchParams.delete("token");
        const cookie = `${cookieName}=${encodeURIComponent(token)}; Path=${basePath}; HttpOnly; SameSite=Strict`;
        return redirect(url.pathname + url.search, { "set-cookie": cookie });
      }
      const bearer = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
      const cookie = readCookie(request.headers.get("cookie"), cookieName);
      if (!(bearer !== undefined && sameSecret(bearer, token)) && !(cookie !== null && sameSecret(cookie, token))) {
        return text(401, "this dashboard needs its token: open the URL printed by `cairnq ui` (…/?token=…)");
      }
    }

    if (!url.pathname.startsWith(basePath) && `${url.pathname}/` !== basePath) return text(404, "not found");
    if (`${url.pathname}/` === basePath) return redirect(basePath + url.search);
    const route = url.pathname.slice(basePath.length);

    try {
      if (request.method === "GET" || request.method === "HEAD") {
        if (route === "" || route === "index.html") return asset("index.html");
        if (route.startsWith("assets/")) return asset(route.slice("assets/".length));
        if (route === "api/config") {
          return json({ csrf, readOnly, refreshMs, statuses: STATUSES, version: require("../../package.json").version });
        }
        if (route === "api/overview") return json(await readOverview());
        if (route === "metrics") return await metrics();
        if (route === "api/tasks") return json(await listTasks(url.searchParams));
        if (route === "api/search") return json(await search(url.searchParams.get("q") ?? ""));
        if (route === "api/purge-preview") {
          const done = await inspect.purge(client, { ...purgeFilter(url.searchParams), dryRun: true });
          return json({ count: done.count });
        }
        const taskMatch = /^api\/tasks\/([^/]+)$/.exec(route);
        if (taskMatch) {
          const task = await inspect.getTask(client, { id: decodeURIComponent(taskMatch[1]) });
          const spawned = await inspect.spawned(client, task);
          return json({ task, spawned });
        }
        return text(404, "not found");
      }
      if (request.method === "POST") {
        const refused = checkAction(request, url);
        if (refused) return refused;
        const body = await readBody(request);
        if (route === "api/purge") {
          const done = await inspect.purge(client, purgeFilter(new URLSearchParams(Object.entries(body).map(([k, v]) => /** @type {[string, string]} */ ([k, String(v)])))));
          overview = null;
          return json({ count: done.count });
        }
        const action = /^api\/tasks\/([^/]+)\/(retry|cancel)$/.exec(route);
        if (action) {
          const ref = { id: decodeURIComponent(action[1]) };
          const task = action[2] === "retry" ? await inspect.retryTask(client, ref, { resetAttempt: body.resetAttempt === true }) : await inspect.cancelTask(client, ref);
          overview = null;
          return json({ task });
        }
        return text(404, "not found");
      }
      return text(405, "method not allowed");
    } catch (err) {
      const failure = inspect.classify(err);
      const status = { [inspect.EXIT.NOT_FOUND]: 404, [inspect.EXIT.USAGE]: 400, [inspect.EXIT.REFUSED]: 409, [inspect.EXIT.NO_DATABASE]: 503 }[failure.exitCode] ?? 500;
      return json({ error: failure.message }, status);
    }
  }

  /**
   * A state-changing request must be a same-origin POST carrying the CSRF
   * token, on a dashboard that is not read-only.
   * @param {Request} request
   * @param {URL} url
   * @returns {Response | null}
   */
  function checkAction(request, url) {
    if (readOnly) return json({ error: "this dashboard is read-only" }, 403);
    const origin = request.headers.get("origin");
    if (origin !== null && origin !== url.origin) return json({ error: "cross-origin request refused" }, 403);
    const site = request.headers.get("sec-fetch-site");
    if (site !== null && site !== "same-origin") return json({ error: "cross-site request refused" }, 403);
    const offered = request.headers.get("x-csrf-token");
    if (offered === null || !sameSecret(offered, csrf)) return json({ error: "missing or wrong CSRF token: reload the page" }, 403);
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
      return json({ error: "actions take a JSON body" }, 415);
    }
    return null;
  }

  /** @param {URLSearchParams} q */
  async function listTasks(q) {
    const limit = Math.min(MAX_PAGE, boundedInt(q.get("limit"), 25, 1));
    const offset = boundedInt(q.get("offset"), 0, 0);
    const status = q.get("status") || undefined;
    if (status !== undefined && !STATUSES.includes(/** @type {TaskStatus} */ (status))) {
      throw new inspect.InspectError(`unknown status filter: ${status}`, inspect.EXIT.USAGE);
    }
    const rows = await client.list({
      queue: q.get("queue") || undefined,
      status: /** @type {TaskStatus | undefined} */ (status),
      name: q.get("name") || undefined,
      rootId: q.get("root") || undefined,
      correlationId: q.get("correlation") || undefined,
      limit: limit + 1,
      offset,
    });
    return { tasks: rows.slice(0, limit), hasMore: rows.length > limit, offset, limit };
  }

  /** An id, else a key: at most two point reads. @param {string} q */
  async function search(q) {
    const term = q.trim();
    if (term === "") return { task: null };
    const byId = await client.get(term);
    if (byId) return { task: byId, by: "id" };
    const byKey = await client.getByKey(term);
    return { task: byKey, by: byKey ? "key" : null };
  }

  /** @param {string} name */
  function asset(name) {
    const file = assets.get(name);
    if (!file) return text(404, "not found");
    return new Response(new Uint8Array(file.body), { status: 200, headers: { ...SECURITY_HEADERS, "content-type": file.type } });
  }

  const handler = /** @type {DashboardHandler} */ (handle);
  handler.close = async () => {
    if (ownsClient) await client.close();
  };
  return handler;
}

/** @param {URLSearchParams} q @returns {inspect.PurgeFilter} */
function purgeFilter(q) {
  const older = q.get("olderThan");
  return {
    olderThanMs: older ? parseDurationOrThrow(older) : undefined,
    status: /** @type {TaskStatus | undefined} */ (q.get("status") || undefined),
    queue: q.get("queue") || undefined,
    name: q.get("name") || undefined,
    limit: q.get("limit") ? boundedInt(q.get("limit"), 1000, 1) : undefined,
  };
}

/** @param {string} v */
function parseDurationOrThrow(v) {
  try {
    return parseDuration(v);
  } catch (err) {
    throw new inspect.InspectError(/** @type {Error} */ (err).message, inspect.EXIT.USAGE);
  }
}

/**
 * @param {string | null} v
 * @param {number} fallback
 * @param {number} min
 */
function boundedInt(v, fallback, min) {
  if (v === null || v === "") return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new inspect.InspectError(`not a valid number: ${v}`, inspect.EXIT.USAGE);
  return n;
}

/** @param {string} base */
function normalizeBase(base) {
  let b = base.startsWith("/") ? base : `/${base}`;
  if (!b.endsWith("/")) b += "/";
  return b;
}

/**
 * @param {string} a
 * @param {string} b
 */
function sameSecret(a, b) {
  const x = crypto.createHash("sha256").update(a).digest();
  const y = crypto.createHash("sha256").update(b).digest();
  return crypto.timingSafeEqual(x, y);
}

/**
 * @param {string | null} header
 * @param {string} name
 */
function readCookie(header, name) {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) {
      try {
        return decodeURIComponent(v.join("="));
      } catch {
        return null;
      }
    }
  }
  return null;
}

/** @param {Request} request @returns {Promise<Record<string, unknown>>} */
async function readBody(request) {
  const raw = await request.text();
  if (raw.length > MAX_BODY) throw new inspect.InspectError("request body too large", inspect.EXIT.USAGE);
  if (raw.trim() === "") return {};
  let value;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new inspect.InspectError("the request body is not JSON", inspect.EXIT.USAGE);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new inspect.InspectError("the request body must be a JSON object", inspect.EXIT.USAGE);
  }
  return value;
}

/**
 * @param {unknown} value
 * @param {number} [status]
 */
function json(value, status = 200) {
  return new Response(JSON.stringify(value), { status, headers: { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8" } });
}

/**
 * @param {number} status
 * @param {string} body
 */
function text(status, body) {
  return new Response(`${body}\n`, { status, headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8" } });
}

/**
 * @param {string} location
 * @param {Record<string, string>} [headers]
 */
function redirect(location, headers = {}) {
  return new Response(null, { status: 303, headers: { ...SECURITY_HEADERS, ...headers, location } });
}

/**
 * Node's http (and Express, Connect, Fastify's raw handlers): `(req, res)`.
 * Under Express, mount it with the same path as the handler's `basePath`
 * (the adapter reads `req.originalUrl`).
 * @param {DashboardHandler} handler
 * @returns {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, next?: (err?: unknown) => void) => void}
 */
function toNodeHandler(handler) {
  return (req, res, next) => {
    const chunks = /** @type {Buffer[]} */ ([]);
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY + 1) chunks.push(chunk);
    });
    req.on("error", (err) => (next ? next(err) : res.destroy(err)));
    req.on("end", () => {
      const original = /** @type {{ originalUrl?: string }} */ (req).originalUrl ?? req.url ?? "/";
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
      }
      const method = req.method ?? "GET";
      const request = new Request(`http://${req.headers.host ?? "localhost"}${original}`, {
        method,
        headers,
        body: method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks),
      });
      handler(request).then(
        async (response) => {
          /** @type {Record<string, string | string[]>} */
          const out = {};
          response.headers.forEach((value, key) => {
            out[key] = value;
          });
          const body = method === "HEAD" ? null : Buffer.from(await response.arrayBuffer());
          res.writeHead(response.status, out);
          res.end(body);
        },
        (err) => (next ? next(err) : (res.writeHead(500), res.end())),
      );
    });
  };
}

module.exports = { createDashboard, toNodeHandler };
