// The language-neutral conformance scenarios (conformance/README.md) run
// through the public JavaScript API: every scenario on a fresh SQLite file, and
// on Postgres when CAIRNQ_TEST_PG_DSN names a server. Scenario files are read
// at test time from the repository's conformance/scenarios (vendored; see
// conformance/README.md), or from CAIRNQ_CONFORMANCE_DIR.
//
// The reference resolver, the equality and the assertion keys mean exactly
// what they mean in crates/core/tests/conformance.rs; keep the two in step.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { CairnQ, STATUSES, isTerminal } from "../index.mjs";
import { openClient, REPO_ROOT } from "./support/helpers.mjs";

const PG_DSN_ENV = "CAIRNQ_TEST_PG_DSN";
const DEFAULT_SCENARIO_DIR = fileURLToPath(new URL("../conformance/scenarios/", import.meta.url));
const SCENARIO_DIR = process.env.CAIRNQ_CONFORMANCE_DIR ?? DEFAULT_SCENARIO_DIR;

// ---------------------------------------------------------------------------
// Scenario files
// ---------------------------------------------------------------------------

/** Every `*.json` file of the scenario directory, in file-name order. */
function loadScenarios() {
  return readdirSync(SCENARIO_DIR)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({
      fileStem: basename(file, ".json"),
      body: JSON.parse(readFileSync(join(SCENARIO_DIR, file), "utf8")),
    }));
}

// ---------------------------------------------------------------------------
// Values: `undefined` is "missing", which differs from null for equality
// ---------------------------------------------------------------------------

const isPlainObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Reads one member: an array by integer index, an object by own property
 * name; anything read from a scalar, null or missing is missing.
 */
function member(value, segment) {
  if (Array.isArray(value)) {
    return /^\d+$/.test(segment) ? value[Number(segment)] : undefined;
  }
  if (isPlainObject(value)) {
    return Object.hasOwn(value, segment) ? value[segment] : undefined;
  }
  return undefined;
}

/** Deep structural equality; JS numbers already compare by value (1.0 === 1). */
function deepEqual(a, b) {
  if (a === undefined || b === undefined || a === null || b === null) {
    return a === b;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (typeof a === "object" && typeof b === "object") {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
    );
  }
  return a === b;
}

const isNullish = (value) => value === null || value === undefined;

/**
 * The number `greaterThanRef` compares: numbers as they are, null 0, booleans
 * 0/1, decimal strings parsed; anything else (and missing) is NaN, which fails
 * every comparison.
 */
function toNumber(value) {
  if (typeof value === "number") return value;
  if (value === null) return 0;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string") {
    const text = value.trim();
    if (text === "") return 0;
    return /^[0-9+\-.eE]+$/.test(text) ? Number(text) : NaN;
  }
  return NaN;
}

const show = (value) => (value === undefined ? "missing" : JSON.stringify(value));

