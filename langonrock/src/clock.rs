//! The host's clock: today's UTC date for reads, commit times and put times. The core reads
//! no clock; every date and time it uses comes from here.

use std::time::{SystemTime, UNIX_EPOCH};

/// What a connection asks of its clock.
pub trait Clock: Send + Sync {
    /// Today's UTC date `YYYY-MM-DD`, the read date of manifests and searches.
    fn today(&self) -> String;
    /// The commit time of a new revision: ISO-8601 UTC with milliseconds.
    fn commit_time(&self) -> String;
    /// Milliseconds since the Unix epoch, the files store's put-time unit (`gc`'s `now`).
    fn millis(&self) -> u64;
}

/// The system clock ([`today`], [`now_iso`]); `LANGONROCK_TODAY` pins the read date.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn today(&self) -> String {
        today()
    }
    fn commit_time(&self) -> String {
        now_iso()
    }
    fn millis(&self) -> u64 {
        millis(SystemTime::now())
    }
}

/// Milliseconds since the Unix epoch of `t` (0 before it, saturated after `u64`).
pub fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Civil date of a day count since 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Today's UTC date `YYYY-MM-DD`. `LANGONROCK_TODAY` overrides it (tests pin the date).
pub fn today() -> String {
    if let Ok(v) = std::env::var("LANGONROCK_TODAY") {
        if langonrock_core::compile::stale_date(&v).as_deref() == Some(v.as_str()) {
            return v;
        }
    }
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// The current time as ISO-8601 UTC with milliseconds (`2026-05-01T09:30:00.000Z`).
pub fn now_iso() -> String {
    let dur = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    iso_of_millis(dur.as_millis() as i64)
}

/// A time in milliseconds since the Unix epoch as ISO-8601 UTC with milliseconds.
pub fn iso_of_millis(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60,
        ms.rem_euclid(1000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_717), (2026, 9, 21));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
    }
}
