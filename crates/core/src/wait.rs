//! Waiting for a task to finish (API.md §6): poll with growing intervals,
//! sleeping on the store's wake channel so push-capable backends end a sleep
//! early. A timeout never touches the task.
