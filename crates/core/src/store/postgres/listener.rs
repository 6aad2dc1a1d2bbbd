//! Push wakeups (docs/protocol.md, "Wakes (LISTEN/NOTIFY)"): one dedicated
//! connection LISTENs on the trigger's channels and ends sleeps early. Purely
//! an accelerator: every sleep still ends by its timeout, and polling stays the
//! source of truth.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Connection};

use super::dsn::Dsn;
use super::executor::{request, Executor, ExecutorTransport, Refused};
use super::native::NativeTransport;
use crate::store::backend::{Push, PushSubscriber, EVENTS_CHANNEL};

const FIRST_RETRY: Duration = Duration::from_secs(1);
const LAST_RETRY: Duration = Duration::from_secs(30);
/// Done notifications remembered for wakes whose ticket predates them.
const RECENT_DONE: usize = 256;

/// Where notifications come from.
#[derive(Clone)]
pub enum Source {
    /// A LISTEN connection of the store's own, from its DSN.
    Dsn(Box<Dsn>),
    /// The application's executor's `listen`, whose notifications arrive
    /// through `PushWakes::deliver` and its end through `closed`.
    Executor(Arc<dyn Executor>),
}

/// Where a transport's notifications come from.
pub trait PushSource {
    fn push_source(&self) -> Source;
}

impl PushSource for NativeTransport {
    fn push_source(&self) -> Source {
        Source::Dsn(Box::new(self.dsn.clone()))
    }
}

impl PushSource for ExecutorTransport {
    fn push_source(&self) -> Source {
        Source::Executor(self.executor().clone())
    }
}

/// The listener of one store and the sleeps it can end.
#[derive(Default)]
pub struct PushWakes {
    shared: Arc<ListenerInner>,
    task: Mutex<Option<JoinHandle<()>>>,
    source: Mutex<Option<Source>>,
}

#[derive(Default)]
struct ListenerInner {
    state: Mutex<State>,
    listening: AtomicBool,
    /// An executor's subscription ended.
    closed: Notify,
    /// Events notifications dispatched so far (`events_ticket`), and the
    /// wake of the subscriptions sleeping on them.
    events_seen: AtomicU64,
    events_wake: Notify,
}

#[derive(Default)]
struct State {
    /// Set by `close()` or a server that refuses LISTEN; never cleared.
    disabled: bool,
    next_id: u64,
    waiters: HashMap<u64, Waiter>,
    /// Queues some claim wake or claim session has waited on: only their
    /// notifications are remembered for a later claim wake, so the memory is
    /// bounded by what this process claims from (docs/protocol.md, "Wakes (LISTEN/NOTIFY)").
    watched_queues: HashSet<String>,
    /// Notifications for watched queues that arrived while nobody waited.
    missed_queues: HashSet<String>,
    /// Done notifications dispatched so far: the wake ticket.
    done_seen: u64,
    /// The task ids of the last `RECENT_DONE` of them, newest last, so a
    /// task-done wake sees one that landed after its ticket and before it
    /// registered (the probe deciding to sleep ran in between).
    recent_done: VecDeque<String>,
    subscribers: HashMap<u64, PushSubscriber>,
}

struct Waiter {
    interest: Interest,
    wake: Arc<Notify>,
}

enum Interest {
    Queues(Vec<String>),
    /// A task's done notification, any dispatched after ticket `since`.
    Task {
        id: String,
        since: u64,
    },
}

impl PushWakes {
    /// Start listening in the background, once per connect. A connect after
    /// `shutdown` (a store reused after close) arms push again.
    pub fn start(&self, source: Source) {
        let mut task = self.task.lock().expect("listener task");
        if task.is_some() {
            return;
        }
        self.shared.state().disabled = false;
        *self.source.lock().expect("listener source") = Some(source.clone());
        *task = Some(tokio::spawn(listen_forever(self.shared.clone(), source)));
    }

    /// Disable push wakeups for good and release every sleeper; an
    /// executor's subscription is stopped.
    pub fn shutdown(&self) {
        self.shared.state().disabled = true;
        if let Some(task) = self.task.lock().expect("listener task").take() {
            task.abort();
        }
        if let Some(Source::Executor(executor)) =
            self.source.lock().expect("listener source").take()
        {
            tokio::spawn(async move {
                let _ = request(&*executor, serde_json::json!({"op": "unlisten"})).await;
            });
        }
        self.shared.lost();
    }

    /// A notification from an executor's subscription.
    pub fn deliver(&self, channel: &str, payload: &str) {
        self.shared.dispatch(channel, payload);
    }

    /// An executor's subscription ended: sleepers poll, the listener retries.
    pub fn closed(&self) {
        self.shared.closed.notify_one();
    }

    /// Whether the LISTEN connection is subscribed right now.
    pub fn listening(&self) -> bool {
        self.shared.listening.load(Ordering::SeqCst)
    }

