// Submit inside the application's own transaction (docs/api.md, "The task and
// your rows in one transaction"): transactions per second of a transaction
// that inserts one order row, alone and with the job written in it, at 1, 8
// and 64 concurrent transactions, on one Postgres server in one run:
//   node bench/submit-in.mjs --pg=postgres://… [--seconds=3] [--reps=3]
//
//   order only        BEGIN; insert the order; COMMIT
//   cairnq submitIn   … + cq.submitIn(client, "receipt", payload)
//   pg-boss send      … + boss.send("receipt", payload, { db }) on the same client
//   graphile add_job  … + select graphile_worker.add_job('receipt', payload)
//   order + NOTIFY    … + select pg_notify(…): no job, only the notify that
//                     cairnq's and graphile-worker's insert triggers send
// Each transaction runs on a pg Client of a pool of that many clients; each
// cell runs for --seconds, repetitions interleave the variants, the table
// gives the median. No worker runs. Use a durable server (CAIRNQ_PG_DURABLE=1
// for scripts/test/postgres.sh): every commit waits for its WAL flush. pg-boss and
// graphile-worker are the peers' (bench/peers/), so this runs on their Node 22.
import { randomBytes } from "node:crypto";

import pg from "pg";

import { argNumber, loadPackage, median, pgDsn } from "./lib.mjs";
import { importPeer, onPeerRuntime } from "./peers/runtime.mjs";

await onPeerRuntime(main);

async function main() {
  const { PgBoss } = await importPeer("pg-boss");
  const { runMigrations } = await importPeer("graphile-worker");

  const { CairnQ } = await loadPackage();
  const admin = pgDsn();
  if (!admin) throw new Error("bench/submit-in.mjs needs --pg=postgres://… (or CAIRNQ_BENCH_PG_DSN)");
  const cellSeconds = argNumber("seconds", 3);
  const reps = argNumber("reps", 3);
  const LEVELS = [1, 8, 64];

  const database = `cq_bench_submit_in_${randomBytes(4).toString("hex")}`;
  const adminClient = new pg.Client(admin);
  await adminClient.connect();
  await adminClient.query(`create database ${database}`);
  const url = new URL(admin);
  url.pathname = `/${database}`;
  const dsn = url.toString();

  const cq = CairnQ.postgres(dsn);
  await cq.connect();
  const boss = new PgBoss({ connectionString: dsn, max: 2, supervise: false, schedule: false });
  boss.on("error", (err) => console.error("pg-boss:", err.message));
  await boss.start();
  await boss.createQueue("receipt");
  await runMigrations({ connectionString: dsn });
  const setup = new pg.Client(dsn);
  await setup.connect();
  await setup.query(
    "create table orders (id bigserial primary key, total int not null, created_at timestamptz not null default now())",
  );
  await setup.end();

  const payload = (i) => ({ orderId: i, to: "someone@example.com" });

  /** The job written in the order's transaction, on `client`, per variant. */
  const VARIANTS = {
    "order only": async () => {},
    "cairnq submitIn": (client, i) => cq.submitIn(client, "receipt", payload(i)),
    "pg-boss send": (client, i) =>
      boss.send("receipt", payload(i), { db: { executeSql: (text, values) => client.query(text, values) } }),
    "graphile add_job": (client, i) =>
      client.query("select graphile_worker.add_job($1, $2::json)", ["receipt", JSON.stringify(payload(i))]),
    "order + NOTIFY": (client) => client.query("select pg_notify('bench_orders', 'default')"),
  };

  /** Transactions/s of `variant` with `concurrency` transactions at once, for `cellSeconds`. */
  async function cell(variant, concurrency) {
    const clients = [];
    for (let i = 0; i < concurrency; i++) {
      const client = new pg.Client(dsn);
      await client.connect();
      clients.push(client);
    }
    const job = VARIANTS[variant];
    let done = 0;
    const deadline = Date.now() + cellSeconds * 1000;
    const started = process.hrtime.bigint();
    await Promise.all(
      clients.map(async (client) => {
        while (Date.now() < deadline) {
          await client.query("begin");
          await client.query("insert into orders (total) values ($1)", [done]);
          await job(client, done);
          await client.query("commit");
          done++;
        }
      }),
    );
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    await Promise.all(clients.map((c) => c.end()));
    return done / elapsed;
  }

  const results = {};
  for (let rep = 0; rep < reps; rep++) {
    for (const concurrency of LEVELS) {
      for (const variant of Object.keys(VARIANTS)) {
        const rate = await cell(variant, concurrency);
        ((results[variant] ??= {})[concurrency] ??= []).push(rate);
        console.error(`rep ${rep + 1} ${variant} @${concurrency}: ${rate.toFixed(0)} tx/s`);
      }
    }
  }

  const server = (await adminClient.query("show server_version")).rows[0].server_version;
  const durable = (await adminClient.query("show synchronous_commit")).rows[0].synchronous_commit;
  console.log(`\nPostgres ${server} (synchronous_commit=${durable}), ${cellSeconds} s per cell, median of ${reps}`);
  console.log(`| transaction | ${LEVELS.map((c) => `${c} at once`).join(" | ")} |`);
  console.log(`|---|${LEVELS.map(() => "---:").join("|")}|`);
  const base = results["order only"];
  for (const [variant, byLevel] of Object.entries(results)) {
    const cells = LEVELS.map((c) => {
      const rate = median(byLevel[c]);
      const ratio = variant === "order only" ? "" : ` (${((100 * rate) / median(base[c])).toFixed(0)}%)`;
      return `${rate.toFixed(0)} tx/s${ratio}`;
    });
    console.log(`| ${variant} | ${cells.join(" | ")} |`);
  }

  await boss.stop({ graceful: false, wait: true });
  await cq.close();
  await adminClient.query(`drop database ${database} with (force)`);
  await adminClient.end();
}
