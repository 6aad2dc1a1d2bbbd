// A realistic consumer of cairnq's public types. It must compile under
// `tsc -p __test__/types/tsconfig.json` (strict); it is never run.
// This file is CommonJS-format (the package has no "type"), like most
// TypeScript services compiled with module NodeNext; usage-esm.mts and
// usage-cjs.cts cover the other two import styles.

import {
  AlreadyExists,
  CairnQ,
  CairnQError,
  EventLoopBlocked,
  LostLease,
  PostgresStore,
  ProtocolVersionMismatch,
  QueueDepthGate,
  QueueFull,
  RetentionSweeper,
  SerializationError,
  SQLiteStore,
  STATUSES,
  TaskCanceled,
  TaskContext,
  TaskError,
  TaskFailed,
  TaskStore,
  TaskTimeout,
  Worker,
  cancelRequested,
  defineTask,
  isCanceled,
  isFailed,
  isQueued,
  isRunning,
  isSucceeded,
  isTerminal,
  isTerminalStatus,
  DEFAULT_WATCH_POLL_MS,
  ListenUnavailable,
  SchemaMismatch,
  UnsupportedBackend,
} from "cairnq";
import type {
  RetentionCutoffs,
  RetentionRule,
  TaskRef,
  TerminalStatus,
  WaitOptions,
  WatchOptions,
  WatchSignal,
  BackpressureOptions,
  BatchHandler,
  CallOptions,
  ClientOptions,
  StoreTracingOptions,
  Conflict,
  FailReason,
  Handler,
  ListInput,
  PurgeInput,
  QueueDepthLimit,
  RetentionOptions,
  SubmitInput,
  SubmitOptions,
  Task,
  TaskContextOptions,
  TaskDef,
  TaskStatus,
  TypedHandler,
  WorkerOptions,
} from "cairnq";

// Compile-time equality assertions.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(_ok: T): void {}

// --- task definitions -------------------------------------------------------

interface ResizeJob {
  url: string;
  width: number;
  height?: number;
}
interface ResizeResult {
  url: string;
  bytes: number;
}

const resize = defineTask<ResizeJob, ResizeResult>("image.resize");
const ping = defineTask("ping"); // TaskDef<unknown, unknown>
const sendMail: TaskDef<{ to: string }, void> = { name: "mail.send" };

expectType<Equal<typeof resize, TaskDef<ResizeJob, ResizeResult>>>(true);
expectType<Equal<typeof ping, TaskDef<unknown, unknown>>>(true);
const defName: string = resize.name;

// --- statuses and predicates ------------------------------------------------

expectType<Equal<TaskStatus, "queued" | "running" | "succeeded" | "failed" | "canceled">>(true);
expectType<Equal<typeof STATUSES, readonly ["queued", "running", "succeeded", "failed", "canceled"]>>(true);
const firstStatus: TaskStatus = STATUSES[0];
const statusCount: 5 = STATUSES.length;
const allStatuses: readonly TaskStatus[] = STATUSES;

function describe(task: Task): string {
  const flags: boolean[] = [
    isTerminal(task),
    cancelRequested(task),
    isQueued(task),
    isRunning(task),
    isSucceeded(task),
    isFailed(task),
    isCanceled(task),
  ];
  const when: number = task.created_at_ms + task.updated_at_ms + task.run_at_ms;
  const lease: number | null = task.lease_until_ms;
  const attempt: number = task.attempt + task.max_attempts + task.priority;
  const nullable: Array<string | null> = [task.worker_id, task.parent_id, task.root_id, task.correlation_id];
  const more: Array<number | null> = [task.progress, task.cancel_requested_at_ms, task.completed_at_ms];
  const msg: string | null = task.message;
  const anyJson: unknown[] = [task.payload, task.metadata, task.result, task.error];
  return `${task.id} ${task.name}@${task.queue} ${task.status} ${flags} ${when} ${lease} ${attempt} ${nullable} ${more} ${msg} ${anyJson.length}`;
}

