"use strict";
// The dashboard's queue pause routes (docs/api.md, "Queue pauses"): pause and
// resume one queue. handler.js puts them behind its token, same-origin and
// CSRF checks, and refuses them on a read-only dashboard, like every action;
// the overview shows each queue's pause (`client.queues()`).

const { readJsonBody } = require("./request-body.js");
const { HttpError } = require("./responses.js");

/** @typedef {import("../client.js").CairnQ} CairnQ */

// The queue travels in the body: as a path segment, `.` and `..` would be
// resolved away by the browser's URL parser before the request is sent.
const ACTION = /^api\/queues\/(pause|resume)$/;
const ACTION_FIELDS = /** @type {Record<string, import("./request-body.js").FieldType[]>} */ ({ queue: ["string"] });

/**
 * A POST route of this file: its answer, or `undefined` for any other route.
 * @param {CairnQ} client
 * @param {string} route
 * @param {Request} request its body must be `{ "queue": <queue name> }`
 */
async function changeQueue(client, route, request) {
  const action = ACTION.exec(route);
  if (!action) return undefined;
  const { queue } = await readJsonBody(request, ACTION_FIELDS);
  if (typeof queue !== "string") throw new HttpError(400, "queue must be given: the queue's name");
  const pause = action[1] === "pause";
  const changed = pause ? await client.pauseQueue(queue) : await client.resumeQueue(queue);
  return { queue, paused: pause, changed };
}

module.exports = { changeQueue };
