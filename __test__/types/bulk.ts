// retryMany and cancelMany (docs/api.md, "Bulk retry and cancel"), and
// retention by count ("Retention"), as a consumer types them. It must compile
// under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ } from "cairnq";
import type { BulkPage, CancelManyFilter, PurgeInput, RetentionOptions, RetryManyFilter } from "cairnq";

const client = CairnQ.sqlite("/tmp/bulk.db");

async function bulk(): Promise<void> {
  const filter: RetryManyFilter = { queue: "emails", finishedAfter: new Date(0), finishedBefore: 1, limit: 500 };
  const page: BulkPage = await client.retryMany(filter);
  const seen: [number, string[], boolean, boolean] = [page.count, page.ids, page.more, page.dryRun];
  const canceled = { status: "running", dryRun: true } satisfies CancelManyFilter;
  const preview: BulkPage = await client.cancelMany(canceled);
  await client.retryMany();
  await client.cancelMany({ name: "send" });
  void [seen, preview];
}

void bulk;

// Retention by count (docs/api.md, "Retention"): alone, beside age rules, per queue.
const byCount: RetentionOptions = { keepLast: { succeeded: 100 } };
const both: RetentionOptions = {
  olderThanMs: { failed: 86_400_000 },
  keepLast: [{ queue: "emails", status: "succeeded", keepLast: 100 }],
};
const purgeInput: PurgeInput = { keepLast: 10, status: "succeeded" };
void [byCount, both, purgeInput];