// A task is a plain object: it fits where plain records are expected.
const asRecord = (task: Task): Record<string, unknown> => task;

// --- client -----------------------------------------------------------------

const retention: RetentionOptions = {
  olderThanMs: 7 * 24 * 3600_000,
  intervalMs: 3600_000,
  limit: 500,
  onError: (err) => console.error("retention", err),
};
const backpressure: BackpressureOptions = { maxQueueDepth: { default: 10_000, images: 500 } };
const depthLimit: QueueDepthLimit = 1000;
const clientOptions: ClientOptions = {
  maxQueueDepth: depthLimit,
  maxQueueWaitMs: 5_000,
  queuePollIntervalMs: 100,
  retention,
};

async function client(path: string): Promise<void> {
  const cq = CairnQ.sqlite(path, { busyTimeoutMs: 2000, ...clientOptions });
  const pg = CairnQ.postgres("postgres://u:p@127.0.0.1/db", { max: 4, maxQueueDepth: 50 });
  const injected = new CairnQ(new SQLiteStore(path, { busyTimeoutMs: 100, propagateBaggage: true }));
  const tracing: StoreTracingOptions = { propagateBaggage: false };
  CairnQ.postgres("postgres://localhost/db", { ...tracing, schema: "app" });
  Worker.sqlite(path, { propagateBaggage: true, queues: ["q"] });
  const withOpts = new CairnQ(new PostgresStore("postgres://localhost/db", { max: 2 }), { retention });
  const store: TaskStore = cq.store;
  await cq.connect();

  // submit: by name (payload unknown) or by definition (payload typed).
  const t1: Task = await cq.submit("report.build", { month: "2026-10" });
  const t2 = await cq.submit("noop");
  const refs: TaskRef[] = await cq.submitMany([
    { task: "noop" },
    { task: resize, payload: { url: "u", width: 1 }, options: { queue: "images", key: "k" } },
  ]);
  void refs;
  const t3 = await cq.submit(resize, { url: "https://x/y.png", width: 64 });
  const t4 = await cq.submit(resize, { url: "u", width: 1, height: 2 }, { queue: "images", priority: 5 });
  const t5 = await cq.submit(ping, 42);
  const t6 = await cq.submit(sendMail, { to: "a@b.c" });
  const conflicts: Conflict[] = ["reuse", "reuse-succeeded", "reject", "replace"];
  const submitOptions: SubmitOptions = {
    queue: "images",
    key: "resize:42",
    conflict: conflicts[1],
    maxAttempts: 5,
    priority: -1,
    metadata: { tenant: "t1" },
    parentId: null,
    rootId: null,
    correlationId: "req-1",
    runAtDelayMs: 1000,
  };
  const keyed = await cq.submit(resize, { url: "u", width: 3 }, submitOptions);
  await cq.submit("x", undefined, { key: null });
  const debounced: Task = await cq.submit(
    resize,
    { url: "u", width: 4 },
    { key: "resize:4", debounceMs: 2_000, maxDelayMs: 10_000 },
  );

  // call: unknown by name, R by definition.
  const r1 = await cq.call("report.build", { month: "2026-10" });
  expectType<Equal<typeof r1, unknown>>(true);
  const r2 = await cq.call(resize, { url: "u", width: 10 });
  expectType<Equal<typeof r2, ResizeResult>>(true);
  const bytes: number = r2.bytes;
  const callOptions: CallOptions = { waitTimeoutMs: 60_000, pollMs: 50, key: "k", conflict: "reuse" };
  const r3: ResizeResult = await cq.call(resize, { url: "u", width: 1 }, callOptions);
  const r4 = await cq.call(sendMail, { to: "x@y.z" }, { waitTimeoutMs: 1000 });
  expectType<Equal<typeof r4, void>>(true);
  const r5 = await cq.call(ping);
  expectType<Equal<typeof r5, unknown>>(true);
  // Explicit type arguments still work.
  const r6 = await cq.call<ResizeJob, ResizeResult>(resize, { url: "u", width: 2 });

  // reads and admin
  const got: Task | null = await cq.get(t1.id);
  const byKey: Task | null = await cq.getByKey("resize:42");
  const listInput: ListInput = {
    status: "failed",
    queue: null,
    name: "image.resize",
    rootId: null,
    correlationId: null,
    limit: 10,
    offset: 0,
  };
  const failed: Task[] = await cq.list(listInput);
  const everything = await cq.list();
  const canceled: Task | null = await cq.cancel(t2.id);
  const canceledByKey = await cq.cancelByKey("resize:42");
  const retried: Task | null = await cq.retry(t3.id, { resetAttempt: true });
  const retriedByKey = await cq.retryByKey("resize:42");
  const purgeInput: PurgeInput = { olderThanMs: 86_400_000, limit: 100 };
  const purged: string[] = await cq.purge(purgeInput);
  await cq.purge();
  const filtered: string[] = await cq.purge({ queue: "images", status: "failed", name: "image.resize", limit: 10 });
  const stats = await cq.stats();
  const oneQueue = await cq.stats("images");
  const allQueues = await cq.stats(null);
  const ref: TaskRef | null = await cq.getStatus(t1.id);
  const refByKey: TaskRef | null = await cq.getStatusByKey("resize:42");
  if (ref !== null && isTerminal(ref) && isTerminalStatus(ref.status)) {
    const terminal: TerminalStatus = ref.status;
    console.log(terminal);
  }
  const watchOptions: WatchOptions = { queues: ["images"], pollMs: DEFAULT_WATCH_POLL_MS };
  const unsubscribe: () => void = cq.watch(watchOptions, (signal: WatchSignal) => {
    const why: "queued" | "done" | "poll" = signal.reason;
    console.log(why, signal.queue, signal.taskId);
  });
  unsubscribe();
  const storeRef: TaskRef | null = await cq.store.getStatus(t1.id);
  console.log(filtered, oneQueue, allQueues, refByKey, storeRef);
  const queuedDefault: number | undefined = stats["default"]?.queued;
  const headroom: number = await cq.queueDepth("images", 100);

  // waits
  const waitOptions: WaitOptions = { timeoutMs: 5_000, pollMs: 20, maxPollMs: 200 };
  const done: Task = await cq.wait(t4.id, waitOptions);
  await cq.call("image.resize", {}, { waitTimeoutMs: 1_000, pollMs: 10, maxPollMs: 100 });
  const doneByKey: Task = await cq.waitByKey("resize:42");
  await cq.wait(t5.id);

  // errors a caller handles
  try {
    await cq.call(resize, { url: "u", width: 0 });
  } catch (err) {
    if (err instanceof TaskFailed) {
      const fields: [string, string, boolean, unknown, unknown] = [
        err.type,
        err.code,
        err.retryable,
        err.details,
        err.error,
      ];
      console.log(err.message, fields);
    } else if (err instanceof TaskCanceled) {
      const id: string = err.taskId;
      console.log(id);
    } else if (err instanceof TaskTimeout) {
      const snapshot: Task | null = err.task;
      const key: string | null = err.key;
      const resumed = await cq.wait(err.taskId);
      console.log(snapshot, key, resumed);
    } else if (err instanceof AlreadyExists) {
      const key: string = err.key;
      console.log(key);
    } else if (err instanceof QueueFull) {
      const info: [string, number, number] = [err.queue, err.maxDepth, err.waitedMs];
      console.log(info);
    } else if (err instanceof SerializationError || err instanceof ProtocolVersionMismatch) {
      console.log(err.name);
    } else if (err instanceof CairnQError) {
      const base: Error = err;
      console.log(base);
    }
  }

  console.log(t6, keyed, r3, r6, got, byKey, failed, everything, canceled, canceledByKey, retried, retriedByKey);
  console.log(purged, queuedDefault, headroom, done, doneByKey, bytes, store, pg, injected, withOpts);
  await cq.close();
}

