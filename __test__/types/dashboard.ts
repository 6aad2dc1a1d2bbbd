// The dashboard's declarations as an embedding application uses them: the
// fetch-style handler (Bun.serve, Hono, …) and the Node http / Express
// adapter. It must compile (tsc -p __test__/types/tsconfig.json); never run.
import * as http from "node:http";

import { CairnQ, createDashboard, toNodeHandler } from "cairnq";
import type { DashboardHandler, DashboardOptions, NodeRequestHandler } from "cairnq";

const client = CairnQ.sqlite("./queue.db");
const options: DashboardOptions = {
  client,
  basePath: "/admin/queue",
  readOnly: true,
  token: "s3cret",
  refreshMs: 1000,
  live: false,
};
const handler: DashboardHandler = createDashboard(options);

// Fetch shape: Request in, Promise<Response> out.
export async function fetchLike(request: Request): Promise<Response> {
  const response: Response = await handler(request);
  return response;
}

// Node http and Express: (req, res, next?).
const node: NodeRequestHandler = toNodeHandler(handler);
http.createServer(node).listen(0);
http.createServer((req, res) => node(req, res, (err) => console.error(err)));

// From a path instead of a client; close() releases what it opened.
const owned = createDashboard({
  db: "postgres://localhost/app",
  allowedHosts: ["127.0.0.1:4680", "queue.example.com"],
});
// Any host: behind a token or a proxy that checks the host.
export const anyHost: DashboardHandler = createDashboard({
  client,
  token: "a-token-of-16-chars-or-more",
  allowedHosts: true,
});
export const closed: Promise<void> = owned.close();
