//! The poll loop's decisions (docs/api.md, "Poll loop"), apart from its
//! waits and writes: what the loop does next is a function of what it
//! remembers between turns (`PollState`) and what it reads at the top of a
//! turn (`Reading`).
//!
//! While the queue has a backlog (the last poll got every call it asked
//! for), each poll writes the completions that queued since the last one
//! and claims for the free slots, in one transaction, and skips the probe.
//! Without a backlog the completions commit on their own first, so whoever
//! waits on them (a `call()`) hears at once rather than after a claim, and
//! the next poll probes before it takes the write lock: a claim that got
//! fewer calls than it asked for left nothing behind. (A backend that writes
//! completions apart, Postgres, has none to pair: `completions.rs` writes
//! them beside the loop, so its polls never wait for a flush.)
//!
//! While the queue has a backlog, handlers are short (recent calls took
//! under `SHORT_TASK` a task on average, so a batch call of many short tasks
//! counts as short) and the registrations set no per-name,
//! resource or byte limits, a poll also claims one round ahead: up to
//! `slots` calls held until slots free up. The handler thread then starts
//! them as soon as earlier handlers return (`start_ready`), while the next
//! poll writes those completions and claims the following round: handlers
//! and database work overlap instead of taking turns. A held task waits a
//! few milliseconds at most; it is leased and heartbeated like a running
//! one, and runs even after `stop()`.
//!
//! Where claiming ahead is possible, a run's first claim takes one call and
//! the next poll follows at once for the other free slots: the first handler
//! starts one claim sooner, runs while the rest are claimed, and tells how
//! long calls take before anything is claimed ahead. (Under a byte budget
//! the first draw's size is what runs: it stays whole.)

/// What the loop remembers between turns.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct PollState {
    /// The last poll got every call it asked for: the queue has a backlog.
    backlog: bool,
    /// Some claim of this run has returned calls.
    claimed_any: bool,
    /// The registration the next claim starts its rotation at.
    rotation: usize,
}

/// What the loop reads at the top of a turn.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading {
    /// The run's slots (its concurrency).
    pub slots: i64,
    /// Calls charged a slot now.
    pub in_flight: i64,
    /// Calls claimed ahead, waiting for a slot.
    pub held: usize,
    /// `maxInFlightBytes` is spent.
    pub over_budget: bool,
    /// The registrations to claim for (`ClaimSources::sources`).
    pub sources: usize,
    /// No registration or option limits which slot a call may take.
    pub may_claim_ahead: bool,
    /// Recent calls were short (`RunState::calls_are_short`).
    pub calls_are_short: bool,
    /// Completions are queued, not yet written.
    pub completions_waiting: bool,
    /// Every queue of the worker is paused (docs/api.md, "Queue pauses").
    pub every_queue_paused: bool,
}

/// The loop's next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Every slot is taken (or the byte budget spent) and nothing may be
    /// claimed ahead: write the queued completions, or else wait until a
    /// call ends.
    SettleOrWait,
    /// Nothing is registered, or every queue is paused: write the queued
    /// completions, then sleep.
    SettleThenIdle,
    /// No backlog and completions are queued: they commit on their own,
    /// before any claim.
    Settle,
    /// One poll: the queued completions and a claim of up to `limit` calls,
    /// its rotation starting at registration `start`; the probe first
    /// unless the queue has a backlog.
    Claim {
        start: usize,
        limit: i64,
        probe: bool,
    },
}

/// How a claim ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claimed {
    /// The poll failed.
    Failed,
    /// Nothing was claimable.
    Nothing,
    /// Calls were claimed; `filled`: as many as the poll asked for.
    Calls { filled: bool },
}

impl PollState {
    /// The next step after `reading`; a claim moves the rotation on.
    pub(super) fn next(&mut self, reading: &Reading) -> Next {
        let free = (reading.slots - reading.in_flight).max(0);
        let ahead = if self.backlog
            && reading.held == 0
            && reading.calls_are_short
            && reading.may_claim_ahead
        {
            reading.slots
        } else {
            0
        };
        if reading.in_flight > 0 && (free == 0 || reading.over_budget) && ahead == 0 {
            return Next::SettleOrWait;
        }
        if reading.sources == 0 || reading.every_queue_paused {
            return Next::SettleThenIdle;
        }
        if !self.backlog && reading.completions_waiting {
            return Next::Settle;
        }
        let start = self.rotation % reading.sources;
        self.rotation = (start + 1) % reading.sources;
        let limit = if self.claimed_any || !reading.may_claim_ahead {
            free + ahead
        } else {
            free.min(1)
        };
        Next::Claim {
            start,
            limit,
            probe: !self.backlog,
        }
    }

