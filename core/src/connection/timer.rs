//! When a writable connection writes the head's derived record (engine.md §9.1 rule 4): once
//! the engine says one is due, after the commits pause for [`DERIVED_DELAY_MS`] (each later
//! exclusive operation moves the time on, so a run of commits writes it once; reads do not),
//! and at once when the connection closes. The host owns the timer and the store; this
//! holds the decisions, as plain data over the host's clock.

/// How long operations must pause before the derived record is written, in milliseconds:
/// one second, for both hosts. Short enough that a browser tab closed soon after an edit
/// usually has its record, long enough that a burst of commits encodes the state once.
pub const DERIVED_DELAY_MS: u64 = 1_000;

impl Default for DerivedTimer {
    fn default() -> DerivedTimer {
        DerivedTimer::new(false)
    }
}

/// The derived record schedule of one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedTimer {
    /// When the pending record is to be written (host milliseconds), if one is pending.
    deadline: Option<u64>,
    closed: bool,
    read_only: bool,
    /// The pause, in milliseconds; [`DERIVED_DELAY_MS`] unless a host chose another.
    delay: u64,
    /// At most how long after the operation that made the record due it is written, even
    /// while operations go on (`u64::MAX`: no bound, the default).
    limit: u64,
    /// When the pending record became due (host milliseconds), if one is pending.
    since: Option<u64>,
}

impl DerivedTimer {
    /// The schedule of a connection; a read-only one never writes.
    pub fn new(read_only: bool) -> DerivedTimer {
        DerivedTimer::with_delay(read_only, DERIVED_DELAY_MS)
    }

    /// The schedule of a connection whose host waits `delay` milliseconds instead (a notes
    /// page, whose saves come seconds apart and should not wait for the encoding).
    pub fn with_delay(read_only: bool, delay: u64) -> DerivedTimer {
        DerivedTimer::with_limit(read_only, delay, u64::MAX)
    }

    /// The schedule of a connection whose host waits `delay` milliseconds of pause, but
    /// never more than `limit` milliseconds after the record became due: a server under a
    /// steady stream of commits (`serve`) writes it when the commits pause, and at a bounded
    /// rate while they do not (docs/http.md §7).
    pub fn with_limit(read_only: bool, delay: u64, limit: u64) -> DerivedTimer {
        DerivedTimer {
            deadline: None,
            closed: false,
            read_only,
            delay,
            limit,
            since: None,
        }
    }

    /// After an operation at `now`: `due` is whether the engine holds a derived record to
    /// write, `exclusive` whether the operation was a commit (or another exclusive one).
    /// Returns the time the host's timer must fire at (arm or re-arm it), or `None` to leave
    /// the timer as it is.
    pub fn after_op(&mut self, now: u64, due: bool, exclusive: bool) -> Option<u64> {
        if !due || self.read_only || self.closed || (self.deadline.is_some() && !exclusive) {
            return None;
        }
        let since = *self.since.get_or_insert(now);
        let at = now
            .saturating_add(self.delay)
            .min(since.saturating_add(self.limit));
        self.deadline = Some(at);
        Some(at)
    }

    /// The host's timer fired at `now`: whether to write the record now (take it from the
    /// engine and put it). When operations went on meanwhile, the timer must be re-armed
    /// for [`DerivedTimer::deadline`] instead.
    pub fn fire(&mut self, now: u64) -> bool {
        match self.deadline {
            Some(at) if now >= at => {
                self.deadline = None;
                self.since = None;
                true
            }
            _ => false,
        }
    }

    /// When the pending record is to be written, if one is pending.
    pub fn deadline(&self) -> Option<u64> {
        self.deadline
    }

    /// The connection closes: whether a pending record is written now. No record is
    /// scheduled afterwards.
    pub fn close(&mut self) -> bool {
        self.closed = true;
        self.since = None;
        self.deadline.take().is_some()
    }
}
