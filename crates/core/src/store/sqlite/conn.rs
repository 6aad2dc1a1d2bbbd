//! Opening SQLite connections the protocol's way (docs/protocol.md, "Migration
//! ledger", "Connection setup (SQLite)"): the checks before an open, WAL,
//! migrations, the protocol version and planner statistics.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::ids::now_ms;
use crate::protocol::{self, Migration, SQLITE, SQLITE_MIGRATIONS};
use crate::task::COLUMNS;

use super::wal_writes;

/// Whether `path` names a database that lives in this process's memory:
/// `:memory:`, a URI with `mode=memory` or `vfs=memdb`, or `file::memory:`.
pub fn is_in_memory(path: &str) -> bool {
    path == ":memory:"
        || path.starts_with("file::memory:")
        || path.contains("mode=memory")
        || path.contains("vfs=memdb")
}

/// Map a driver error onto `Error::Database`, keeping SQLite's code name.
pub fn sqlite_error(e: rusqlite::Error) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(failure, message) => {
            let code = code_name(failure.code);
            let text = message.clone().unwrap_or_else(|| failure.to_string());
            Error::Database {
                code: code.into(),
                message: format!("{code}: {text}"),
            }
        }
        _ => Error::Database {
            code: "SQLITE_ERROR".into(),
            message: e.to_string(),
        },
    }
}

fn code_name(code: rusqlite::ErrorCode) -> &'static str {
    use rusqlite::ErrorCode::*;
    match code {
        DatabaseBusy => "SQLITE_BUSY",
        DatabaseLocked => "SQLITE_LOCKED",
        NotADatabase => "SQLITE_NOTADB",
        DatabaseCorrupt => "SQLITE_CORRUPT",
        ConstraintViolation => "SQLITE_CONSTRAINT",
        CannotOpen => "SQLITE_CANTOPEN",
        ReadOnly => "SQLITE_READONLY",
        DiskFull => "SQLITE_FULL",
        SystemIoFailure => "SQLITE_IOERR",
        PermissionDenied => "SQLITE_PERM",
        OutOfMemory => "SQLITE_NOMEM",
        _ => "SQLITE_ERROR",
    }
}

/// How a store may use its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    /// `OpenMode::Existing` on a file this process may not write (or whose
    /// directory it may not write, where the WAL index would go): every
    /// read works, a write fails with `SQLITE_READONLY`.
    ReadOnly,
}

/// Whether `err` says the file (or the WAL index beside it) cannot be
/// written or created by this process.
pub fn is_read_only(err: &Error) -> bool {
    matches!(err, Error::Database { code, .. } if code == "SQLITE_READONLY" || code == "SQLITE_CANTOPEN")
        || matches!(err, Error::Connection(message) if message.contains("SQLITE_READONLY") || message.contains("SQLITE_CANTOPEN"))
}

/// Open one connection with the protocol's pragmas. The first statement reads
/// the file header, so a file that is not a database is refused before
/// anything could be written to it.
pub fn open(path: &str, busy_timeout: Duration) -> Result<Connection> {
    open_as(path, busy_timeout, Access::ReadWrite)
}

/// `path` as a read-only SQLite URI. Without a WAL index (`-shm`) no
/// process has the file open in WAL mode, and one this process cannot create
/// would make every read fail: `immutable` reads the file without one.
fn read_only_uri(path: &str) -> String {
    let mut uri = String::from("file:");
    for c in path.chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?mode=ro");
    if !Path::new(&format!("{path}-shm")).exists() {
        uri.push_str("&immutable=1");
    }
    uri
}

/// `open` with the given access; `ReadOnly` creates and switches nothing.
pub fn open_as(path: &str, busy_timeout: Duration, access: Access) -> Result<Connection> {
    if access == Access::ReadOnly {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(read_only_uri(path), flags)
            .map_err(|e| Error::Connection(format!("cannot open {path}: {}", sqlite_error(e))))?;
        conn.busy_timeout(busy_timeout).map_err(sqlite_error)?;
        conn.query_row("select count(*) from sqlite_master", [], |_| Ok(()))
            .map_err(|e| not_a_database(path, e))?;
        conn.set_prepared_statement_cache_capacity(64);
        return Ok(conn);
    }
    let memory = is_in_memory(path);
    if !memory && !path.starts_with("file:") {
        if let Some(parent) = Path::new(path)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::Connection(format!("cannot create the directory of {path}: {e}"))
            })?;
        }
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let opened = match wal_writes::vfs_name().filter(|_| !memory) {
        Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs),
        None => Connection::open_with_flags(path, flags),
    };
    let conn = opened
        .map_err(|e| Error::Connection(format!("cannot open {path}: {}", sqlite_error(e))))?;
    conn.busy_timeout(busy_timeout).map_err(sqlite_error)?;
    conn.query_row("select count(*) from sqlite_master", [], |_| Ok(()))
        .map_err(|e| not_a_database(path, e))?;
    if !memory {
        switch_to_wal(&conn)?;
        // As the TypeScript 0.7.0 package runs (better-sqlite3 builds with WAL
        // synchronous=NORMAL): a commit is in the WAL before any caller hears
        // of it, so a killed process loses nothing; only an OS crash or power
        // loss can drop the last commits. FULL would fsync every commit.
        conn.execute_batch("PRAGMA synchronous = NORMAL")
            .map_err(sqlite_error)?;
    }
    // Statement and savepoint journals in memory: a claim or completion of
    // many rows would otherwise spill its journal to a temporary file.
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY")
        .map_err(sqlite_error)?;
    // Plans must not depend on bound values: otherwise a statement whose
    // parameter feeds the planner (here the claim's LIMIT) is prepared again
    // whenever that value changes.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(sqlite_error)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