// --- worker -----------------------------------------------------------------

const contextOptions: TaskContextOptions = { retryBackoffMs: 500, retryBackoffMaxMs: 10_000 };
const workerOptions: WorkerOptions = {
  concurrency: 8,
  leaseMs: 30_000,
  heartbeatIntervalMs: 5_000,
  pollIntervalMs: 250,
  claimBatch: 64,
  maxRunMs: 60_000,
  maxInFlightBytes: 64 * 1024 * 1024,
  resources: { gpu: 1, http: 16 },
  onError: (err, info) => {
    const phase: "claim" | "execute" = info.phase;
    const taskId: string | undefined = info.taskId;
    if (err instanceof EventLoopBlocked) {
      const late: number = err.lateMs + err.intervalMs + err.leaseMs;
      console.warn(late);
    }
    console.error(phase, taskId, err);
  },
  maxQueueDepth: 1000,
  maxQueueWaitMs: 60_000,
  queuePollIntervalMs: 500,
  ...contextOptions,
};

// A typed handler written separately, the way a handler module exports it.
const handleResize: TypedHandler<ResizeJob, ResizeResult> = async (ctx, job) => {
  await ctx.progress(0.5, "halfway");
  await ctx.progress(null, "still going");
  await ctx.progress(0.9);
  if (await ctx.canceled()) throw new TaskError("canceled by user", { code: "canceled", retryable: false });
  return { url: job.url, bytes: job.width * (job.height ?? job.width) };
};

