// Rows written the way another program writes them (an older SDK, a
// migration script, a hand edit): SQL run outside this package, through
// Python's sqlite3 on a SQLite file and psql on Postgres, for values the API
// refuses to write.
import { runPython } from "./helpers.mjs";
import { psql } from "./pg-helpers.mjs";

const isPostgres = (db) => /^postgres(ql)?:\/\//.test(db);

/** Run `sql` (one or more statements, no parameters) on `db`, outside the package. */
export async function runForeignSql(db, sql) {
  if (isPostgres(db)) return psql(db, sql);
  return runPython(
    ["import sqlite3, sys", "c = sqlite3.connect(sys.argv[1])", "c.executescript(sys.argv[2])", "c.commit()"].join(
      "\n",
    ),
    [db, sql],
  );
}

/** An SQL expression, in `db`'s dialect, for `ch` repeated `n` times (`n` even). */
export function repeatedText(db, ch, n) {
  return isPostgres(db) ? `repeat('${ch}', ${n})` : `replace(hex(zeroblob(${n / 2})), '0', '${ch}')`;
}
