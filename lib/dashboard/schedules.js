"use strict";
// The dashboard's schedule routes (docs/api.md, "Schedules"): the list, and
// pause/resume by name. handler.js answers them as JSON and puts the actions
// behind its token, same-origin and CSRF checks like every other action.

const inspect = require("../cli/inspect.js");
const { readJsonBody } = require("./request-body.js");
const { decodeSegment } = require("./route-params.js");

/**
 * @typedef {import("../client.js").CairnQ} CairnQ
 */

const ACTION = /^api\/schedules\/([^/]+)\/(pause|resume)$/;

/**
 * A GET route of this file: its answer, or `undefined` for any other route.
 * @param {CairnQ} client
 * @param {string} route
 */
async function readSchedules(client, route) {
  if (route !== "api/schedules") return undefined;
  return { schedules: await client.schedules() };
}

/**
 * A POST route of this file: its answer, or `undefined` for any other route.
 * @param {CairnQ} client
 * @param {string} route
 * @param {Request} request its body must be an empty JSON object
 */
async function changeSchedule(client, route, request) {
  const action = ACTION.exec(route);
  if (!action) return undefined;
  const name = decodeSegment(action[1], "schedule name");
  await readJsonBody(request, {});
  const schedule = action[2] === "pause" ? await client.pauseSchedule(name) : await client.resumeSchedule(name);
  if (schedule === null)
    throw new inspect.InspectError(`no schedule named ${JSON.stringify(name)}`, inspect.EXIT.NOT_FOUND);
  return { schedule };
}

module.exports = { readSchedules, changeSchedule };