// A plain handler: payload is `any`, the result anything.
const handleReport: Handler = async (ctx, payload) => {
  const month: string = payload.month;
  const child = await ctx.submit("report.part", { month, part: 1 });
  const parts: TaskRef[] = await ctx.submitMany([{ task: "report.part", payload: { month, part: 2 } }]);
  void parts;
  const typedChild = await ctx.submit(resize, { url: "u", width: 5 }, { queue: "images", key: `r:${month}` });
  const finished: Task = await ctx.wait(child.id, { timeoutMs: 10_000, pollMs: 100 });
  await ctx.wait(typedChild.id);
  return { month, child: finished.result };
};

const handleBatch: BatchHandler = async (items) => {
  const results: Record<string, unknown> = {};
  for (const item of items) {
    if (item.attempt > 3) {
      await item.fail(new Error("too many attempts"), { retryable: false });
      continue;
    }
    results[item.taskId] = { ok: true, payload: item.payload };
  }
  return results;
};

async function resizeImage(ctx: TaskContext, payload: ResizeJob): Promise<ResizeResult> {
  return { url: payload.url, bytes: ctx.attempt };
}

async function worker(path: string): Promise<void> {
  const w = Worker.sqlite(path, { queues: ["default", "images"], busyTimeoutMs: 5000, ...workerOptions });
  const pgWorker = Worker.postgres("postgres://localhost/db", { max: 4, queues: ["pg"], leaseMs: 10_000 });
  const injected = new Worker(new SQLiteStore(path), ["default"], { concurrency: 2 });
  const plain = new Worker(new SQLiteStore(path), ["default"]);
  const id: string = w.id;
  const workerId: string = w.workerId;
  console.log(workerId);

  const chained: Worker = w
    // task(fn): registered under the function's name
    .task(resizeImage)
    // task(def, typedHandler): payload is ResizeJob, the result must be a ResizeResult
    .task(resize, async (ctx, job) => {
      expectType<Equal<typeof job, ResizeJob>>(true);
      const ctxIsContext: TaskContext = ctx;
      return { url: job.url, bytes: job.width };
    })
    // synchronous typed handler
    .task(defineTask<{ n: number }, number>("square"), (_ctx, { n }) => n * n)
    .task(sendMail, async (_ctx, mail) => {
      const to: string = mail.to;
      console.log(to);
    })
    .task(ping, () => "pong")
    // task(name, handler)
    .task("report.build", handleReport)
    .task("report.part", async (ctx, payload) => {
      const attempt: number = ctx.attempt;
      return { payload, attempt };
    })
    // task(nameOrDef, {batch, concurrency?, resource?}, batchHandler)
    .task("thumbs", { batch: 32 }, handleBatch)
    .task(resize, { batch: 8, concurrency: 2, resource: "gpu" }, async (items) => {
      for (const item of items) await item.succeed({ url: "u", bytes: 1 });
    })
    .task("nothing-returned", { batch: 4 }, () => undefined)
    // task(nameOrDef, {concurrency?, resource?}, handler)
    .task("fetch.page", { concurrency: 4, resource: "http" }, async (ctx, payload) => {
      const res = await fetch(String(payload.url), { signal: ctx.signal });
      return res.status;
    })
    .task(defineTask<ResizeJob, ResizeResult>("image.crop"), { resource: "gpu" }, handleResize)
    .task("context.tour", async (ctx) => {
      const facts = [ctx.workerId, ctx.taskId, ctx.name, ctx.queue, ctx.rootId, ctx.correlationId];
      const meta: unknown = ctx.metadata;
      const flags: boolean[] = [ctx.settled, ctx.lostLease, ctx.signal.aborted];
      ctx.signal.addEventListener("abort", () => console.log(ctx.signal.reason));
      const beat: Task = await ctx.heartbeat();
      const reasons: FailReason[] = [
        "boom",
        new Error("boom"),
        new TaskError("boom"),
        { type: "X", code: "x", message: "m", retryable: true, details: {} },
      ];
      const failedRow: Task | null = await ctx.fail(reasons[0]);
      await ctx.fail();
      await ctx.fail(new TaskError("bad input", { code: "bad_input", type: "Validation", details: { field: "url" } }));
      await ctx.fail({ type: "Custom", code: "custom", message: "m" }, { retryable: true });
      const succeeded: Task | null = await ctx.succeed({ ok: true });
      await ctx.succeed();
      console.log(facts, meta, flags, beat, failedRow, succeeded);
    });

  const thrown = new TaskError("nope", { code: "nope", retryable: true, type: "Nope", details: { a: 1 } });
  const env = thrown.envelope();
  const envFields: [string, string, string, boolean, Record<string, unknown>] = [
    env.type,
    env.code,
    env.message,
    env.retryable,
    env.details,
  ];
  const errFields: [string, boolean, string, Record<string, unknown>] = [
    thrown.code,
    thrown.retryable,
    thrown.type,
    thrown.details,
  ];

  // lifecycle
  const running: Promise<void> = w.run({ concurrency: 4 });
  w.stop();
  await running;
  await plain.run();
  await injected.serve({ concurrency: 2 });
  const answer: number = await pgWorker.background(async () => 42, { concurrency: 1 });
  const viaBackground = await w.background(() =>
    new CairnQ(new SQLiteStore(path)).call(resize, { url: "u", width: 1 }),
  );
  expectType<Equal<typeof viaBackground, ResizeResult>>(true);
  await w.close();
  console.log(id, chained, envFields, errFields, answer);
}

