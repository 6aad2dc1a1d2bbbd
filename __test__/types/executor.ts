// The application-owned Postgres surface (docs/api.md, "PgExecutor"): an
// executor of the application's own, createPoolExecutor, schema, completeIn
// and ctx.succeedIn must compile as an application writes them.
import {
  CairnQ,
  PostgresStore,
  Worker,
  createPoolExecutor,
  ListenUnavailable,
  type PgExecutor,
  type PgSession,
  type Row,
  type Task,
} from "cairnq";

export async function main(): Promise<void> {
  const pool: PgExecutor & { close(): Promise<void> } = await createPoolExecutor("postgres:///app", {
    max: 4,
    schema: "billing",
  });
  const client = CairnQ.postgres(pool, { schema: "billing" });
  const store = new PostgresStore(pool, { schema: "billing" });
  const dsnStore = new PostgresStore("postgres:///app", { max: 2, schema: "billing" });
  const worker = Worker.postgres(pool, { queues: ["bills"], schema: "billing" });

  // An adapter of the application's own, without listen.
  const mine: PgExecutor = {
    query: async (_text: string, _values?: readonly unknown[]): Promise<Row[]> => [],
    exec: async (_sql: string): Promise<void> => {},
    tx: async <T>(fn: (session: PgSession) => Promise<T>): Promise<T> => fn(mine),
  };
  const refusing: PgExecutor = {
    ...mine,
    listen: async () => {
      throw new ListenUnavailable();
    },
  };
  CairnQ.postgres(mine);
  CairnQ.postgres(refusing);

  const done: { task: Task; value: number } = await store.completeIn(
    { taskId: "task_x", workerId: "w1" },
    async (session: PgSession) => {
      const rows: Row[] = await session.query("insert into invoices values ($1) returning amount", ["task_x"]);
      await session.exec("select 1");
      return Number(rows[0]?.amount);
    },
  );

  worker.task("bill", async (ctx) => {
    const settled: Task | null = await ctx.succeedIn(async (session) => {
      await session.query("insert into invoices values ($1)", [ctx.taskId]);
      return { billed: true };
    });
    return settled?.status;
  });

  console.log(client, dsnStore, done.task.status, done.value);
  await pool.close();
}
