// The overview's and `cairnq top`'s finished-per-second series: samples come
// as often as their reader reads, the series is per period of time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const { Throughput } = createRequire(import.meta.url)("../../lib/admin/inspect.js");

const counts = (done) => ({ succeeded: done, failed: 0, canceled: 0, queued: 0, running: 0 });

test("a period's rate is what its samples saw, spread over their time", () => {
  const rates = new Throughput(60, 1000);
  rates.add({ mail: counts(0) }, 10_000);
  rates.add({ mail: counts(40) }, 12_000);
  assert.deepEqual(rates.series("mail"), [20, 20]);
  assert.deepEqual(rates.series(), [20, 20]);
});

test("an idle gap between two reads reads as zeros, not as one slow period", () => {
  const rates = new Throughput(60, 1000);
  rates.add({ mail: counts(0) }, 10_000);
  rates.add({ mail: counts(30) }, 11_000);
  rates.add({ mail: counts(30) }, 14_000);
  assert.deepEqual(rates.series("mail"), [30, 0, 0, 0]);
});

test("only the last `keep` periods are kept, and a purge never reads as negative", () => {
  const rates = new Throughput(3, 1000);
  for (let s = 0; s <= 10; s++) rates.add({ mail: counts(s * 5) }, s * 1000);
  rates.add({ mail: counts(0) }, 11_000);
  assert.deepEqual(rates.series("mail"), [5, 5, 0]);
  assert.ok(rates.samples.length <= 5, `${rates.samples.length} samples kept`);
});

test("one sample is no rate yet", () => {
  const rates = new Throughput();
  rates.add({ mail: counts(3) }, 1000);
  assert.deepEqual(rates.series("mail"), []);
});