// --- stores, gate, sweeper, context ------------------------------------------

async function lowLevel(store: TaskStore): Promise<void> {
  await store.connect();
  const version: number = await store.protocolVersion();
  store.useBackpressure({ maxQueueDepth: 100 });
  store.useBackpressure(backpressure);
  await store.claimWake(["default"], 500);
  await store.taskDoneWake("task_x", 500);

  const input: SubmitInput = { name: "n", payload: undefined };
  const full: SubmitInput = { name: "n", payload: { a: 1 }, queue: "q", key: "k", conflict: "replace", maxAttempts: 1 };
  const row: Task = await store.submit(input);
  await store.submit(full);
  const claimed: Task[] = await store.claim({
    queues: ["default"],
    workerId: "worker_1",
    leaseMs: 1000,
    limit: 10,
    names: ["n"],
  });
  await store.claim({ queues: ["default"], workerId: "worker_1" });
  const session = await store.claimSession(
    { queues: ["default"], workerId: "worker_1", leaseMs: 1000, names: ["a", "b"] },
    async (draw) => {
      const a: Task[] = await draw(["a"], 5);
      const b = await draw(null, 1);
      return a.length + b.length;
    },
  );
  expectType<Equal<typeof session, number | undefined>>(true);
  const beat: Task = await store.heartbeat({ taskId: row.id, workerId: "worker_1", leaseMs: 1000 });
  const beats: Map<string, boolean> = await store.heartbeatBatch({ taskIds: [row.id], workerId: "worker_1" });
  await store.progress({ taskId: row.id, workerId: "worker_1", progress: 0.5, message: null });
  await store.succeed({ taskId: row.id, workerId: "worker_1", result: { ok: 1 } });
  await store.complete({ taskId: row.id, workerId: "worker_1", result: null });
  await store.fail({ taskId: row.id, workerId: "worker_1", error: { message: "x" }, retryable: false, delayMs: 10 });
  await store.fail({ taskId: row.id, workerId: "worker_1", error: null });
  const depth: number = await store.queueDepth("default", 10);
  const stats: Record<string, Record<TaskStatus, number>> = await store.stats();
  const rows: Task[] = await store.list({ limit: 1 });
  const ids: string[] = await store.purge({ limit: 10 });

  const gate = new QueueDepthGate(store, { maxQueueDepth: { default: 10 } });
  const limit: number | null = gate.limitFor("default");
  await gate.acquire("default");

  const cutoffs: RetentionCutoffs = { failed: 86_400_000, canceled: 0 };
  const rules: RetentionRule[] = [
    { queue: "images", status: "succeeded", olderThanMs: 3_600_000 },
    { olderThanMs: 604_800_000 },
  ];
  new RetentionSweeper(store, { olderThanMs: cutoffs, limit: 500 });
  new RetentionSweeper(store, { olderThanMs: rules });
  const newErrors: Error[] = [new SchemaMismatch("m"), new UnsupportedBackend("m"), new ListenUnavailable()];
  console.log(newErrors);
  const sweeper = new RetentionSweeper(store, { olderThanMs: 0 });
  sweeper.start();
  const swept: number = await sweeper.sweep();
  await sweeper.stop();

  const ctx = new TaskContext(store, row, "worker_1", 30_000, contextOptions);
  const ctx2 = new TaskContext(store, row, "worker_1", 30_000);
  ctx.markSettled();
  ctx.markLeaseLost();
  ctx.observeCancel(true);

  // Errors are constructible the way handlers and tests build them.
  const errors: CairnQError[] = [
    new CairnQError(),
    new CairnQError("m"),
    new AlreadyExists("k"),
    new QueueFull("q", 10, 100),
    new TaskTimeout("task_x"),
    new TaskTimeout("task_x", { timeoutMs: 10, task: row, key: null }),
    new TaskFailed({ type: "T", code: "c", message: "m" }),
    new TaskFailed(null),
    new TaskCanceled("task_x"),
    new TaskError("m"),
    new LostLease("task_x"),
    new EventLoopBlocked(10, 20, 30),
    new ProtocolVersionMismatch("storage protocol_version=2, SDK supports 1"),
    new SerializationError("m"),
  ];
  const lostTaskId: string = new LostLease("task_x").taskId;

  await store.close();
  console.log(version, claimed, session, beat, beats, depth, stats, rows, ids, limit, swept, ctx2, errors, lostTaskId);
}

// A user's own error type on top of TaskError.
class ValidationError extends TaskError {
  constructor(field: string) {
    super(`invalid ${field}`, { code: "invalid", retryable: false, details: { field } });
  }
}

export {
  client,
  worker,
  lowLevel,
  describe,
  asRecord,
  ValidationError,
  defName,
  firstStatus,
  statusCount,
  allStatuses,
};
