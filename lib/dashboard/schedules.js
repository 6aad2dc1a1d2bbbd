"use strict";
// The dashboard's schedule routes (docs/api.md, "Schedules"): the list,
// pause/resume, and trigger (run now). handler.js answers them as JSON and puts the actions behind
// its token, same-origin and CSRF checks like every other action.

const inspect = require("../admin/inspect.js");
const { readJsonBody } = require("./request-body.js");
const { HttpError } = require("./responses.js");

/**
 * @typedef {import("../client.js").CairnQ} CairnQ
 * @typedef {import("../../index.js").Schedule} Schedule
 */

// The name travels in the body: as a path segment, `.` and `..` would be
// resolved away by the browser's URL parser before the request is sent.
const ACTION = /^api\/schedules\/(pause|resume|trigger)$/;
const ACTION_FIELDS = /** @type {Record<string, import("./request-body.js").FieldType[]>} */ ({ name: ["string"] });

/**
 * A schedule as the page shows it: without its payload and metadata, which
 * the page never shows, and with its texts cut (`inspect.truncateTexts`).
 * @param {Schedule} schedule
 */
function shown(schedule) {
  const rest = /** @type {Partial<Schedule>} */ ({ ...schedule });
  delete rest.payload;
  delete rest.metadata;
  return inspect.truncateTexts(rest);
}

/**
 * A GET route of this file: its answer, or `undefined` for any other route.
 * @param {CairnQ} client
 * @param {string} route
 */
async function readSchedules(client, route) {
  if (route !== "api/schedules") return undefined;
  return { schedules: (await client.schedules()).map(shown) };
}

/**
 * A POST route of this file: its answer, or `undefined` for any other route.
 * @param {CairnQ} client
 * @param {string} route
 * @param {Request} request its body must be `{ "name": <schedule name> }`
 */
async function changeSchedule(client, route, request) {
  const action = ACTION.exec(route);
  if (!action) return undefined;
  const { name } = await readJsonBody(request, ACTION_FIELDS);
  if (typeof name !== "string") throw new HttpError(400, "name must be given: the schedule's name");
  if (action[1] === "trigger") {
    const task = await client.triggerSchedule(name);
    return { task: { id: task.id, name: task.name, queue: task.queue, status: task.status } };
  }
  const schedule = action[1] === "pause" ? await client.pauseSchedule(name) : await client.resumeSchedule(name);
  if (schedule === null)
    throw new inspect.InspectError(`no schedule named ${JSON.stringify(name)}`, inspect.EXIT.NOT_FOUND);
  return { schedule: shown(schedule) };
}

module.exports = { readSchedules, changeSchedule };
