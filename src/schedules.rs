//! `NativeStore`'s schedule methods (docs/api.md, "Schedules"): the spec
//! crosses as one JSON text, schedules come back as JSON text; every check
//! and decision is the core's (`cairnq_core::schedule`).

use cairnq_core::schedule::rows::ScheduleRow;
use cairnq_core::schedule::{schedule_to_json, schedules_to_json};
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::{row, NativeStore};

fn maybe(row: Option<ScheduleRow>) -> Option<String> {
    row.as_ref().map(schedule_to_json)
}

#[napi]
impl NativeStore {
    /// Insert or update the schedule `specJson` describes; the stored schedule.
    #[napi]
    pub async fn schedule(&self, spec_json: String) -> Result<String> {
        self.inner
            .schedule(&spec_json)
            .await
            .map(|row| schedule_to_json(&row))
            .js()
    }

    /// Every schedule, by name, as a JSON array.
    #[napi]
    pub async fn schedules(&self) -> Result<String> {
        self.inner
            .schedules()
            .await
            .map(|rows| schedules_to_json(&rows))
            .js()
    }

    #[napi]
    pub async fn pause_schedule(&self, name: String) -> Result<Option<String>> {
        self.inner
            .pause_schedule(&name, self.inner.clock().now_ms())
            .await
            .map(maybe)
            .js()
    }

    #[napi]
    pub async fn resume_schedule(&self, name: String) -> Result<Option<String>> {
        self.inner
            .resume_schedule(&name, self.inner.clock().now_ms())
            .await
            .map(maybe)
            .js()
    }

    /// One task of the schedule now, its pending occurrence left; the task.
    #[napi]
    pub async fn trigger_schedule(&self, name: String) -> Result<String> {
        self.inner
            .trigger_schedule(&name, self.inner.clock().now_ms())
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn unschedule(&self, name: String) -> Result<Option<String>> {
        self.inner.unschedule(&name).await.map(maybe).js()
    }
}
