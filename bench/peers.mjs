// cairnq (SQLite and Postgres) against the queues people would otherwise
// install: BullMQ on Redis, graphile-worker, pg-boss and DBOS on Postgres. Every
// figure's repetitions alternate between the systems, each a fresh process on
// a fresh store; the table shows medians and cairnq's ratios. See
// bench/README.md ("Peers").
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { argNumber, argValue, benchTarget, fmt, median, pgDsn, runNode, sleep, until } from "./lib.mjs";
import { FIGURES, SYSTEMS } from "./peer-figure.mjs";
import { onPeerRuntime } from "./peers/runtime.mjs";

// Every system runs on the peers' Node 22, so none is measured on another
// runtime than the rest.
await onPeerRuntime(main);

async function main() {
  const dsn = pgDsn();
  const reps = argNumber("reps", 3);
  const onlyFigures = listArg("only", Object.keys(FIGURES));
  const systems = listArg("systems", Object.keys(SYSTEMS)).filter((id) => dsn || SYSTEMS[id].store !== "pg");
  console.log(`node ${process.argv.slice(1).join(" ")}`);
  if (!dsn) console.log("no --pg=: the Postgres systems are skipped");

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-peers-"));
  const redis = systems.some((id) => SYSTEMS[id].store === "redis") ? await startRedis(scratch) : null;
  const stores = {
    sqlite: benchTarget(path.join(scratch, "sqlite"), null),
    pg: dsn ? benchTarget(null, dsn) : null,
    redis: {
      fresh: () => {
        execFileSync("redis-cli", ["-p", String(redis.port), "flushall"]);
        return `redis://127.0.0.1:${redis.port}`;
      },
      release: () => {},
      cleanup: () => {},
    },
  };
  const samples = {};
  const failures = [];
  try {
    for (const figureId of onlyFigures) {
      const figure = FIGURES[figureId];
      const runners = systems.filter((id) => !figure.needs || SYSTEMS[id][figure.needs]);
      for (let rep = 0; rep < reps; rep += 1) {
        // Rotate who goes first, so no system always runs on a warmer machine.
        const order = runners.map((_, i) => runners[(i + rep) % runners.length]);
        for (const id of order) {
          const store = stores[SYSTEMS[id].store];
          const location = store.fresh(id);
          try {
            const answer = await runNode(
              "peer-figure.mjs",
              [`--system=${id}`, `--figure=${figureId}`, `--location=${location}`, ...sizeArgs()],
              { label: `${figureId} on ${id}`, timeoutMs: argNumber("timeout", 300) * 1000 },
            );
            (samples[figureId] ??= {})[id] ??= [];
            samples[figureId][id].push(answer.value);
            const detail = answer.detail ? ` ${JSON.stringify(answer.detail)}` : "";
            console.log(`${figureId} rep ${rep + 1}/${reps} ${id}: ${fmt(answer.value)}${detail}`);
          } catch (error) {
            failures.push(`${figureId} on ${id}: ${error.message}`);
            console.log(`${figureId} rep ${rep + 1}/${reps} ${id}: ERROR`);
          } finally {
            store.release(location);
          }
        }
      }
    }
  } finally {
    stores.sqlite.cleanup();
    stores.pg?.cleanup();
    await redis?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const table = render(onlyFigures, systems, samples);
  console.log(`\n${table}`);
  const out = argValue("out", null);
  if (out) fs.writeFileSync(out, `node ${process.argv.slice(1).join(" ")}\n\n${table}\n`);
  if (failures.length) {
    console.log(`\nfailures:\n${failures.join("\n")}`);
    process.exitCode = 1;
  }
}

function listArg(name, all) {
  const value = argValue(name, null);
  if (!value) return all;
  const picked = value.split(",");
  const unknown = picked.filter((id) => !all.includes(id));
  if (unknown.length) throw new Error(`--${name}: unknown ${unknown.join(", ")} (known: ${all.join(", ")})`);
  return picked;
}

function sizeArgs() {
  return process.argv.filter((a) => /^--(submit-n|bulk-n|drain-n|calls|warmup)=/.test(a));
}

/** Medians per system, then cairnq's ratio to the fastest peer of each store kind. */
function render(figureIds, systems, samples) {
  const peers = systems.filter((id) => !id.startsWith("cairnq"));
  const ours = systems.filter((id) => id.startsWith("cairnq"));
  const ratioColumns = ours.flatMap((o) => peers.map((p) => [o, p]));
  const header = ["figure", ...systems, ...ratioColumns.map(([o, p]) => `${o} ÷ ${p}`)];
  const lines = [`| ${header.join(" | ")} |`, `| ${header.map((_, i) => (i ? "---:" : "---")).join(" | ")} |`];
  for (const id of figureIds) {
    const of = (system) => (samples[id]?.[system]?.length ? median(samples[id][system]) : null);
    const cells = systems.map((s) => fmt(of(s)));
    const ratios = ratioColumns.map(([o, p]) => (of(o) != null && of(p) != null ? fmt(of(o) / of(p)) : "–"));
    lines.push(`| ${FIGURES[id].name} | ${[...cells, ...ratios].join(" | ")} |`);
  }
  return lines.join("\n");
}

/** A Redis server of this run's own on loopback, appending every write and fsyncing once a second. */
async function startRedis(scratch) {
  const port = argNumber("redis-port", 6391);
  const dir = path.join(scratch, "redis");
  fs.mkdirSync(dir);
  const server = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec"],
    { stdio: "ignore" },
  );
  server.on("error", (error) => console.error(`redis-server: ${error.message} (apt-get install redis-server)`));
  await until("redis-server answers", () => ping(port), { everyMs: 50, timeoutMs: 30_000 });
  return {
    port,
    async stop() {
      server.kill("SIGTERM");
      await sleep(200);
    },
  };
}

function ping(port) {
  try {
    return execFileSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).trim() === "PONG";
  } catch {
    return false;
  }
}