    /// Remember notifications for `queues` that arrive while nobody sleeps on them.
    pub fn watch_queues(&self, queues: &[String]) {
        let mut state = self.shared.state();
        for queue in queues {
            if !state.watched_queues.contains(queue) {
                state.watched_queues.insert(queue.clone());
            }
        }
    }

    /// Deliver every notification to `subscriber` until `unsubscribe(id)`.
    pub fn subscribe(&self, subscriber: PushSubscriber) -> u64 {
        let mut state = self.shared.state();
        let id = state.next_id;
        state.next_id += 1;
        state.subscribers.insert(id, subscriber);
        id
    }

    pub fn unsubscribe(&self, id: u64) {
        self.shared.state().subscribers.remove(&id);
    }

    pub async fn claim_wake(&self, queues: &[String], timeout: Duration) {
        self.watch_queues(queues);
        if let Some(registration) = self.shared.register(Interest::Queues(queues.to_vec())) {
            registration.sleep(timeout).await
        }
    }

    /// A mark of the events notifications dispatched so far.
    pub fn events_ticket(&self) -> u64 {
        self.shared.events_seen.load(Ordering::SeqCst)
    }

    /// Resolves when an events notification arrived after ticket `since`
    /// (at once if one did already); after `timeout` at the latest, and
    /// after `timeout` too while nothing listens (the reader polls).
    pub async fn events_changed(&self, since: u64, timeout: Duration) {
        let notified = self.shared.events_wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.events_ticket() != since {
            return;
        }
        let _ = tokio::time::timeout(timeout, notified).await;
    }

    /// A mark of the done notifications dispatched so far.
    pub fn ticket(&self) -> u64 {
        self.shared.state().done_seen
    }

    /// Resolves when `task_id`'s done notification arrives, at once if it
    /// arrived after ticket `since`; after `timeout` at the latest.
    pub async fn task_done_wake(&self, task_id: &str, since: u64, timeout: Duration) {
        let interest = Interest::Task {
            id: task_id.to_string(),
            since,
        };
        if let Some(registration) = self.shared.register(interest) {
            registration.sleep(timeout).await
        }
    }
}

impl ListenerInner {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("wake state")
    }

    /// Enter a sleeper in the wake table; `None` when a remembered
    /// notification already answers it. Once disabled, sleepers just sleep.
    fn register(&self, interest: Interest) -> Option<Registration<'_>> {
        let mut state = self.state();
        if state.answers(&interest) {
            return None;
        }
        let wake = Arc::new(Notify::new());
        let id = (!state.disabled).then(|| {
            let id = state.next_id;
            state.next_id += 1;
            state.waiters.insert(
                id,
                Waiter {
                    interest,
                    wake: wake.clone(),
                },
            );
            id
        });
        Some(Registration {
            shared: self,
            id,
            wake,
        })
    }

    fn dispatch(&self, channel: &str, payload: &str) {
        if channel == EVENTS_CHANNEL {
            self.events_seen.fetch_add(1, Ordering::SeqCst);
            self.events_wake.notify_waiters();
            return;
        }
        let Some(push) = Push::of_notification(channel, payload) else {
            return;
        };
        let subscribers: Vec<PushSubscriber> = self.state().subscribers.values().cloned().collect();
        for subscriber in subscribers {
            subscriber(push);
        }
        let mut state = self.state();
        if let Push::Done(task_id) = push {
            state.remember_done(task_id);
        }
        let mut woke = false;
        for waiter in state.waiters.values() {
            let wanted = match (&waiter.interest, push) {
                (Interest::Queues(queues), Push::Queued(queue)) => {
                    queues.iter().any(|q| q == queue)
                }
                (Interest::Task { id, .. }, Push::Done(task_id)) => id == task_id,
                _ => false,
            };
            if wanted {
                waiter.wake.notify_one();
                woke = true;
            }
        }
        if let Push::Queued(queue) = push {
            if !woke && state.watched_queues.contains(queue) {
                state.missed_queues.insert(queue.to_string());
            }
        }
    }

    /// LISTEN is in place. What was notified before it reached nobody, so
    /// every sleeper checks once more now, and so does the next claim wake of
    /// each watched queue (its probe may have run before the subscription).
    fn subscribed(&self) {
        self.listening.store(true, Ordering::SeqCst);
        let mut state = self.state();
        let watched: Vec<String> = state.watched_queues.iter().cloned().collect();
        state.missed_queues.extend(watched);
        for waiter in state.waiters.values() {
            waiter.wake.notify_one();
        }
    }

    /// The connection is gone: nothing will be delivered, so nobody should
    /// count on a wake; every sleeper goes back to polling now.
    fn lost(&self) {
        self.listening.store(false, Ordering::SeqCst);
        for waiter in self.state().waiters.values() {
            waiter.wake.notify_one();
        }
    }
}

