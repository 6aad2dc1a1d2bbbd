"use strict";
// The dashboard's bulk routes (docs/api.md, "Bulk retry and cancel"): one
// page of retryMany or cancelMany for the task list's filters, or its dry
// run. handler.js puts them behind its token, same-origin and CSRF checks,
// and refuses them on a read-only dashboard, like every action; the core
// checks the filter and words its refusals (answered 400).

const { readJsonBody } = require("./request-body.js");

/** @typedef {import("../client.js").CairnQ} CairnQ */

const ACTION = /^api\/tasks\/(retry-many|cancel-many)$/;
const ACTION_FIELDS = /** @type {Record<string, import("./request-body.js").FieldType[]>} */ ({
  queue: ["string"],
  name: ["string"],
  status: ["string"],
  limit: ["number"],
  dryRun: ["boolean"],
});

/**
 * A POST route of this file: the page, or `undefined` for any other route.
 * @param {CairnQ} client
 * @param {string} route
 * @param {Request} request its body is the filter: `{queue?, name?, status?, limit?, dryRun?}`
 */
async function changeMany(client, route, request) {
  const action = ACTION.exec(route);
  if (!action) return undefined;
  const filter = await readJsonBody(request, ACTION_FIELDS);
  return action[1] === "retry-many" ? client.retryMany(filter) : client.cancelMany(filter);
}

module.exports = { changeMany };
