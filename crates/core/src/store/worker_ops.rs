//! What workers do through the store (docs/protocol.md, "Claim",
//! "Heartbeat", "Complete / succeed / fail"): claim sessions and polls,
//! `store.claim`, heartbeats, cancel flags, progress and settlements.

use super::{ClaimPlan, ClaimRequest, Draw, HeldTask, Outcome, Store};
use crate::error::Result;
use crate::task::Task;

impl Store {
    /// A claim session (docs/protocol.md, "Claim"); `None` when the probe found
    /// nothing.
    pub async fn claim_session<P: ClaimPlan>(
        &self,
        request: ClaimRequest,
        plan: P,
    ) -> Result<Option<P>> {
        let plan = self.backend.claim_session(request, Box::new(plan)).await?;
        Ok(plan.map(downcast_plan))
    }

    /// A worker's poll (`Backend::poll`): its completions and its next claim
    /// in one transaction. Returns the ids completed and the plan after its
    /// draws (`None` when the probe found nothing).
    pub async fn poll<P: ClaimPlan>(
        &self,
        request: ClaimRequest,
        completions: Vec<(String, Option<String>)>,
        probe: bool,
        plan: P,
    ) -> Result<(Vec<String>, Option<P>)> {
        let polled = self
            .backend
            .poll(request, completions, probe, Box::new(plan))
            .await?;
        Ok((polled.completed, polled.plan.map(downcast_plan)))
    }

    /// `store.claim`: one session with a single draw.
    pub async fn claim(&self, request: ClaimRequest, limit: i64) -> Result<Vec<Task>> {
        let draw = Draw {
            names: request.names.clone(),
            limit,
            flow: false,
        };
        Ok(self
            .claim_session(
                request,
                SingleDraw {
                    draw: Some(draw),
                    rows: Vec::new(),
                },
            )
            .await?
            .map(|plan| plan.rows)
            .unwrap_or_default())
    }

    pub async fn heartbeat(&self, owned: HeldTask, lease_ms: i64) -> Result<Task> {
        self.backend.heartbeat(owned, lease_ms).await
    }

    pub async fn heartbeat_batch(
        &self,
        ids: Vec<String>,
        worker_id: String,
        lease_ms: i64,
    ) -> Result<Vec<(String, bool)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.backend.heartbeat_batch(ids, worker_id, lease_ms).await
    }

    /// Which of `ids` a cancel was requested for (or ended canceled).
    pub async fn cancel_requested(&self, ids: Vec<String>) -> Result<Vec<String>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.backend.cancel_requested(ids).await
    }

    pub async fn progress(
        &self,
        owned: HeldTask,
        progress: Option<f64>,
        message: Option<String>,
    ) -> Result<Task> {
        self.backend.progress(owned, progress, message).await
    }

    pub async fn finish(&self, owned: HeldTask, outcome: Outcome) -> Result<Task> {
        let row = self.backend.finish(owned, outcome).await?;
        self.wake_parents_of(crate::steps::presence::finished_children([&row]))
            .await;
        Ok(row)
    }

    /// See `Backend::completes_apart`.
    pub fn completes_apart(&self) -> bool {
        self.backend.completes_apart()
    }

    pub async fn complete_batch(
        &self,
        worker_id: String,
        items: Vec<(String, Option<String>)>,
    ) -> Result<Vec<String>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        self.backend.complete_batch(worker_id, items).await
    }
}

fn downcast_plan<P: ClaimPlan>(plan: Box<dyn ClaimPlan>) -> P {
    *plan
        .into_any()
        .downcast::<P>()
        .expect("a claim session returns the plan it was given")
}

/// The plan behind `store.claim`: exactly one draw.
struct SingleDraw {
    draw: Option<Draw>,
    rows: Vec<Task>,
}

impl ClaimPlan for SingleDraw {
    fn next_draw(&mut self) -> Option<Draw> {
        self.draw.take()
    }
    fn accept(&mut self, rows: Vec<Task>) {
        self.rows = rows;
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}
