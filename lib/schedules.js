"use strict";
// Recurring tasks (docs/api.md, "Schedules"): what JS must own of them,
// encoding the payload and metadata the JSON way and taking a TaskDef's
// name. Every check, default and time computation is the core's.

const { dumpJson, encodeOptions, epochMs } = require("./json.js");
const { raise } = require("./native-call.js");

/** Where a fired task's metadata names its schedule and occurrence: the core's `schedule::METADATA_KEY`. */
const SCHEDULE_METADATA_KEY = "cairnq.schedule";

/**
 * @typedef {import("../index.js").Schedule} Schedule
 * @typedef {import("../index.js").ScheduleOptions} ScheduleOptions
 * @typedef {import("./native-call.js").NativeHolder} NativeHolder
 */

/**
 * The spec the core reads: a TaskDef becomes its name, payload and metadata
 * JSON texts; anything else goes as given, for the core to check.
 * @param {unknown} name
 * @param {ScheduleOptions} opts
 * @returns {string}
 */
function scheduleSpec(name, opts) {
  if (opts === null || typeof opts !== "object") return encodeOptions({ name, task: null, cron: null });
  const { task, payload, metadata, startAt, endAt, ...rest } = opts;
  const taskName = task !== null && typeof task === "object" && "name" in task ? task.name : task;
  return encodeOptions({
    ...rest,
    startAt: epochMs(startAt),
    endAt: epochMs(endAt),
    name,
    task: taskName === undefined ? null : taskName,
    payload: payload === undefined ? undefined : dumpJson(payload),
    metadata: metadata == null ? undefined : dumpJson(metadata),
  });
}

/**
 * @param {NativeHolder} store
 * @param {string} name
 * @param {ScheduleOptions} opts
 * @returns {Promise<Schedule>}
 */
async function schedule(store, name, opts) {
  const spec = scheduleSpec(name, opts);
  return JSON.parse(await store._native.schedule(spec).catch(raise));
}

/**
 * @param {NativeHolder} store
 * @returns {Promise<Schedule[]>}
 */
async function schedules(store) {
  return JSON.parse(await store._native.schedules().catch(raise));
}

/**
 * One task of the schedule now (`ctx.schedule.triggered`), its pending
 * occurrence left where it is; an unknown name is refused.
 * @param {NativeHolder} store
 * @param {string} name
 * @returns {Promise<import("../index.js").Task>}
 */
async function triggerSchedule(store, name) {
  return JSON.parse(await store._native.triggerSchedule(name).catch(raise));
}

/**
 * `pause` / `resume` / `unschedule` of one schedule by name: the schedule, or
 * null when none has that name.
 * @param {NativeHolder} store
 * @param {"pauseSchedule" | "resumeSchedule" | "unschedule"} change
 * @param {string} name
 * @returns {Promise<Schedule | null>}
 */
async function changeSchedule(store, change, name) {
  const text = await store._native[change](name).catch(raise);
  return text == null ? null : JSON.parse(text);
}

module.exports = { schedule, schedules, changeSchedule, triggerSchedule, scheduleSpec, SCHEDULE_METADATA_KEY };
