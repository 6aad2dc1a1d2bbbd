//! The draws of one poll (docs/api.md, "Poll loop") and how their rows become
//! calls (docs/api.md, "Dispatch and settlement"). Runs inside the claim
//! transaction, so it only computes.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use super::flow::FlowGate;
use super::registry::{ClaimSources, Source};
use crate::store::{ClaimPlan, Draw};
use crate::task::Task;

/// Calls in flight per name and per resource, as of the poll's start.
#[derive(Clone, Debug, Default)]
pub(crate) struct Usage {
    pub by_name: HashMap<String, i64>,
    pub by_resource: HashMap<String, i64>,
}

pub(crate) struct Limits {
    /// Row cap per draw (`claimBatch`), converted to calls per source.
    pub claim_batch: Option<f64>,
    pub resources: Arc<HashMap<String, i64>>,
    /// Names whose rate window is full: their draws wait until it opens.
    pub flow_gate: Arc<FlowGate>,
}

pub(crate) struct PollPlan {
    claim_sources: Arc<ClaimSources>,
    limits: Limits,
    usage: Usage,
    /// Source indices still to visit, in rotated order.
    order: std::vec::IntoIter<usize>,
    /// The source whose draw is in the store's hands.
    drawing: Option<usize>,
    left: i64,
    taken: HashMap<String, i64>,
    /// The calls drawn so far, each one chunk of rows of a single name.
    pub calls: Vec<Vec<Task>>,
}

impl PollPlan {
    /// `free` call slots; sources are visited starting at `start`.
    pub fn new(
        claim_sources: Arc<ClaimSources>,
        start: usize,
        free: i64,
        usage: Usage,
        limits: Limits,
    ) -> PollPlan {
        let count = claim_sources.sources.len();
        let order: Vec<usize> = (0..count).map(|i| (start + i) % count).collect();
        PollPlan {
            claim_sources,
            limits,
            usage,
            order: order.into_iter(),
            drawing: None,
            left: free,
            taken: HashMap::new(),
            calls: Vec::new(),
        }
    }

    /// Whether the draws got every call the plan asked for (a backlog).
    pub fn filled(&self) -> bool {
        self.left <= 0
    }

    /// Calls this source may still start in this poll, ignoring `left`.
    fn ceiling(&self, source: &Source) -> Option<i64> {
        let by_claim_batch = self
            .limits
            .claim_batch
            .map(|rows| ((rows / source.batch as f64).floor() as i64).max(1));
        let by_concurrency = source.concurrency.map(|cap| {
            let running = self.usage.by_name.get(&source.names[0]).copied();
            (cap - running.unwrap_or(0)).max(0)
        });
        let by_resource = source.resource.as_ref().map(|resource| {
            let capacity = self.limits.resources.get(resource).copied().unwrap_or(0);
            let running = self.usage.by_resource.get(resource).copied().unwrap_or(0);
            let taken = self.taken.get(resource).copied().unwrap_or(0);
            (capacity - running - taken).max(0)
        });
        [by_claim_batch, by_concurrency, by_resource]
            .into_iter()
            .flatten()
            .min()
    }
}

impl ClaimPlan for PollPlan {
    fn dead_letter_of(&self, name: &str) -> Option<&str> {
        self.claim_sources
            .handlers
            .get(name)?
            .dead_letter
            .as_deref()
    }

    fn next_draw(&mut self) -> Option<Draw> {
        while self.left > 0 {
            let index = self.order.next()?;
            let source = &self.claim_sources.sources[index];
            let quota = self.ceiling(source).unwrap_or(self.left).min(self.left);
            if quota <= 0 || (source.flow && self.limits.flow_gate.is_closed(&source.names[0])) {
                continue;
            }
            self.drawing = Some(index);
            return Some(Draw {
                names: Some(source.names.clone()),
                limit: source.batch.saturating_mul(quota),
                flow: source.flow,
            });
        }
        None
    }

    fn accept(&mut self, rows: Vec<Task>) {
        let index = self.drawing.take().expect("rows answer a draw");
        if rows.is_empty() {
            return;
        }
        let source = &self.claim_sources.sources[index];
        let calls = into_calls(rows, source.batch as usize);
        let count = calls.len() as i64;
        self.left -= count;
        if let Some(resource) = &source.resource {
            *self.taken.entry(resource.clone()).or_default() += count;
        }
        self.calls.extend(calls);
    }

