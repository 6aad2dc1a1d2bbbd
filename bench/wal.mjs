// Group commit on SQLite: WAL frames written by 32 store writes started
// together versus 32 awaited one by one (fewer frames = writes shared commits).
// SQLite only. Standalone: node bench/wal.mjs [--entry=index.mjs] [--reps=3]
import fs from "node:fs";
import { seed, standalone, withClient } from "./lib.mjs";

/**
 * The current WAL generation: its salts and how many frames of it the file
 * holds (frames from before a checkpoint restart carry other salts).
 */
function walState(file) {
  const buf = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
  if (buf.length < 32) return { salt: null, frames: 0 };
  const pageSize = buf.readUInt32BE(8) || 4096;
  const salt = buf.subarray(16, 24);
  let frames = 0;
  for (let at = 32; at + 24 + pageSize <= buf.length; at += 24 + pageSize) {
    if (!buf.subarray(at + 8, at + 16).equals(salt)) break;
    frames++;
  }
  return { salt: salt.toString("hex"), frames };
}

/** Frames `write()` added to `location`'s WAL. */
async function framesOf(location, write) {
  const before = walState(`${location}-wal`);
  await write();
  const after = walState(`${location}-wal`);
  if (before.salt === after.salt) return { frames: after.frames - before.frames, restarted: false };
  return { frames: after.frames, restarted: true }; // a checkpoint restarted the WAL: a lower bound
}

/** Run `op(i)` for 32 i's started together, then for 32 more one at a time. */
async function compareFrames(location, op) {
  const concurrent = await framesOf(location, () => Promise.all(Array.from({ length: 32 }, (_, i) => op(i))));
  const sequential = await framesOf(location, async () => {
    for (let i = 32; i < 64; i++) await op(i);
  });
  const restarted = concurrent.restarted || sequential.restarted ? " (WAL restarted: lower bound)" : "";
  // The share, not the count: each package writes the pages of its own schema
  // version, so frame counts compare only within one package.
  return {
    values: [concurrent.frames / sequential.frames],
    detail: `${concurrent.frames}/${sequential.frames} frames${restarted}`,
  };
}

const walFigure = (name, run) => ({
  sqliteOnly: true,
  rows: [
    {
      name: `group commit: WAL frames of 32 concurrent ${name} / of 32 sequential (share, lower is better)`,
      lower: true,
    },
  ],
  run: (ctx) => {
    if (ctx.target.pg) throw new Error("WAL frames are a SQLite figure");
    return withClient(ctx, "wal", run);
  },
});

export const figures = {
  "wal-complete": walFigure("complete", async (client, location) => {
    await seed(client, 64, "job");
    const claimed = await client.store.claim({ queues: ["default"], workerId: "w", leaseMs: 30000, limit: 64 });
    if (claimed.length !== 64) throw new Error(`claimed ${claimed.length} of 64 tasks`);
    return compareFrames(location, (i) =>
      client.store.complete({ taskId: claimed[i].id, workerId: "w", result: { ok: true } }),
    );
  }),
  "wal-submit": walFigure("submit", async (client, location) => {
    await client.submit("job", { warm: true });
    return compareFrames(location, (i) => client.submit("job", { i }));
  }),
};

await standalone(import.meta.url, figures);