fn not_a_database(path: &str, e: rusqlite::Error) -> Error {
    let err = sqlite_error(e);
    match &err {
        Error::Database { code, message }
            if code == "SQLITE_NOTADB" || code == "SQLITE_CORRUPT" =>
        {
            Error::Connection(format!(
                "{path} is not a usable cairnq database ({message}); the file was left untouched"
            ))
        }
        _ => err,
    }
}

/// `OpenMode::Existing`'s check, before `open` may change anything: `path`
/// must name an existing SQLite file holding cairnq's tables with this
/// protocol version. Opened without the create flag and `query_only`, so a
/// missing or foreign file is left exactly as it was.
pub fn check_existing(path: &str, busy_timeout: Duration) -> Result<Access> {
    let missing = || {
        Error::no_database(format!(
            "no cairnq database at {path}: the file does not exist (nothing was created)"
        ))
    };
    if is_in_memory(path) {
        return Err(Error::no_database(format!(
            "no cairnq database at {path}: an in-memory database never exists before it is opened"
        )));
    }
    if !path.starts_with("file:") {
        match metadata_of(path)? {
            None => return Err(missing()),
            Some(meta) if !meta.is_file() => {
                return Err(Error::not_cairnq(format!(
                    "{path} is not a cairnq database: it is not a file"
                )))
            }
            Some(_) => {}
        }
    }
    let conn = inspect(path, busy_timeout)?.ok_or_else(missing)?;
    let (conn, access, tables) = match tables_of(&conn, path) {
        Ok(tables) => (conn, Access::ReadWrite, tables),
        // A WAL file whose index this process may not create: read it as such.
        Err(err) if is_read_only(&err) && !path.starts_with("file:") => {
            let conn = open_as(path, busy_timeout, Access::ReadOnly)?;
            let tables = tables_of(&conn, path)?;
            (conn, Access::ReadOnly, tables)
        }
        Err(err) => return Err(err),
    };
    if tables.cairnq < 3 {
        return Err(Error::not_cairnq(format!(
            "{path} is not a cairnq database: it has no cairnq_meta, cairnq_migrations and cairnq_tasks tables (the file was left untouched)"
        )));
    }
    check_protocol_version(&conn, true)?;
    Ok(access)
}

/// `OpenMode::MigrateOwn`'s check, before `open` may change anything: a file
/// holding tables, none of them cairnq's, belongs to another application;
/// an in-memory database would lose its tasks when the process ends; a
/// directory that does not exist is more likely a typing mistake than a
/// wish. A missing or empty file in an existing directory, or one with a
/// cairnq installation, passes.
pub fn check_not_foreign(path: &str, busy_timeout: Duration) -> Result<()> {
    if is_in_memory(path) {
        return Err(Error::Invalid(format!(
            "db must be a database that outlives this process, got {path}: an in-memory database ends with the process, and its tasks with it"
        )));
    }
    if !path.starts_with("file:") {
        let directory = Path::new(path)
            .parent()
            .filter(|p| !p.as_os_str().is_empty());
        let missing = |d: &&Path| matches!(std::fs::metadata(d), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        if let Some(directory) = directory.filter(missing) {
            return Err(Error::no_database(format!(
                "no cairnq database at {path}: the directory {} does not exist (nothing was created)",
                directory.display()
            )));
        }
        match metadata_of(path)? {
            None => return Ok(()),
            Some(meta) if meta.is_file() && meta.len() == 0 => return Ok(()),
            Some(_) => {}
        }
    }
    let Some(conn) = inspect(path, busy_timeout)? else {
        return Ok(());
    };
    let tables = tables_of(&conn, path)?;
    if tables.cairnq == 0 && !tables.others.is_empty() {
        return Err(Error::not_cairnq(format!(
            "{path} is not a cairnq database: it holds another application's tables ({}) and no cairnq installation (the file was left untouched)",
            tables.others.join(", ")
        )));
    }
    Ok(())
}

/// What is at `path`: `None` when nothing is; an error when this process
/// may not look (a directory on the way it cannot enter).
fn metadata_of(path: &str) -> Result<Option<std::fs::Metadata>> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(path, &e)),
    }
}

