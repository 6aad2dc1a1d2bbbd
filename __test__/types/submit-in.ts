// submitIn / submitManyIn as an application writes them (docs/api.md, "The
// task and your rows in one transaction"): SQLite answers at once, Postgres a
// promise, whichever driver the transaction comes from.
import Database from "better-sqlite3";
import postgres from "postgres";
import { CompiledQuery, Kysely } from "kysely";
import { CairnQ, type PgSession, type TaskRef, defineTask } from "cairnq";

export async function main(): Promise<void> {
  const sqlite = CairnQ.sqlite("app.db");
  const db = new Database("app.db");
  const ref: TaskRef = db.transaction(() => {
    db.prepare("insert into orders (total) values (?)").run(5);
    return sqlite.submitIn(db, "receipt", { order: 1 }, { priority: 1, group: "shop" });
  })();
  const refs: TaskRef[] = sqlite.submitManyIn(db, [{ task: "receipt", payload: { order: 2 } }]);
  const saved: TaskRef = db.transaction(() =>
    sqlite.submitIn(db, "save", { doc: 1 }, { key: "doc-1", debounceMs: 2_000, maxDelayMs: 10_000 }),
  )();

  const pg = CairnQ.postgres("postgres:///app");
  const sql = postgres("postgres:///app");
  const inPg: TaskRef = await sql.begin((tx) => pg.submitIn(tx, "receipt", { order: 3 }, { key: "order-3" }));
  const session: PgSession = { query: async () => [], exec: async () => {} };
  const many: TaskRef[] = await pg.submitManyIn(session, [{ task: "receipt", options: { conflict: "replace" } }]);

  const kysely = new Kysely<Record<string, never>>({} as never);
  await kysely
    .transaction()
    .execute((trx) =>
      pg.submitIn(
        { query: (text, values) => trx.executeQuery(CompiledQuery.raw(text, values)).then((r) => r.rows) },
        "receipt",
      ),
    );

  const receipt = defineTask<{ order: number }, void>("receipt");
  const typed: Promise<TaskRef> = pg.submitIn(session, receipt, { order: 4 });
  void [ref, refs, saved, inPg, many, typed];
}
