//! The raw bulk-insert rate of SQLite for the protocol's schema: a fresh file
//! with every migration applied (the same tables and indexes), WAL with
//! `synchronous=NORMAL` as the store runs it, then one transaction of `n`
//! prepared inserts of queued tasks. `bench/bulk-submit.mjs` runs it beside
//! `submitMany` in the same run (bench/RESULTS.md).
//!
//! `cargo run --release -p cairnq-core --example raw_bulk_insert -- PATH N`
//! prints `{"n": N, "ms": …}`.

use std::time::Instant;

use cairnq_core::ids::{new_task_id, now_ms};
use cairnq_core::protocol::SQLITE_MIGRATIONS;
use rusqlite::{params, Connection};

fn main() -> rusqlite::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: raw_bulk_insert PATH N");
    let n: usize = args
        .next()
        .and_then(|v| v.parse().ok())
        .expect("N, a count");
    let mut conn = Connection::open(&path)?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    conn.execute_batch("PRAGMA synchronous = NORMAL")?;
    for migration in SQLITE_MIGRATIONS {
        conn.execute_batch(migration.sql)?;
    }
    // Payloads made before the clock starts, as a caller's are.
    let payloads: Vec<String> = (0..n).map(|i| format!("{{\"i\":{i}}}")).collect();
    let started = Instant::now();
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare(
            "insert into cairnq_tasks (id, name, queue, status, payload, metadata, max_attempts, \
             priority, run_at_ms, parent_id, root_id, correlation_id, created_at_ms, updated_at_ms) \
             values (?1, 'bulk', 'default', 'queued', ?2, '{}', 3, 0, ?3, null, ?1, null, ?3, ?3)",
        )?;
        for payload in &payloads {
            insert.execute(params![new_task_id(), payload, now_ms()])?;
        }
    }
    tx.commit()?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    println!("{{\"n\":{n},\"ms\":{ms:.3}}}");
    Ok(())
}
