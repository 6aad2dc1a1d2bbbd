"use strict";
// The web dashboard as a fetch-style handler (`Request → Response`, what
// Bun.serve, Hono, Deno and others accept); node-adapter.js carries it on
// Node's http and Express. Everything it knows comes through the client API
// (lib/admin/inspect.js); the page is static files of this package that build
// their DOM from text nodes only, so no database value is ever parsed as HTML.
//
// Safety (docs/security.md): a Host allow-list, loopback names by default
// (DNS rebinding); an optional token of at least MIN_TOKEN_LENGTH characters
// checked on every request (cookie, bearer header, or ?token= which sets the
// cookie); actions only as POST with a CSRF token, a same-origin check and a
// bounded JSON body of the fields the action takes; a Content-Security-Policy
// that allows nothing but this origin.

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const inspect = require("../admin/inspect.js");
const { metricsRoute } = require("./metrics.js");
const { parseDuration } = require("../admin/duration.js");
const { STATUSES, TERMINAL_STATUSES } = require("../models.js");
const { hostRule } = require("./hosts.js");
const { readJsonBody } = require("./request-body.js");
const { SECURITY_HEADERS, HttpError, json, text, redirect } = require("./responses.js");
const { decodeSegment } = require("./route-params.js");
const schedules = require("./schedules.js");
const pauses = require("./pauses.js");
const bulk = require("./bulk.js");
const { liveFeed } = require("./live.js");

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
  "updates.js": "text/javascript; charset=utf-8",
  "schedules.js": "text/javascript; charset=utf-8",
  "steps.js": "text/javascript; charset=utf-8",
  "bulk.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
});
const MAX_PAGE = 100;
/** Steps a task page shows at once; `?steps=<offset>` pages through the rest. */
const STEPS_PAGE = 100;
/** Queues the overview shows: the first by name (as `/metrics` does); it says how many there are. */
const MAX_OVERVIEW_QUEUES = 200;
/** Shorter tokens are refused: an empty one (an unset `$VAR`) would let anyone in. */
const MIN_TOKEN_LENGTH = 16;

/**
 * What each action's JSON body may carry.
 * @typedef {Record<string, import("./request-body.js").FieldType[]>} Fields
 */
const PURGE_FIELDS = /** @type {Fields} */ ({
  olderThan: ["string"],
  status: ["string"],
  queue: ["string"],
  name: ["string"],
  limit: ["string", "number"],
});
const RETRY_FIELDS = /** @type {Fields} */ ({ resetAttempt: ["boolean"] });
const CANCEL_FIELDS = /** @type {Fields} */ ({});
/** A signal's name, and its payload as JSON text (none when absent). */
const SIGNAL_FIELDS = /** @type {Fields} */ ({ name: ["string"], payload: ["string"] });

/**
 * @param {DashboardOptions} options
 * @returns {DashboardHandler}
 */
