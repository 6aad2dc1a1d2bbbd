//! What a flow draw claims (docs/protocol.md, "Flow control tables"): the
//! decisions both dialects share, which `claim` carries out. In the claim
//! transaction, the name's limits and, under a name-wide rate, its window
//! (`name_allowance` says how many the draw may start); then per queue it
//! claims in chunks, each reading the first rows of the queue in claim order
//! and claiming those whose group has room, every group's first before any
//! group's second (`pick`). `Chunks` says how many rows each chunk reads and
//! claims, and when the queue has no more to give.

use super::{FlowLimits, RateLimit};

/// The fewest rows a chunk reads.
const MIN_ROWS: i64 = 16;

/// How much further each chunk after the first reads than the one before.
const GROWTH: i64 = 4;

/// The starts of one group (`""`: the name as a whole, or no group) inside
/// the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowCount {
    pub group: String,
    pub count: i64,
    pub oldest_ms: i64,
}

/// How many tasks a name-wide rate lets a draw start now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowance {
    Starts(i64),
    /// None until the oldest start in the window leaves it, in `retry_in_ms`.
    /// Starts are only ever added, so no other process can open it sooner.
    Full {
        retry_in_ms: i64,
    },
}

/// The window's lower bound at `now`: starts after it count.
pub fn window_since(rate: &RateLimit, now: i64) -> i64 {
    now - rate.per_ms
}

/// `rate` over the name as a whole (the window's `""` row) at `now`.
pub fn name_allowance(rate: &RateLimit, window: &[WindowCount], now: i64) -> Allowance {
    let whole = window.iter().find(|w| w.group.is_empty());
    let count = whole.map_or(0, |w| w.count);
    if count < rate.max {
        return Allowance::Starts(rate.max - count);
    }
    let oldest = whole.map_or(now, |w| w.oldest_ms);
    Allowance::Full {
        retry_in_ms: (oldest + rate.per_ms - now).max(1),
    }
}

/// The per-group limits a chunk statement binds: `concurrency` (null: none),
/// `rate_max` (null: no per-group rate) and the window's lower bound `since`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLimits {
    pub concurrency: Option<i64>,
    pub rate_max: Option<i64>,
    pub since: i64,
}

impl GroupLimits {
    /// `limits`' per-group ones at `now`.
    pub fn of(limits: &FlowLimits, now: i64) -> GroupLimits {
        let rate = limits.group_rate();
        GroupLimits {
            concurrency: limits.group_concurrency,
            rate_max: rate.map(|r| r.max),
            since: rate.map_or(0, |r| window_since(&r, now)),
        }
    }

    /// Whether any group is limited, so a chunk may pass rows over.
    pub fn any(&self) -> bool {
        self.concurrency.is_some() || self.rate_max.is_some()
    }

    /// Whether `group`'s rows are limited: a per-group rate limits every row
    /// (the tasks without a group, `""`, being one group), a group
    /// concurrency only grouped ones.
    pub fn limits(&self, group: &str) -> bool {
        self.rate_max.is_some() || (self.concurrency.is_some() && !group.is_empty())
    }
}

/// One chunk: read the first `rows` due rows of the queue, claim at most
/// `limit` of them. `rows` is a power of two, so a dialect that bakes it into
/// its statement's text (`protocol::with_literal_limit`) has few texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub rows: i64,
    pub limit: i64,
}

impl Chunk {
    /// A queue's first chunk for a draw that still wants `want`.
    pub fn first(want: i64) -> Chunk {
        let want = want.max(0);
        Chunk {
            rows: at_least_a_power_of_two(want.saturating_mul(2).max(MIN_ROWS)),
            limit: want,
        }
    }
}

/// The least power of two not below `n` (`n` positive).
fn at_least_a_power_of_two(n: i64) -> i64 {
    u64::try_from(n)
        .ok()
        .and_then(|n| n.checked_next_power_of_two())
        .and_then(|n| i64::try_from(n).ok())
        .unwrap_or(i64::MAX)
}

/// The chunks of one flow draw, queue by queue. A chunk that claims fewer
/// than it asked for either read every due row of the queue or passed rows of
/// groups with no room over; a count of the due rows left tells which, and in
/// the second case the next chunk reads `GROWTH` times further, so a draw
/// reads past any number of blocked rows in a few statements (no head-of-line
/// blocking) while an unblocked queue costs one.
#[derive(Debug)]
pub struct Chunks {
    groups: GroupLimits,
    left: i64,
    rows: i64,
    /// The last chunk claimed fewer than it asked for; its due count pends.
    short: Option<i64>,
    queue_done: bool,
}

impl Chunks {
    /// A draw of up to `want` tasks under `groups`.
    pub fn new(groups: GroupLimits, want: i64) -> Chunks {
        Chunks {
            groups,
            left: want.max(0),
            rows: 0,
            short: None,
            queue_done: true,
        }
    }

    /// Start on the next queue of the claim.
    pub fn start_queue(&mut self) {
        self.rows = Chunk::first(self.left).rows;
        self.short = None;
        self.queue_done = false;
    }

