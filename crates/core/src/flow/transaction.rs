//! A dialect's transaction as flow control uses it: each method runs the
//! statements of one step of a declaration or of a flow draw, and answers
//! what they read; what to run next is decided once, in `declare` and
//! `draw`. The SQLite backend's methods run on the writer's connection and
//! never wait (its futures are ready at their first poll); the Postgres
//! backend's run over its transport.

use super::draw::{Chunk, GroupLimits, WindowCount};
use super::pick::{GroupCounts, Scanned};
use super::{Budget, Declaration, Declared, KeyDeclared, RateLimit};
use crate::error::Result;
use crate::store::backend_values::ClaimRequest;
use crate::store::bad_rows::BadRow;
use crate::task::Task;

/// A stored declaration, or the `BadRow` another program's write made of it.
pub type StoredDeclaration = Option<std::result::Result<Declared, BadRow>>;

/// A key's stored rate, or the `BadRow` another program's write made of it.
pub type StoredKey = Option<std::result::Result<KeyDeclared, BadRow>>;

// Not `Send`-bound: SQLite's connection is not `Sync`, and the core drives
// its futures on the writer's thread without a runtime.
#[allow(async_fn_in_trait)]
pub trait FlowTransaction {
    /// Create the flow-control tables unless the ledger records them, as a
    /// migration is applied, so two processes declaring at once create them
    /// and their ledger row once.
    async fn install(&mut self) -> Result<()>;
    /// The stored declaration of `name`.
    async fn declared(&mut self, name: &str) -> Result<StoredDeclaration>;
    /// Store `declaration` as `worker_id`'s, replacing the stored one.
    async fn declare(&mut self, worker_id: &str, declaration: &Declaration) -> Result<()>;
    /// The stored rate of `key`.
    async fn declared_key(&mut self, key: &str) -> Result<StoredKey>;
    /// Store `rate` as `key`'s, `worker_id`'s, replacing the stored one.
    async fn declare_key(&mut self, worker_id: &str, key: &str, rate: RateLimit) -> Result<()>;

    /// A draw's first step: the stored declaration of `name` and the clock
    /// the draw runs by; a dialect that counts a group only under its lock
    /// locks the groups of `first`, the draw's first chunk of `queue`.
    async fn start_draw(
        &mut self,
        queue: &str,
        name: &str,
        first: Chunk,
    ) -> Result<(StoredDeclaration, i64)>;
    /// Whether this transaction may start tasks drawing from `budget` under
    /// a name-wide rate: `false` while another claimer is starting them.
    async fn lock_budget(&mut self, budget: &Budget) -> Result<bool>;
    /// The starts of `budget` after `since`, per group, older ones dropped.
    async fn window(&mut self, budget: &Budget, since: i64) -> Result<Vec<WindowCount>>;
    /// Drop the starts of `budget` no window after `since` reaches.
    async fn prune(&mut self, budget: &Budget, since: i64) -> Result<()>;
    /// Before every chunk but the draw's first, under group limits: lock the
    /// groups `chunk` of `queue` may claim, where counting needs the lock.
    async fn lock_groups(&mut self, queue: &str, name: &str, chunk: Chunk) -> Result<()>;
    /// The first `chunk.rows` due rows of `name` on `queue`, in claim order,
    /// that this transaction may claim, and what counts against their groups
    /// under `groups` (nothing without group limits): their running rows of
    /// `name`, their starts in `budget`.
    #[allow(clippy::too_many_arguments)]
    async fn scan(
        &mut self,
        queue: &str,
        name: &str,
        budget: &Budget,
        now: i64,
        chunk: Chunk,
        groups: &GroupLimits,
    ) -> Result<(Vec<Scanned>, GroupCounts)>;
    /// Claim `ids`, rows `scan` answered, for `request`'s worker (any no
    /// longer queued left out), recording their starts in `budget` under
    /// `rate`.
    async fn claim(
        &mut self,
        request: &ClaimRequest,
        budget: &Budget,
        ids: &[String],
        now: i64,
        rate: Option<RateLimit>,
    ) -> Result<Vec<Task>>;
    /// The due rows of `name` left on `queue`, counted up to `bound`.
    async fn due_count(&mut self, queue: &str, name: &str, now: i64, bound: i64) -> Result<i64>;
}