function createDashboard(options) {
  if (!options || (options.client === undefined && options.db === undefined)) {
    throw new TypeError("createDashboard needs { client } or { db }");
  }
  const token = options.token ?? null;
  const weak = token === null ? null : tokenProblem(token);
  if (weak !== null) throw new TypeError(`createDashboard: token ${weak}`);
  const hostAllowed = hostRule(options.allowedHosts);
  const basePath = normalizeBase(options.basePath ?? "/");
  const ownsClient = options.client === undefined;
  const client = /** @type {CairnQ} */ (options.client ?? inspect.openClient(/** @type {string} */ (options.db)));
  const readOnly = options.readOnly === true;
  const refreshMs = Math.max(250, options.refreshMs ?? 2000);
  const csrf = crypto.randomBytes(24).toString("base64url");
  const cookieName = "cairnq_dashboard_token";
  const assets = new Map(
    Object.entries(FILES).map(([name, type]) => [name, { body: fs.readFileSync(path.join(ASSETS, name)), type }]),
  );
  const throughput = new inspect.Throughput(60, refreshMs / 2);
  const metrics = metricsRoute(client, options.workers);
  const live = liveFeed(client, options.live !== false);
  /** @type {{ at: number, changes: number, body: unknown } | null} */
  let overview = null;
  /** When the throughput was last sampled. */
  let sampledAt = 0;
  /** @type {Promise<unknown> | null} */
  let sampling = null;

  /**
   * Counts and throughput, read at most once per half refresh whatever the
   * number of open pages (one `stats` read), unless the live feed saw a
   * change since.
   */
  async function readOverview() {
    const changes = live.changes();
    if (overview && overview.changes === changes && Date.now() - overview.at < refreshMs / 2) return overview.body;
    if (!sampling) {
      sampling = (async () => {
        const queues = await client.queues();
        const at = Date.now();
        // Live reads come as often as changes do: the rates stay per half refresh.
        if (at - sampledAt >= refreshMs / 2) {
          throughput.add(Object.fromEntries(queues.map((q) => [q.queue, q.counts])), at);
          sampledAt = at;
        }
        const body = {
          at,
          refreshMs,
          queues: queues.slice(0, MAX_OVERVIEW_QUEUES).map((q) => ({
            queue: inspect.truncateText(q.queue),
            counts: q.counts,
            paused: q.paused,
            perSecond: throughput.series(q.queue),
          })),
          queueCount: queues.length,
          perSecond: throughput.series(),
        };
        overview = { at, changes, body };
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
    // Every failure, whatever throws it, becomes an answer.
    try {
      const url = new URL(request.url);
      // The Host header where the server passes it on, else the URL's host.
      if (!hostAllowed(request.headers.get("host") ?? url.host)) {
        return text(421, "this dashboard does not answer for that host name (see allowedHosts)");
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

      if (request.method === "GET" || request.method === "HEAD") {
        if (route === "" || route === "index.html") return asset("index.html");
        if (route.startsWith("assets/")) return asset(route.slice("assets/".length));
        if (route === "api/config") {
          return json({
            csrf,
            readOnly,
            refreshMs,
            statuses: STATUSES,
            terminalStatuses: TERMINAL_STATUSES,
            version: require("../../package.json").version,
          });
        }
        if (route === "api/overview") return json(await readOverview());
        if (route === "api/live") return request.method === "HEAD" ? live.head() : live.route();
        if (route === "metrics") return await metrics();
        if (route === "api/tasks") return json(await listTasks(url.searchParams));
        if (route === "api/search") return json(await search(url.searchParams.get("q") ?? ""));
        if (route === "api/purge-preview") {
          const done = await inspect.purge(client, { ...purgeFilter(url.searchParams), dryRun: true });
          return json({ count: done.count });
        }
        const taskMatch = /^api\/tasks\/([^/]+)$/.exec(route);
        if (taskMatch) {
          const task = await inspect.getTask(client, { id: decodeSegment(taskMatch[1], "task id") });
          const spawned = await inspect.spawned(client, task);
          const steps = stepsPage(await client.steps(task.id), boundedInt(url.searchParams.get("steps"), 0, 0));
          return json({ task: inspect.truncateBodies(task), spawned: spawned.map(inspect.truncateTexts), steps });
        }
        const listed = await schedules.readSchedules(client, route);
        if (listed !== undefined) return json(listed);
        return text(404, "not found");
      }
      if (request.method === "POST") {
        const refused = checkAction(request, url);
        if (refused) return refused;
        if (route === "api/purge") {
          const body = await readJsonBody(request, PURGE_FIELDS);
          const done = await inspect.purge(
            client,
            purgeFilter(
              new URLSearchParams(
                Object.entries(body).map(([k, v]) => /** @type {[string, string]} */ ([k, String(v)])),
              ),
            ),
          );
          overview = null;
          return json({ count: done.count });
        }
        const many = await bulk.changeMany(client, route, request);
        if (many !== undefined) {
          if (!many.dryRun) overview = null;
          return json(many);
        }
        const action = /^api\/tasks\/([^/]+)\/(retry|cancel|signal)$/.exec(route);
        if (action?.[2] === "signal") {
          const ref = { id: decodeSegment(action[1], "task id") };
          const body = await readJsonBody(request, SIGNAL_FIELDS);
          if (typeof body.name !== "string") throw new HttpError(400, "name is required");
          await inspect.signalTask(client, ref, body.name, signalPayload(body.payload));
          overview = null;
          return json({ sent: true });
        }
        if (action) {
          const ref = { id: decodeSegment(action[1], "task id") };
          const retry = action[2] === "retry";
          const body = await readJsonBody(request, retry ? RETRY_FIELDS : CANCEL_FIELDS);
          const task = retry
            ? await inspect.retryTask(client, ref, { resetAttempt: body.resetAttempt === true })
            : await inspect.cancelTask(client, ref);
          overview = null;
          return json({ task: inspect.truncateBodies(task) });
        }
        const changed = await schedules.changeSchedule(client, route, request);
        if (changed !== undefined) return json(changed);
        const paused = await pauses.changeQueue(client, route, request);
        if (paused !== undefined) {
          overview = null;
          return json(paused);
        }
        return text(404, "not found");
      }
      return text(405, "method not allowed");
    } catch (err) {
      if (err instanceof HttpError) return json({ error: err.message }, err.status);
      const failure = inspect.classify(err);
      const status =
        {
          [inspect.EXIT.NOT_FOUND]: 404,
          [inspect.EXIT.USAGE]: 400,
          [inspect.EXIT.REFUSED]: 409,
          [inspect.EXIT.NO_DATABASE]: 503,
        }[failure.exitCode] ?? 500;
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
    if (offered === null || !sameSecret(offered, csrf))
      return json({ error: "missing or wrong CSRF token: reload the page" }, 403);
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
    const rows = await inspect.listSummaries(client, {
      queue: q.get("queue") || undefined,
      status: /** @type {TaskStatus | undefined} */ (status),
      name: q.get("name") || undefined,
      rootId: q.get("root") || undefined,
      correlationId: q.get("correlation") || undefined,
      limit: limit + 1,
      offset,
    });
    return { tasks: rows.slice(0, limit).map(inspect.truncateTexts), hasMore: rows.length > limit, offset, limit };
  }

  /** An id, else a key: at most two point reads. @param {string} q */
  async function search(q) {
    const term = q.trim();
    if (term === "") return { task: null };
    const byId = await client.get(term);
    if (byId) return { task: inspect.truncateBodies(byId), by: "id" };
    const byKey = await client.getByKey(term);
    return { task: byKey && inspect.truncateBodies(byKey), by: byKey ? "key" : null };
  }

  /** @param {string} name */
  function asset(name) {
    const file = assets.get(name);
    if (!file) return text(404, "not found");
    return new Response(new Uint8Array(file.body), {
      status: 200,
      headers: { ...SECURITY_HEADERS, "content-type": file.type },
    });
  }

  const handler = /** @type {DashboardHandler} */ (handle);
  handler.close = async () => {
    live.close();
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
  if (!Number.isSafeInteger(n) || n < min)
    throw new inspect.InspectError(`not a valid number: ${v}`, inspect.EXIT.USAGE);
  return n;
}

/**
 * Why `token` cannot guard a dashboard, or null when it can. Spaces around
 * it do not count: sixteen of them are no secret.
 * @param {unknown} token
 * @returns {string | null}
 */
function tokenProblem(token) {
  if (typeof token !== "string") return "must be a string";
  const length = token.trim().length;
  const spaced = length === token.length ? "" : " besides the spaces around it";
  if (length < MIN_TOKEN_LENGTH) return `must be at least ${MIN_TOKEN_LENGTH} characters${spaced} (got ${length})`;
  return null;
}

/**
 * A signal action's payload: its JSON text parsed (400 when it is not JSON).
 * @param {string | number | boolean | undefined} text
 * @returns {unknown}
 */
function signalPayload(text) {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(String(text));
  } catch {
    throw new HttpError(400, "payload must be JSON text");
  }
}

/**
 * One page of a task's steps view (`client.steps`) for the task page: at
 * most STEPS_PAGE steps from `offset`, ids cut (`truncateTexts`), with the
 * total, so ten thousand steps never make every refresh megabytes.
 * @param {import("../../index.js").TaskSteps} view
 * @param {number} offset
 */
function stepsPage(view, offset) {
  return {
    steps: view.steps.slice(offset, offset + STEPS_PAGE).map(inspect.truncateTexts),
    suspended: view.suspended && inspect.truncateTexts(view.suspended),
    signals: view.signals.slice(0, STEPS_PAGE).map(inspect.truncateTexts),
    signalsTotal: view.signals.length,
    total: view.steps.length,
    offset,
    limit: STEPS_PAGE,
  };
}

/**
 * The base path as request URLs carry it: percent-encoded (`/my%20dash/`),
 * one leading slash, one trailing slash.
 * @param {string} base
 */
function normalizeBase(base) {
  if (/[?#]/.test(base)) throw new TypeError(`basePath must be a path, without ? or #: ${JSON.stringify(base)}`);
  const encoded = new URL(`/${base.replace(/^[/\\]+/, "")}`, "http://base.invalid").pathname;
  return encoded.endsWith("/") ? encoded : `${encoded}/`;
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

module.exports = { createDashboard, tokenProblem, normalizeBase };
