//! The task statuses as the core defines them, for `lib/models.js`.

use cairnq_core::task::Status;
use napi_derive::napi;

/// Every status in `STATUSES` order, and the terminal ones.
#[napi(object)]
pub struct TaskStatuses {
    pub all: Vec<String>,
    pub terminal: Vec<String>,
}

#[napi]
pub fn task_statuses() -> TaskStatuses {
    let names = |keep: fn(Status) -> bool| {
        Status::ALL
            .into_iter()
            .filter(|status| keep(*status))
            .map(|status| status.as_str().to_string())
            .collect()
    };
    TaskStatuses {
        all: names(|_| true),
        terminal: names(Status::is_terminal),
    }
}
