//! Opening a file: the writer (migrated and version-checked, or checked to
//! hold a cairnq database), the readers and the checkpointer's connection.

use std::time::Duration;

use rusqlite::Connection;

use super::conn::{self, is_in_memory, Access};
use super::engine::{Engine, OnCommit};
use crate::error::Result;
use crate::store::backend::OpenMode;

/// Reader connections per file: enough for reads to overlap a probe.
const READERS: usize = 2;

/// Open the writer (which migrates and checks the version, or with
/// `OpenMode::Existing` first makes sure there is a cairnq database to open),
/// then the readers.
pub(super) fn open_engine(
    path: &str,
    busy: Duration,
    mode: OpenMode,
    on_commit: OnCommit,
) -> Result<Engine> {
    if mode == OpenMode::MigrateOwn {
        conn::check_not_foreign(path, busy)?;
    }
    let (writer, access) = match mode {
        OpenMode::Migrate | OpenMode::MigrateOwn => {
            let writer = conn::open(path, busy)?;
            conn::check_protocol_version(&writer, false)?;
            conn::migrate(&writer)?;
            conn::analyze_if_never_analyzed(&writer);
            (writer, Access::ReadWrite)
        }
        // A file this process may only read still serves every read.
        OpenMode::Existing => match conn::check_existing(path, busy)? {
            Access::ReadWrite => match conn::open(path, busy) {
                Err(err) if conn::is_read_only(&err) && !path.starts_with("file:") => (
                    conn::open_as(path, busy, Access::ReadOnly)?,
                    Access::ReadOnly,
                ),
                opened => (opened?, Access::ReadWrite),
            },
            Access::ReadOnly => (
                conn::open_as(path, busy, Access::ReadOnly)?,
                Access::ReadOnly,
            ),
        },
    };
    conn::check_protocol_version(&writer, true)?;
    let file_backed = !is_in_memory(path);
    let open_reader = |busy: Duration| -> Result<Connection> {
        let reader = conn::open_as(path, busy, access)?;
        reader
            .execute_batch("PRAGMA query_only = ON")
            .map_err(conn::sqlite_error)?;
        Ok(reader)
    };
    let (readers, inline, checkpointer) = if file_backed {
        let readers = (0..READERS)
            .map(|_| open_reader(busy))
            .collect::<Result<Vec<_>>>()?;
        // Nothing to checkpoint in a file this process cannot write.
        let checkpointer = match access {
            Access::ReadWrite => Some(conn::open(path, busy)?),
            Access::ReadOnly => None,
        };
        (readers, Some(open_reader(Duration::ZERO)?), checkpointer)
    } else {
        (Vec::new(), None, None)
    };
    Ok(Engine::start(
        writer,
        busy,
        readers,
        inline,
        checkpointer,
        on_commit,
    ))
}