/// A file that exists but cannot be read or opened by this process.
fn unreadable(path: &str, e: &std::io::Error) -> Error {
    let why = if e.kind() == std::io::ErrorKind::PermissionDenied {
        "permission denied".to_string()
    } else {
        e.to_string()
    };
    Error::Connection(format!("cannot open {path}: {why}"))
}

/// A connection that reads `path` without changing it (no create flag,
/// `query_only`); `None` when there is no file to open.
fn inspect(path: &str, busy_timeout: Duration) -> Result<Option<Connection>> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match Connection::open_with_flags(path, flags) {
        Ok(conn) => conn,
        Err(e) => {
            return match sqlite_error(e) {
                Error::Database { code, .. } if code == "SQLITE_CANTOPEN" => {
                    // SQLite says "unable to open" for a missing file and for
                    // one this process may not read alike: ask the OS which.
                    match std::fs::File::open(path) {
                        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                            Err(unreadable(path, &e))
                        }
                        _ => Ok(None),
                    }
                }
                err => Err(Error::Connection(format!("cannot open {path}: {err}"))),
            };
        }
    };
    conn.busy_timeout(busy_timeout).map_err(sqlite_error)?;
    conn.execute_batch("PRAGMA query_only = ON")
        .map_err(sqlite_error)?;
    Ok(Some(conn))
}

/// What tables a file holds: how many of cairnq's three, and the others.
struct Tables {
    cairnq: usize,
    others: Vec<String>,
}

fn tables_of(conn: &Connection, path: &str) -> Result<Tables> {
    let names: Vec<String> = (|| -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare(
            "select name from sqlite_master where type = 'table' \
             and name not like 'sqlite\\_%' escape '\\' order by name",
        )?;
        let names = stmt.query_map([], |row| row.get(0))?;
        names.collect()
    })()
    .map_err(|e| match sqlite_error(e) {
        Error::Database { code, message }
            if code == "SQLITE_NOTADB" || code == "SQLITE_CORRUPT" =>
        {
            Error::not_cairnq(format!(
                "{path} is not a cairnq database: {message} (the file was left untouched)"
            ))
        }
        err => err,
    })?;
    let (cairnq, others): (Vec<String>, Vec<String>) = names.into_iter().partition(|name| {
        matches!(
            name.as_str(),
            "cairnq_meta" | "cairnq_tasks" | "cairnq_migrations"
        )
    });
    Ok(Tables {
        cairnq: cairnq.len(),
        others,
    })
}