    /// The next chunk of this queue, or `None`: the draw has what it wants or
    /// the queue has no more.
    pub fn next(&self) -> Option<Chunk> {
        if self.left <= 0 || self.queue_done || self.short.is_some() {
            return None;
        }
        Some(Chunk {
            rows: self.rows,
            limit: self.left,
        })
    }

    /// The last chunk claimed `count` rows; answers the bound to count the
    /// due rows left up to, when that count decides whether to read further.
    pub fn claimed(&mut self, count: i64) -> Option<i64> {
        let asked = self.left;
        self.left -= count;
        if count >= asked {
            return None;
        }
        if !self.groups.any() {
            // Nothing was passed over: the chunk read every due row.
            self.queue_done = true;
            return None;
        }
        // The rows the chunk read and left queued, and one more.
        let bound = self.rows - count + 1;
        self.short = Some(bound);
        Some(bound)
    }

    /// The due rows left, counted up to the bound `claimed` answered: more
    /// than the chunk read and left, and the next chunk reads further.
    pub fn due(&mut self, due: i64) {
        let Some(bound) = self.short.take() else {
            return;
        };
        if due < bound {
            self.queue_done = true;
        } else {
            self.rows = self.rows.saturating_mul(GROWTH);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BY_CONCURRENCY: GroupLimits = GroupLimits {
        concurrency: Some(1),
        rate_max: None,
        since: 0,
    };

    #[test]
    fn a_full_name_window_says_when_it_opens() {
        let rate = RateLimit {
            max: 2,
            per_ms: 1_000,
            per_group: false,
        };
        let window = |count| {
            vec![WindowCount {
                group: String::new(),
                count,
                oldest_ms: 10_300,
            }]
        };
        assert_eq!(name_allowance(&rate, &[], 11_000), Allowance::Starts(2));
        assert_eq!(
            name_allowance(&rate, &window(1), 11_000),
            Allowance::Starts(1)
        );
        assert_eq!(
            name_allowance(&rate, &window(2), 11_000),
            Allowance::Full { retry_in_ms: 300 }
        );
        assert_eq!(window_since(&rate, 11_000), 10_000);
    }

    #[test]
    fn group_limits_bind_what_the_name_declared() {
        let limits = FlowLimits {
            rate: Some(RateLimit {
                max: 5,
                per_ms: 1_000,
                per_group: true,
            }),
            rate_key: None,
            group_concurrency: Some(2),
        };
        let groups = GroupLimits::of(&limits, 11_000);
        assert_eq!(
            groups,
            GroupLimits {
                concurrency: Some(2),
                rate_max: Some(5),
                since: 10_000
            }
        );
        assert!(groups.any() && groups.limits(""));
        let name_rate = FlowLimits {
            rate: Some(RateLimit {
                per_group: false,
                ..limits.rate.unwrap()
            }),
            rate_key: None,
            group_concurrency: None,
        };
        let groups = GroupLimits::of(&name_rate, 11_000);
        assert!(!groups.any() && !groups.limits(""));
        assert!(!GroupLimits::of(&FlowLimits::default(), 0).any());
        assert!(!BY_CONCURRENCY.limits("") && BY_CONCURRENCY.limits("g"));
    }

    #[test]
    fn a_filled_chunk_is_the_draw() {
        let mut chunks = Chunks::new(BY_CONCURRENCY, 5);
        assert_eq!(chunks.next(), None);
        chunks.start_queue();
        assert_eq!(chunks.next(), Some(Chunk { rows: 16, limit: 5 }));
        assert_eq!(chunks.claimed(5), None);
        assert_eq!(chunks.next(), None);
        chunks.start_queue();
        assert_eq!(chunks.next(), None);
    }

    #[test]
    fn a_short_chunk_reads_further_while_rows_were_passed_over() {
        let mut chunks = Chunks::new(BY_CONCURRENCY, 20);
        chunks.start_queue();
        // Twice the want, rounded up to a power of two.
        assert_eq!(
            chunks.next(),
            Some(Chunk {
                rows: 64,
                limit: 20
            })
        );
        // 3 claimed out of 64 read: 61 left queued; a count up to 62.
        assert_eq!(chunks.claimed(3), Some(62));
        assert_eq!(chunks.next(), None);
        chunks.due(62);
        assert_eq!(
            chunks.next(),
            Some(Chunk {
                rows: 256,
                limit: 17
            })
        );
        assert_eq!(chunks.claimed(2), Some(255));
        // Only the rows the chunk read are left: the queue is done.
        chunks.due(254);
        assert_eq!(chunks.next(), None);
        // The next queue starts from the head again, for what is left.
        chunks.start_queue();
        assert_eq!(
            chunks.next(),
            Some(Chunk {
                rows: 32,
                limit: 15
            })
        );
    }

    #[test]
    fn without_group_limits_a_short_chunk_read_the_whole_queue() {
        let mut chunks = Chunks::new(GroupLimits::of(&FlowLimits::default(), 0), 10);
        chunks.start_queue();
        assert_eq!(chunks.claimed(4), None);
        assert_eq!(chunks.next(), None);
        chunks.start_queue();
        assert_eq!(chunks.next(), Some(Chunk { rows: 16, limit: 6 }));
    }
}
