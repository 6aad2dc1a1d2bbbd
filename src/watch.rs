//! `NativeWatch`: one `store.watch` subscription. Its timer and push
//! delivery run in Rust; signals reach JS through a call that never keeps
//! the Node process alive.

use std::sync::{Arc, Mutex};

use cairnq_core::watch::{PushDelivery, Watch, WatchFilter, WatchSignal};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::store::NativeStore;

/// `{reason, queue?, taskId?}` as `WatchSignal` has it.
#[napi(object)]
pub struct WatchSignalObject {
    pub reason: String,
    pub queue: Option<String>,
    pub task_id: Option<String>,
}

/// `watch`'s poll period when `pollMs` is not given (exported as is).
#[napi]
pub const DEFAULT_WATCH_POLL_MS: f64 = cairnq_core::watch::DEFAULT_WATCH_POLL_MS;

type SignalCallback =
    ThreadsafeFunction<WatchSignalObject, (), WatchSignalObject, napi::Status, false, true>;

fn signal_object(signal: WatchSignal) -> WatchSignalObject {
    match signal {
        WatchSignal::Queued(queue) => WatchSignalObject {
            reason: "queued".into(),
            queue: Some(queue),
            task_id: None,
        },
        WatchSignal::Done(task_id) => WatchSignalObject {
            reason: "done".into(),
            queue: None,
            task_id: Some(task_id),
        },
        WatchSignal::Poll => WatchSignalObject {
            reason: "poll".into(),
            queue: None,
            task_id: None,
        },
    }
}

#[napi]
pub struct NativeWatch {
    watch: Mutex<Option<Watch>>,
}

#[napi]
impl NativeWatch {
    #[napi(constructor)]
    pub fn new(
        store: &NativeStore,
        queues: Option<Vec<String>>,
        poll_ms: Option<f64>,
        on_signal: SignalCallback,
    ) -> Self {
        let on_signal = Arc::new(on_signal);
        let sink = Arc::new(move |signal: WatchSignal| {
            on_signal.call(
                signal_object(signal),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        });
        // An executor's notifications arrive on the JS thread, which hands
        // them to `signalOf` and the callback at once.
        let delivery = match store.executor {
            Some(_) => PushDelivery::Caller,
            None => PushDelivery::Sink,
        };
        let store = store.inner.clone();
        let watch = napi::bindgen_prelude::within_runtime_if_available(move || {
            Watch::start(
                store,
                WatchFilter::new(queues),
                poll_ms,
                sink,
                delivery,
                &tokio::runtime::Handle::current(),
            )
        });
        NativeWatch {
            watch: Mutex::new(Some(watch)),
        }
    }

    /// The signal an executor's notification is to this subscription, if
    /// any (none once stopped).
    #[napi]
    pub fn signal_of(&self, channel: String, payload: String) -> Option<WatchSignalObject> {
        let watch = self.watch.lock().expect("watch slot");
        watch
            .as_ref()
            .and_then(|watch| watch.signal_of(&channel, &payload))
            .map(signal_object)
    }

    /// Ends delivery: the timer stops and the push subscription is dropped.
    #[napi]
    pub fn stop(&self) {
        self.watch.lock().expect("watch slot").take();
    }
}