/// `journal_mode = WAL` ignores the busy handler, so retry it while another
/// connection holds the file (docs/protocol.md, "Connection setup (SQLite)",
/// step 3).
fn switch_to_wal(conn: &Connection) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        }) {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(_) => {}
            Err(e) => {
                let err = sqlite_error(e);
                if !err.is_busy() {
                    return Err(err);
                }
            }
        }
        if Instant::now() >= deadline {
            return Err(Error::Database {
                code: "SQLITE_BUSY".into(),
                message: "could not switch the database to WAL mode: it stayed locked by another connection".into(),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Refuse a database stamped with another protocol major before touching it.
pub fn check_protocol_version(conn: &Connection, missing_is_error: bool) -> Result<()> {
    let has_meta: bool = conn
        .query_row(
            "select exists (select 1 from sqlite_master where type = 'table' and name = 'cairnq_meta')",
            [],
            |row| row.get(0),
        )
        .map_err(sqlite_error)?;
    let found = if has_meta {
        read_protocol_version(conn)?
    } else {
        None
    };
    protocol::check_version(found, missing_is_error)
}

pub fn read_protocol_version(conn: &Connection) -> Result<Option<String>> {
    let mut stmt = conn
        .prepare_cached(SQLITE.protocol_version)
        .map_err(sqlite_error)?;
    let mut rows = stmt.query([]).map_err(sqlite_error)?;
    match rows.next().map_err(sqlite_error)? {
        Some(row) => Ok(Some(
            row.get::<_, rusqlite::types::Value>(0)
                .map(value_text)
                .map_err(sqlite_error)?,
        )),
        None => Ok(None),
    }
}

fn value_text(v: rusqlite::types::Value) -> String {
    use rusqlite::types::Value::*;
    match v {
        Integer(i) => i.to_string(),
        Real(f) => f.to_string(),
        Text(s) => s,
        Null | Blob(_) => String::new(),
    }
}

/// Apply every migration the ledger lacks, each in its own `BEGIN IMMEDIATE`
/// so concurrent cold starts apply it exactly once (docs/protocol.md,
/// "Migration ledger").
pub fn migrate(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "create table if not exists cairnq_migrations (name text primary key, applied_at_ms integer not null)",
    )
    .map_err(sqlite_error)?;
    for migration in SQLITE_MIGRATIONS {
        apply(conn, migration)?;
    }
    check_columns(conn)
}

/// One migration in its own `BEGIN IMMEDIATE`, unless the ledger has it.
fn apply(conn: &Connection, migration: &Migration) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(sqlite_error)?;
    match apply_in_transaction(conn, migration) {
        Ok(()) => conn.execute_batch("COMMIT").map_err(sqlite_error),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Whether a feature's tables exist: its `installed.sql` answers one bool
/// (a database may never have used the feature).
pub fn feature_installed(conn: &Connection, installed_sql: &str) -> Result<bool> {
    conn.query_row(installed_sql, [], |row| row.get(0))
        .map_err(sqlite_error)
}

/// The migration and its ledger row, unless the ledger has it, inside a
/// transaction that holds the write lock already: a feature's tables are
/// installed so inside the writer's transaction, and two processes
/// installing at once create them and their ledger row once.
pub fn apply_in_transaction(conn: &Connection, migration: &Migration) -> Result<()> {
    let done: bool = conn
        .query_row(
            LEDGER_HAS,
            rusqlite::named_params! {":name": migration.name},
            |row| row.get(0),
        )
        .map_err(sqlite_error)?;
    if !done {
        conn.execute_batch(migration.sql).map_err(sqlite_error)?;
        conn.execute(
            LEDGER_RECORD,
            rusqlite::named_params! {":name": migration.name, ":now": now_ms()},
        )
        .map_err(sqlite_error)?;
    }
    Ok(())
}

/// Whether the ledger has the migration `:name`.
pub(super) const LEDGER_HAS: &str =
    "select exists (select 1 from cairnq_migrations where name = :name)";
/// The ledger row of the migration `:name`, applied `:now`.
pub(super) const LEDGER_RECORD: &str =
    "insert into cairnq_migrations (name, applied_at_ms) values (:name, :now)";

/// Rows are read by position, so the table must have the protocol's columns in
/// the protocol's order.
fn check_columns(conn: &Connection) -> Result<()> {
    let mut stmt = conn
        .prepare("select name from pragma_table_info('cairnq_tasks') order by cid")
        .map_err(sqlite_error)?;
    let names: Vec<String> = stmt
        .query_map([], |row| row.get(0))
        .map_err(sqlite_error)?
        .collect::<rusqlite::Result<_>>()
        .map_err(sqlite_error)?;
    if names.len() < COLUMNS.len() || names.iter().zip(COLUMNS).any(|(a, b)| a != b) {
        return Err(Error::Connection(format!(
            "cairnq_tasks does not have the protocol's columns (found {})",
            names.join(", ")
        )));
    }
    Ok(())
}

/// Whether `sqlite_stat1` has rows for cairnq_tasks.
fn has_planner_stats(conn: &Connection) -> bool {
    conn.query_row(
        "select exists (select 1 from sqlite_master where type = 'table' and name = 'sqlite_stat1')",
        [],
        |row| row.get::<_, bool>(0),
    )
    .unwrap_or(false)
        && conn
            .query_row(
                "select exists (select 1 from sqlite_stat1 where tbl = 'cairnq_tasks')",
                [],
                |row| row.get::<_, bool>(0),
            )
            .unwrap_or(false)
}

/// Planner statistics on open (docs/protocol.md, "Connection setup (SQLite)"):
/// only a table never analyzed is analyzed now, which is cheap while the file
/// is new. Known statistics wait for the writer's periodic refresh, so opening
/// a large file scans nothing (a refresh costs tens of ms at 200 000 rows).
pub fn analyze_if_never_analyzed(conn: &Connection) {
    if !has_planner_stats(conn) {
        let _ = conn.execute_batch("ANALYZE cairnq_tasks");
    }
}

/// Best-effort planner statistics for cairnq_tasks; contention is ignored.
pub fn refresh_planner_stats(conn: &Connection) {
    let sql = if has_planner_stats(conn) {
        "PRAGMA optimize"
    } else {
        "ANALYZE cairnq_tasks"
    };
    let _ = conn.execute_batch(sql);
}