/** The options object without the keys the scenario left out, so SDK defaults apply. */
function given(options) {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

// ---------------------------------------------------------------------------
// The interpreter
// ---------------------------------------------------------------------------

/** A scenario this runner cannot execute, as opposed to an error of the store. */
class BrokenScenario extends Error {}

const STEP_KEYS = new Set(["op", "args", "save", "expect", "expectError"]);

class Runner {
  constructor(client) {
    this.client = client;
    this.store = client.store;
    this.saved = new Map();
  }

  async run(scenario) {
    assert.ok(Array.isArray(scenario.steps), "the scenario has no steps array");
    for (const [index, step] of scenario.steps.entries()) {
      try {
        await this.step(step);
      } catch (err) {
        assert.fail(`step ${index} (${step.op}): ${err.message}`);
      }
    }
  }

  async step(step) {
    if (step.op === "expect") {
      const assertion = Object.fromEntries(Object.entries(step).filter(([key]) => key !== "op" && key !== "target"));
      const target = Object.hasOwn(step, "target") ? this.resolve(step.target) : undefined;
      this.check(target, assertion);
      return;
    }
    const unknown = Object.keys(step).find((key) => !STEP_KEYS.has(key));
    if (unknown !== undefined) throw new BrokenScenario(`unknown step key ${unknown}`);
    const args = Object.hasOwn(step, "args") ? this.resolve(step.args) : {};
    if (!isPlainObject(args)) {
      throw new BrokenScenario("args must be an object");
    }
    const expectedError = step.expectError;
    if (expectedError !== undefined && typeof expectedError !== "string") {
      throw new BrokenScenario(`expectError must be a string, got ${show(expectedError)}`);
    }

    let result;
    try {
      result = await this.perform(step.op, args);
    } catch (err) {
      if (err instanceof BrokenScenario) throw err;
      const name = err?.name ?? err?.constructor?.name;
      if (expectedError === undefined) throw new Error(`unexpected ${name}: ${err?.message}`, { cause: err });
      if (name !== expectedError) {
        throw new Error(`expected error ${expectedError}, got ${name}: ${err?.message}`, { cause: err });
      }
      if (step.save !== undefined) {
        this.saved.set(step.save, { task_id: err.taskId ?? null, type: name });
      }
      return;
    }
    if (expectedError !== undefined) {
      throw new Error(`expected error ${expectedError}, got success`);
    }
    if (step.save !== undefined) this.saved.set(step.save, result);
    if (step.expect !== undefined) {
      if (!isPlainObject(step.expect)) throw new BrokenScenario("expect must be an object");
      this.check(result, step.expect);
    }
  }

  async perform(op, args) {
    const { client, store } = this;
    switch (op) {
      case "submit":
        return client.submit(
          args.name,
          args.payload ?? {},
          given({
            key: args.key,
            queue: args.queue,
            conflict: args.conflict,
            maxAttempts: args.max_attempts,
            priority: args.priority,
            metadata: args.metadata,
            correlationId: args.correlation_id,
            runAtDelayMs: args.run_at_delay_ms,
          }),
        );
      case "get":
        return client.get(args.id);
      case "get_by_key":
        return client.getByKey(args.key);
      case "list":
        return client.list(
          given({
            status: args.status,
            queue: args.queue,
            name: args.name,
            rootId: args.root_id,
            correlationId: args.correlation_id,
            limit: args.limit,
            offset: args.offset,
          }),
        );
      case "cancel":
        return client.cancel(args.id);
      case "cancel_by_key":
        return client.cancelByKey(args.key);
      case "retry":
        return client.retry(args.id, given({ resetAttempt: args.reset_attempt }));
      case "retry_by_key":
        return client.retryByKey(args.key, given({ resetAttempt: args.reset_attempt }));
      case "purge":
        return client.purge(
          given({
            olderThanMs: args.older_than_ms,
            queue: args.queue,
            status: args.status,
            name: args.name,
            limit: args.limit,
          }),
        );
      case "stats":
        return client.stats(args.queue);
      case "get_status":
        return client.getStatus(args.id);
      case "get_status_by_key":
        return client.getStatusByKey(args.key);
      case "queue_depth":
        return client.queueDepth(args.queue, args.max_depth);
      case "claim":
        // An absent `names` stays absent (any name); null and [] pass through as given.
        return store.claim(
          given({
            queues: args.queues,
            workerId: args.worker_id,
            leaseMs: args.lease_ms,
            limit: args.limit,
            names: args.names,
          }),
        );
      case "heartbeat":
        return store.heartbeat(given({ taskId: args.id, workerId: args.worker_id, leaseMs: args.lease_ms }));
      case "heartbeat_batch": {
        const renewed = await store.heartbeatBatch(
          given({ taskIds: args.ids, workerId: args.worker_id, leaseMs: args.lease_ms }),
        );
        return flattenHeartbeats(args.ids, renewed);
      }
      case "progress":
        return store.progress({
          taskId: args.id,
          workerId: args.worker_id,
          progress: args.progress ?? null,
          message: args.message ?? null,
        });
      case "succeed":
        return store.succeed({ taskId: args.id, workerId: args.worker_id, result: args.result });
      case "complete":
        return store.complete({ taskId: args.id, workerId: args.worker_id, result: args.result });
      case "fail":
        return store.fail(
          given({
            taskId: args.id,
            workerId: args.worker_id,
            error: args.error,
            retryable: args.retryable,
            delayMs: args.delay_ms,
          }),
        );
      case "sleep":
        await sleep(args.ms);
        return null;
      default:
        throw new BrokenScenario(`unknown op ${op}`);
    }
  }

  /**
   * Resolves every `$reference` string at any depth. A missing member of an
   * object drops its key; a missing array element becomes null.
   */
  resolve(value) {
    if (typeof value === "string" && value.startsWith("$")) {
      return this.resolveReference(value);
    }
    if (Array.isArray(value)) {
      return value.map((item) => this.resolve(item) ?? null);
    }
    if (isPlainObject(value)) {
      const resolved = {};
      for (const [key, field] of Object.entries(value)) {
        const found = this.resolve(field);
        if (found !== undefined) resolved[key] = found;
      }
      return resolved;
    }
    return value;
  }

  resolveReference(reference) {
    const [alias, ...path] = reference.slice(1).split(".");
    if (!this.saved.has(alias)) {
      throw new BrokenScenario(`${reference} refers to alias ${alias}, never saved`);
    }
    return path.reduce((current, segment) => member(current, segment), this.saved.get(alias));
  }

  check(target, assertion) {
    for (const [key, operand] of Object.entries(assertion)) {
      switch (key) {
        case "equals":
          if (!isPlainObject(operand)) throw new BrokenScenario("equals takes an object");
          for (const [field, expected] of Object.entries(operand)) {
            const want = this.resolve(expected);
            const got = member(target, field);
            if (!deepEqual(got, want)) {
              throw new Error(`equals: field ${field} is ${show(got)}, expected ${show(want)}`);
            }
          }
          break;
        case "equalsRef":
        case "notEqualsRef": {
          const other = this.resolve(operand);
          if (deepEqual(target, other) !== (key === "equalsRef")) {
            throw new Error(`${key}: target ${show(target)} vs ${show(other)}`);
          }
          break;
        }
        case "greaterThanRef": {
          const other = this.resolve(operand);
          if (!(toNumber(target) > toNumber(other))) {
            throw new Error(`greaterThanRef: ${show(target)} is not greater than ${show(other)}`);
          }
          break;
        }
        case "length":
          if (typeof operand !== "number") throw new BrokenScenario("length takes a number");
          if (!Array.isArray(target) || target.length !== operand) {
            throw new Error(`length: expected ${operand}, got ${show(target)}`);
          }
          break;
        case "notNull":
        case "isNull":
          if (!Array.isArray(operand)) {
            throw new BrokenScenario(`${key} takes a list of field names`);
          }
          for (const field of operand) {
            if (typeof field !== "string") throw new BrokenScenario("field names are strings");
            const got = member(target, field);
            if (isNullish(got) !== (key === "isNull")) {
              throw new Error(`${key}: field ${field} is ${show(got)}`);
            }
          }
          break;
        default:
          throw new BrokenScenario(`unknown assertion key ${key}`);
      }
    }
  }
}

/**
 * conformance/README.md ("What a runner has to know", `heartbeat_batch`): the
 * renewed map as `{id, cancel_requested}` rows in the order the ids were asked
 * for, leaving out ids that were not renewed.
 */
function flattenHeartbeats(ids, renewed) {
  return ids.filter((id) => renewed.has(id)).map((id) => ({ id, cancel_requested: renewed.get(id) }));
}

// ---------------------------------------------------------------------------
// Dialects: each hands out a connected client holding no tasks and no keys
// ---------------------------------------------------------------------------

/** A fresh file in a fresh temporary directory per scenario, closed when the test ends. */
const sqlite = {
  label: "sqlite",
  skip: false,
  async start() {},
  async open(t) {
    const { client } = openClient(t);
    await client.connect();
    return client;
  },
  async stop() {},
};

/** One client for the suite; a second connection (psql) empties the tables before each scenario. */
function postgres(dsn) {
  let client;
  return {
    label: "postgres",
    skip: dsn ? false : `${PG_DSN_ENV} is not set`,
    async start() {
      client = CairnQ.postgres(dsn);
      // Connecting migrates, so the tables exist before the first TRUNCATE.
      await client.connect();
    },
    async open() {
      execFileSync("psql", [dsn, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "TRUNCATE cairnq_tasks, cairnq_task_keys"]);
      return client;
    },
    async stop() {
      await client?.close();
    },
  };
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

const scenarios = loadScenarios();

for (const dialect of [sqlite, postgres(process.env[PG_DSN_ENV])]) {
  describe(`conformance on ${dialect.label}`, { skip: dialect.skip }, () => {
    before(() => dialect.start());
    after(() => dialect.stop());
    for (const scenario of scenarios) {
      test(scenario.fileStem, async (t) => {
        await new Runner(await dialect.open(t)).run(scenario.body);
      });
    }
  });
}

// Checks that accompany the scenarios (conformance/README.md, "What a runner
// has to know").

test("the scenario directory is not empty", () => {
  assert.ok(scenarios.length > 0, `no scenarios in ${SCENARIO_DIR}`);
  for (const scenario of scenarios) {
    assert.equal(scenario.body.name, scenario.fileStem, "a scenario's name equals its file stem");
  }
});

/** The values of the `status in (...)` CHECK constraint of the base migration. */
function migrationStatuses() {
  const path = join(REPO_ROOT, "crates/core/protocol/sqlite/migrations/0001_init.sql");
  const sql = readFileSync(path, "utf8").split(/\s+/).join(" ");
  const match = /check \(\s*status in \(([^)]*)\)/.exec(sql);
  assert.ok(match, `no status CHECK constraint in ${path}`);
  return match[1].split(",").map((item) => item.trim().replace(/^'|'$/g, ""));
}

test("STATUSES equals the status CHECK constraint of the migrations", () => {
  const fromMigration = migrationStatuses();
  assert.deepEqual([...STATUSES], fromMigration);
  for (const status of STATUSES.filter((s) => isTerminal({ status: s }))) {
    assert.ok(fromMigration.includes(status), `terminal status ${status} is in the constraint`);
  }
});
