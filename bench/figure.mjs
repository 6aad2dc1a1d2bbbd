// Every figure, and one repetition of one of them in this process:
//   node bench/figure.mjs --figure=drain-64 [--entry=index.mjs] [--pg=postgres://…] [size options]
// prints one JSON line {"id", "entry", "values": [one per row], "detail"?}.
import { figures as client } from "./client.mjs";
import { argValue, figureContext, isMain, runFigure } from "./lib.mjs";
import { figures as wal } from "./wal.mjs";
import { figures as worker } from "./worker.mjs";

/** id → figure, in table order. */
export const figures = { ...client, ...worker, ...wal };

if (isMain(import.meta.url)) {
  const id = argValue("figure", "");
  const spec = figures[id];
  if (!spec) {
    console.error(`unknown --figure=${id}; one of: ${Object.keys(figures).join(", ")}`);
    process.exit(2);
  }
  const ctx = await figureContext();
  let code = 0;
  try {
    const { values, detail } = await runFigure(id, spec, ctx);
    console.log(JSON.stringify({ id, entry: ctx.entry, values, detail }));
  } catch (err) {
    console.error(err?.stack ?? String(err));
    code = 1;
  } finally {
    ctx.target.cleanup();
  }
  process.exit(code); // a timed-out figure may still hold handles open
}
