//! The change feed: `LISTEN langonrock_head` on a connection of its own
//! (`docs/postgres.md`, "Replicas").

use crate::schema::CHANNEL;
use crate::Manager;
use postgres::fallible_iterator::FallibleIterator as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the listener wakes to check whether it should stop, and how long it waits
/// before it reconnects after losing its connection.
const TICK: Duration = Duration::from_millis(200);

/// What the listener tells its callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice<'a> {
    /// A head of this tenant moved.
    Head(&'a str),
    /// The listener (re)connected: notifications may have been missed, so every tenant may
    /// have moved.
    Resync,
}

/// A running listener; dropping it stops its thread (within a tick, without waiting for
/// it).
pub struct Listener {
    stop: Arc<AtomicBool>,
    _thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener").finish_non_exhaustive()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

type Callback = Box<dyn Fn(Notice<'_>) + Send>;

pub(crate) fn start(manager: Manager, on: Callback) -> Listener {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("langonrock-listen".into())
        .spawn(move || run(&manager, &on, &flag))
        .ok();
    Listener {
        stop,
        _thread: thread,
    }
}

fn run(manager: &Manager, on: &Callback, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let mut client = match manager.connect() {
            Ok(c) => c,
            Err(_) => {
                std::thread::sleep(TICK);
                continue;
            }
        };
        if client.batch_execute(&format!("LISTEN {CHANNEL}")).is_err() {
            std::thread::sleep(TICK);
            continue;
        }
        on(Notice::Resync);
        'conn: while !stop.load(Ordering::Relaxed) {
            {
                let mut notes = client.notifications();
                let mut it = notes.timeout_iter(TICK);
                loop {
                    match it.next() {
                        Ok(Some(n)) => on(Notice::Head(n.payload())),
                        Ok(None) => break,
                        Err(_) => break 'conn,
                    }
                }
            }
            if client.is_closed() {
                break;
            }
        }
    }
}