impl State {
    /// Whether a notification that already came answers `interest`: a
    /// remembered queued one (consumed), or a task's done one after the
    /// ticket. When more came after the ticket than are remembered, one may
    /// have been its: answered, and the caller polls once more.
    fn answers(&mut self, interest: &Interest) -> bool {
        match interest {
            Interest::Queues(queues) => {
                let mut missed = false;
                for queue in queues {
                    missed |= self.missed_queues.remove(queue);
                }
                missed
            }
            Interest::Task { id, since } => {
                let after = self.done_seen.saturating_sub(*since);
                after > self.recent_done.len() as u64
                    || self
                        .recent_done
                        .iter()
                        .rev()
                        .take(after as usize)
                        .any(|done| done == id)
            }
        }
    }

    fn remember_done(&mut self, task_id: &str) {
        self.done_seen += 1;
        if self.recent_done.len() == RECENT_DONE {
            self.recent_done.pop_front();
        }
        self.recent_done.push_back(task_id.to_string());
    }
}

/// A sleeper's entry in the wake table, removed however the sleep ends.
struct Registration<'a> {
    shared: &'a ListenerInner,
    id: Option<u64>,
    wake: Arc<Notify>,
}

impl Registration<'_> {
    async fn sleep(self, timeout: Duration) {
        // A wake that came before this await left a permit, so none is lost.
        let _ = tokio::time::timeout(timeout, self.wake.notified()).await;
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.shared.state().waiters.remove(&id);
        }
    }
}

enum Ended {
    /// The server refused LISTEN (e.g. a pooler in transaction mode).
    Refused,
    /// The connection failed or dropped; `subscribed` if it got as far as LISTEN.
    Lost { subscribed: bool },
}

async fn listen_forever(shared: Arc<ListenerInner>, source: Source) {
    let mut retry = FIRST_RETRY;
    loop {
        let ended = match &source {
            Source::Dsn(dsn) => listen_once(&shared, dsn).await,
            Source::Executor(executor) => listen_through(&shared, &**executor).await,
        };
        match ended {
            Ended::Refused => {
                shared.state().disabled = true;
                shared.lost();
                return;
            }
            Ended::Lost { subscribed } => {
                shared.lost();
                if subscribed {
                    retry = FIRST_RETRY;
                }
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(LAST_RETRY);
            }
        }
    }
}

async fn listen_once(shared: &ListenerInner, dsn: &Dsn) -> Ended {
    let Ok((client, mut connection)) = dsn.config.connect(dsn.tls.clone()).await else {
        return Ended::Lost { subscribed: false };
    };
    // The connection must be driven while LISTEN runs: both happen here.
    let subscribe =
        client.batch_execute("listen cairnq_queued; listen cairnq_done; listen cairnq_events");
    tokio::pin!(subscribe);
    loop {
        tokio::select! {
            done = &mut subscribe => match done {
                Ok(()) => break,
                Err(e) if e.as_db_error().is_some() => return Ended::Refused,
                Err(_) => return Ended::Lost { subscribed: false },
            },
            delivered = deliver_next(shared, &mut connection) => if !delivered {
                return Ended::Lost { subscribed: false };
            },
        }
    }
    shared.subscribed();
    while deliver_next(shared, &mut connection).await {}
    Ended::Lost { subscribed: true }
}

/// One subscription through the executor: it refuses for good (throwing
/// `ListenUnavailable`, or having no `listen`), fails for now, or runs until
/// it reports its end.
async fn listen_through(shared: &ListenerInner, executor: &dyn Executor) -> Ended {
    match request(executor, serde_json::json!({"op": "listen"})).await {
        Ok(serde_json::Value::Bool(true)) => {
            shared.subscribed();
            shared.closed.notified().await;
            Ended::Lost { subscribed: true }
        }
        Ok(_) | Err(Refused::Unavailable(_)) => Ended::Refused,
        Err(Refused::Other(_)) => Ended::Lost { subscribed: false },
    }
}

/// Drive the connection to its next message; false once it has ended.
async fn deliver_next<S, T>(shared: &ListenerInner, connection: &mut Connection<S, T>) -> bool
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
        Some(Ok(AsyncMessage::Notification(n))) => {
            shared.dispatch(n.channel(), n.payload());
            true
        }
        Some(Ok(_)) => true,
        Some(Err(_)) | None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subscription that comes up wakes a sleeper that went to sleep
    /// before it, and answers the next claim wake of a watched queue whose
    /// probe ran before it: their notifications may have gone to nobody.
    #[tokio::test]
    async fn a_new_subscription_sends_every_sleeper_back_to_its_probe() {
        let inner = ListenerInner::default();
        inner.state().watched_queues.insert("default".into());
        let sleeper = inner
            .register(Interest::Queues(vec!["other".into()]))
            .expect("nothing answers it yet");
        inner.subscribed();
        tokio::time::timeout(
            Duration::from_secs(10),
            sleeper.sleep(Duration::from_secs(3600)),
        )
        .await
        .expect("the sleeper was woken");
        assert!(
            inner
                .register(Interest::Queues(vec!["default".into()]))
                .is_none(),
            "the watched queue's next wake is answered at once"
        );
        assert!(inner.listening.load(Ordering::SeqCst));
    }
}
