// Public types of cairnq/testing (docs/api.md, "Testing"): one declaration
// file for both entry points (testing.mjs and testing.js load the same objects).

import type {
  BatchHandler,
  BatchTaskOptions,
  CairnQ,
  CairnQError,
  Handler,
  SQLiteStore,
  Task,
  TaskDef,
  TaskOptions,
  TaskStatus,
  TypedHandler,
  WorkerOptions,
} from "./index.js";

export type TestKitOptions = {
  /** Where the test clock starts (epoch milliseconds or a Date); default: the host's time now. */
  now?: number | Date;
  /** The queues each drain's worker claims from; default `["default"]`. */
  queues?: string[];
  /** The options of each drain's worker (`leaseMs`, `retryBackoffMs`, `concurrency`, …). */
  worker?: WorkerOptions;
};

export type DrainOptions = {
  /** The most handler runs one drain makes (an integer >= 1, default 1000): past it, `DrainLimitError`. */
  max?: number;
};

export type Drained = {
  /** Handler runs the drain made (a task run twice, as a retry, counts twice). */
  ran: number;
  /** The tasks they ran, in the order first run, as their rows are now. */
  tasks: Task[];
};

export type SubmittedFilter = {
  name?: string | TaskDef<any, any>;
  queue?: string;
  status?: TaskStatus;
};

/** The test store's clock: it stands still until `advance` moves it. */
export declare class TestClock {
  /** Epoch milliseconds on the clock. */
  now(): number;
  /** The clock's time as a Date. */
  date(): Date;
  /** Move the clock `ms` forward (an integer >= 0); its time after. */
  advance(ms: number): number;
}

export declare class TestKit {
  constructor(opts?: TestKitOptions);
  /** A SQLite store in a temporary directory, on the test clock. */
  readonly store: SQLiteStore;
  /** A client over `store`. */
  readonly client: CairnQ;
  readonly clock: TestClock;
  /** Register a handler every drain runs, in the forms `worker.task` takes. */
  task(fn: Handler): this;
  task<P, R>(def: TaskDef<P, R>, fn: TypedHandler<P, R>): this;
  task(name: string, fn: Handler): this;
  task(nameOrDef: string | TaskDef<any, any>, opts: BatchTaskOptions, fn: BatchHandler): this;
  task(nameOrDef: string | TaskDef<any, any>, opts: TaskOptions, fn: Handler): this;
  /** Run the registered handlers until nothing is due now on the test clock. */
  drain(opts?: DrainOptions): Promise<Drained>;
  /** The tasks submitted, oldest first: all, or those matching `filter`. */
  submitted(filter?: SubmittedFilter): Promise<Task[]>;
  /** `submitted(filter)`, throwing an AssertionError unless it found some (or exactly `count`). */
  assertSubmitted(filter?: SubmittedFilter, opts?: { count?: number }): Promise<Task[]>;
  /** Close the client and the store; remove the temporary directory. */
  close(): Promise<void>;
}

/** A drain ran more than `max` handler runs and was stopped. */
export declare class DrainLimitError extends CairnQError {
  readonly max: number;
  readonly tasks: number;
}

/** A test kit on a new temporary database. */
export declare function createTestKit(opts?: TestKitOptions): TestKit;