    fn rate_limited(&mut self, retry_in_ms: i64) {
        if let Some(index) = self.drawing {
            let name = &self.claim_sources.sources[index].names[0];
            self.limits.flow_gate.close(name, retry_in_ms);
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

/// Rows grouped by name in first-appearance order, each group chunked into
/// calls of at most `batch` rows (never padded).
fn into_calls(rows: Vec<Task>, batch: usize) -> Vec<Vec<Task>> {
    let mut groups: Vec<Vec<Task>> = Vec::new();
    for row in rows {
        match groups.iter_mut().find(|g| g[0].name == row.name) {
            Some(group) => group.push(row),
            None => groups.push(vec![row]),
        }
    }
    let mut calls = Vec::new();
    for group in groups {
        let mut rows = group.into_iter().peekable();
        while rows.peek().is_some() {
            calls.push(rows.by_ref().take(batch.max(1)).collect());
        }
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::tests::sample;
    use crate::worker::registry::{Handler, Registry};

    fn row(name: &str, id: usize) -> Task {
        Task {
            id: format!("task_{id}"),
            name: name.into(),
            ..sample()
        }
    }

    /// A registration: name, batch, concurrency, resource.
    type Spec<'a> = (&'a str, Option<i64>, Option<i64>, Option<&'a str>);

    fn claim_sources(specs: &[Spec<'_>]) -> Arc<ClaimSources> {
        let mut registry = Registry::default();
        for (name, batch, concurrency, resource) in specs {
            registry
                .register(Handler {
                    name: name.to_string(),
                    batch: *batch,
                    concurrency: *concurrency,
                    resource: resource.map(Into::into),
                    flow: None,
                    timeout: None,
                    retry: Default::default(),
                    dead_letter: None,
                })
                .unwrap();
        }
        registry.claim_sources()
    }

    fn limits(claim_batch: Option<f64>, resources: &[(&str, i64)]) -> Limits {
        Limits {
            claim_batch,
            resources: Arc::new(resources.iter().map(|(n, c)| (n.to_string(), *c)).collect()),
            flow_gate: Arc::default(),
        }
    }

    /// Runs the plan against a backlog of `available` rows per name and
    /// returns the draws it asked for.
    fn drive(plan: &mut PollPlan, available: &HashMap<&str, usize>) -> Vec<(Vec<String>, i64)> {
        let mut draws = Vec::new();
        let mut next_id = 0;
        while let Some(draw) = plan.next_draw() {
            let names = draw.names.clone().unwrap();
            let mut rows = Vec::new();
            for name in &names {
                let have = available.get(name.as_str()).copied().unwrap_or(0);
                for _ in 0..have {
                    if rows.len() as i64 == draw.limit {
                        break;
                    }
                    next_id += 1;
                    rows.push(row(name, next_id));
                }
            }
            draws.push((names, draw.limit));
            plan.accept(rows);
        }
        draws
    }

    fn sizes(plan: &PollPlan) -> Vec<(String, usize)> {
        plan.calls
            .iter()
            .map(|c| (c[0].name.clone(), c.len()))
            .collect()
    }

    #[test]
    fn rows_are_grouped_by_name_and_chunked_without_padding() {
        let rows = vec![
            row("a", 1),
            row("b", 2),
            row("a", 3),
            row("a", 4),
            row("b", 5),
        ];
        let calls = into_calls(rows, 2);
        let ids: Vec<Vec<&str>> = calls
            .iter()
            .map(|c| c.iter().map(|t| t.id.as_str()).collect())
            .collect();
        assert_eq!(
            ids,
            [
                vec!["task_1", "task_3"],
                vec!["task_4"],
                vec!["task_2", "task_5"]
            ]
        );
    }

    #[test]
    fn claim_batch_converts_rows_to_calls_never_below_one() {
        let s = claim_sources(&[("big", Some(4), None, None), ("one", None, None, None)]);
        let mut plan = PollPlan::new(s, 0, 10, Usage::default(), limits(Some(2.0), &[]));
        let draws = drive(&mut plan, &HashMap::from([("big", 9), ("one", 9)]));
        assert_eq!(
            draws,
            [(vec!["big".to_string()], 4), (vec!["one".to_string()], 2)]
        );
        assert_eq!(
            sizes(&plan),
            [("big".into(), 4), ("one".into(), 1), ("one".into(), 1)]
        );
    }

    #[test]
    fn the_call_budget_is_charged_only_for_calls_drawn() {
        let s = claim_sources(&[("a", None, Some(5), None), ("b", None, Some(5), None)]);
        let mut plan = PollPlan::new(s, 0, 3, Usage::default(), limits(None, &[]));
        let draws = drive(&mut plan, &HashMap::from([("a", 1), ("b", 9)]));
        assert_eq!(
            draws,
            [(vec!["a".to_string()], 3), (vec!["b".to_string()], 2)]
        );
        assert_eq!(plan.calls.len(), 3);
    }

    #[test]
    fn rotation_starts_at_the_given_source() {
        let s = claim_sources(&[("a", None, Some(9), None), ("b", None, Some(9), None)]);
        let mut plan = PollPlan::new(s, 1, 1, Usage::default(), limits(None, &[]));
        let draws = drive(&mut plan, &HashMap::from([("a", 9), ("b", 9)]));
        assert_eq!(draws, [(vec!["b".to_string()], 1)]);
    }

    #[test]
    fn per_name_concurrency_and_resources_bind_with_the_tighter_winning() {
        let s = claim_sources(&[
            ("a", None, Some(3), Some("gpu")),
            ("b", None, None, Some("gpu")),
            ("c", None, Some(2), None),
        ]);
        let usage = Usage {
            by_name: HashMap::from([("a".to_string(), 1), ("c".to_string(), 2)]),
            by_resource: HashMap::from([("gpu".to_string(), 1)]),
        };
        let mut plan = PollPlan::new(s, 0, 10, usage, limits(None, &[("gpu", 3)]));
        let draws = drive(&mut plan, &HashMap::from([("a", 9), ("b", 9), ("c", 9)]));
        // a: min(3-1, 3-1) = 2; b: the resource has 3-1-2 = 0 left; c: at its cap.
        assert_eq!(draws, [(vec!["a".to_string()], 2)]);
    }
}
