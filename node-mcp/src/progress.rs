//! The progress line of long imports and exports (docs/cli.md, "Progress"): files done of
//! the total and the rate, then the phase that follows, drawn on stderr by indicatif only
//! when stderr is a terminal, and cleared before the command prints its own lines.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// A progress line on stderr, or nothing when stderr is not a terminal.
pub struct Progress {
    tty: bool,
    bar: Option<ProgressBar>,
    spinning: bool,
}

impl Progress {
    /// A progress line, drawn only when `tty` (stderr is a terminal).
    pub fn new(tty: bool) -> Progress {
        Progress {
            tty,
            bar: None,
            spinning: false,
        }
    }

    fn bar(&mut self, template: &str) -> Option<&ProgressBar> {
        if !self.tty {
            return None;
        }
        let bar = self.bar.get_or_insert_with(|| {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10))
        });
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        Some(bar)
    }

    /// `<verb> <done>/<total> files, <rate>/s`, with a bar.
    pub fn files(&mut self, verb: &str, done: usize, total: usize) {
        if self.spinning {
            self.clear();
        }
        let template =
            format!("{verb} {{human_pos}}/{{human_len}} files, {{per_sec}} {{wide_bar}}");
        if let Some(b) = self.bar(&template) {
            if b.length() != Some(total as u64) {
                b.set_length(total as u64);
            }
            b.set_position(done as u64);
        }
    }

    /// A spinner that says what runs now (`compiling 5,676 documents`) and for how long.
    pub fn phase(&mut self, what: &str) {
        // A new line, so its elapsed time counts from the start of this phase.
        self.clear();
        self.spinning = true;
        if let Some(b) = self.bar("{spinner} {msg} ({elapsed})") {
            b.set_message(what.to_string());
            b.enable_steady_tick(Duration::from_millis(200));
        }
    }

    /// Clears the line, so the next line printed on stderr stands alone.
    pub fn clear(&mut self) {
        self.spinning = false;
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}
