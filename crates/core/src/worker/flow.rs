//! A worker's side of flow control (docs/api.md, "Flow control"): it declares
//! its registrations' limits before it claims for them (logging, once, each
//! declaration that replaced a different one), and remembers per name until
//! when a full rate window keeps the name from starting anything, so its
//! polls skip that draw meanwhile and its idle sleep ends when the window
//! opens.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::registry::ClaimSources;
use crate::error::Result;
use crate::flow::FlowLimits;
use crate::store::Store;

/// Until when each rate-limited name can start nothing.
#[derive(Debug, Default)]
pub(crate) struct FlowGate {
    closed_until: Mutex<HashMap<String, Instant>>,
}

impl FlowGate {
    fn closed(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.closed_until.lock().expect("flow gate")
    }

    /// Whether `name`'s window is still full.
    pub fn is_closed(&self, name: &str) -> bool {
        self.closed()
            .get(name)
            .is_some_and(|until| *until > Instant::now())
    }

    /// `name`'s window opens in `retry_in_ms`.
    pub fn close(&self, name: &str, retry_in_ms: i64) {
        let until = Instant::now() + Duration::from_millis(retry_in_ms.max(0) as u64);
        self.closed().insert(name.to_string(), until);
    }

    /// `names` without those whose window is still full.
    pub fn open_names(&self, names: &[String]) -> Vec<String> {
        let now = Instant::now();
        let closed = self.closed();
        names
            .iter()
            .filter(|name| closed.get(*name).is_none_or(|until| *until <= now))
            .cloned()
            .collect()
    }

    /// An idle sleep of `idle`, cut to when the first closed window opens.
    pub fn sleep_bound(&self, idle: Duration) -> Duration {
        let now = Instant::now();
        let mut closed = self.closed();
        closed.retain(|_, until| *until > now);
        closed
            .values()
            .map(|until| *until - now)
            .fold(idle, Duration::min)
    }
}

/// What this worker has declared, and its gate.
#[derive(Debug, Default)]
pub(crate) struct FlowState {
    declared: tokio::sync::Mutex<HashMap<String, FlowLimits>>,
    pub gate: std::sync::Arc<FlowGate>,
}

impl FlowState {
    /// Declare the registrations' limits this worker has not declared yet (or
    /// declared otherwise); `notice` gets each declaration that replaced
    /// another worker's different one. Nothing to declare costs no statement.
    pub async fn declare(
        &self,
        store: &Store,
        worker_id: &str,
        claim_sources: &ClaimSources,
        notice: impl Fn(String),
    ) -> Result<()> {
        let mut declared = self.declared.lock().await;
        let pending: Vec<_> = claim_sources
            .declarations
            .iter()
            .filter(|d| declared.get(&d.name) != Some(&d.limits))
            .cloned()
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        let replaced = store
            .backend()
            .declare_flow(worker_id.to_string(), pending.clone())
            .await?;
        for declaration in pending {
            declared.insert(declaration.name, declaration.limits);
        }
        // Replacing its own earlier declaration (a registration changed while
        // running) is no disagreement between workers.
        for replaced in replaced.iter().filter(|r| r.previous_by() != worker_id) {
            notice(replaced.notice());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_window_bounds_the_idle_sleep_until_it_opens() {
        let gate = FlowGate::default();
        let idle = Duration::from_millis(500);
        assert_eq!(gate.sleep_bound(idle), idle);
        gate.close("a", 100);
        assert!(gate.is_closed("a"));
        assert!(!gate.is_closed("b"));
        let names = ["a".to_string(), "b".to_string()];
        assert_eq!(gate.open_names(&names), ["b"]);
        assert!(gate.sleep_bound(idle) <= Duration::from_millis(100));
        gate.close("a", 0);
        assert!(!gate.is_closed("a"));
        assert_eq!(gate.sleep_bound(idle), idle);
    }
}