    /// What the last claim tells about the queue.
    pub(super) fn claimed(&mut self, outcome: Claimed) {
        match outcome {
            Claimed::Failed | Claimed::Nothing => self.backlog = false,
            Claimed::Calls { filled } => {
                self.claimed_any = true;
                self.backlog = filled;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four idle slots, one registration, calls short, no limits.
    fn idle() -> Reading {
        Reading {
            slots: 4,
            in_flight: 0,
            held: 0,
            over_budget: false,
            sources: 1,
            may_claim_ahead: true,
            calls_are_short: true,
            completions_waiting: false,
            every_queue_paused: false,
        }
    }

    fn claim(start: usize, limit: i64, probe: bool) -> Next {
        Next::Claim {
            start,
            limit,
            probe,
        }
    }

    #[test]
    fn a_runs_first_claim_takes_one_call_then_fills_the_free_slots() {
        let mut state = PollState::default();
        assert_eq!(state.next(&idle()), claim(0, 1, true));
        state.claimed(Claimed::Calls { filled: true });
        let one_running = Reading {
            in_flight: 1,
            ..idle()
        };
        // A backlog and short calls: the free slots plus a round ahead.
        assert_eq!(state.next(&one_running), claim(0, 3 + 4, false));
    }

    #[test]
    fn without_room_to_claim_ahead_the_first_claim_fills_every_free_slot() {
        let mut state = PollState::default();
        let limited = Reading {
            may_claim_ahead: false,
            ..idle()
        };
        assert_eq!(state.next(&limited), claim(0, 4, true));
    }

    #[test]
    fn with_every_queue_paused_nothing_is_claimed_until_a_resume() {
        let mut state = PollState::default();
        state.claimed(Claimed::Calls { filled: true });
        let paused = Reading {
            every_queue_paused: true,
            completions_waiting: true,
            ..idle()
        };
        assert_eq!(state.next(&paused), Next::SettleThenIdle);
        let resumed = Reading {
            every_queue_paused: false,
            ..paused
        };
        assert_eq!(state.next(&resumed), claim(0, 4 + 4, false));
    }

    #[test]
    fn a_backlog_claims_without_probing_and_pairs_the_completions() {
        let mut state = PollState::default();
        state.claimed(Claimed::Calls { filled: true });
        let reading = Reading {
            completions_waiting: true,
            calls_are_short: false,
            ..idle()
        };
        assert_eq!(state.next(&reading), claim(0, 4, false));
    }

    #[test]
    fn without_a_backlog_completions_commit_before_any_claim() {
        let mut state = PollState::default();
        state.claimed(Claimed::Calls { filled: false });
        let reading = Reading {
            completions_waiting: true,
            ..idle()
        };
        assert_eq!(state.next(&reading), Next::Settle);
        let settled = Reading {
            completions_waiting: false,
            ..reading
        };
        assert_eq!(state.next(&settled), claim(0, 4, true));
    }

    #[test]
    fn full_slots_settle_or_wait_unless_a_round_may_be_claimed_ahead() {
        let mut state = PollState::default();
        let full = Reading {
            in_flight: 4,
            ..idle()
        };
        assert_eq!(state.next(&full), Next::SettleOrWait);
        state.claimed(Claimed::Calls { filled: true });
        assert_eq!(state.next(&full), claim(0, 4, false));
        // Calls already held, long calls or limits: no second round ahead.
        for reading in [
            Reading { held: 2, ..full },
            Reading {
                calls_are_short: false,
                ..full
            },
            Reading {
                may_claim_ahead: false,
                ..full
            },
        ] {
            assert_eq!(state.clone().next(&reading), Next::SettleOrWait);
        }
    }

    #[test]
    fn a_spent_byte_budget_waits_while_calls_run() {
        let mut state = PollState::default();
        let spent = Reading {
            in_flight: 1,
            over_budget: true,
            may_claim_ahead: false,
            ..idle()
        };
        assert_eq!(state.next(&spent), Next::SettleOrWait);
        // With nothing in flight the budget is free again: claim.
        let drained = Reading {
            in_flight: 0,
            ..spent
        };
        assert_eq!(state.next(&drained), claim(0, 4, true));
    }

    #[test]
    fn nothing_registered_settles_then_idles() {
        let mut state = PollState::default();
        let unregistered = Reading {
            sources: 0,
            completions_waiting: true,
            ..idle()
        };
        assert_eq!(state.next(&unregistered), Next::SettleThenIdle);
    }

    #[test]
    fn claims_rotate_over_the_registrations() {
        let mut state = PollState::default();
        let three = Reading {
            sources: 3,
            may_claim_ahead: false,
            ..idle()
        };
        let starts: Vec<_> = (0..4)
            .map(|_| match state.next(&three) {
                Next::Claim { start, .. } => start,
                other => panic!("expected a claim, got {other:?}"),
            })
            .collect();
        assert_eq!(starts, [0, 1, 2, 0]);
        // A registration removed meanwhile: the rotation wraps into range.
        let one = Reading {
            sources: 1,
            ..three
        };
        assert_eq!(state.next(&one), claim(0, 4, true));
    }

    #[test]
    fn a_failed_or_empty_claim_ends_the_backlog() {
        for outcome in [Claimed::Failed, Claimed::Nothing] {
            let mut state = PollState::default();
            state.claimed(Claimed::Calls { filled: true });
            state.claimed(outcome);
            // The probe comes back, and a claim once made never asks for one call again.
            assert_eq!(state.next(&idle()), claim(0, 4, true));
        }
    }
}
