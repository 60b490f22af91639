//! What contend says on stderr besides its results: status lines, the
//! interrupt notice and warnings, written so the progress bar never hides
//! or garbles them, and silenced by --quiet.

use indicatif::ProgressBar;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The progress bar on the terminal, if one is drawn.
static LIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// --quiet: only the results and errors.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Records the bar now drawn, so lines said while it is up go above it.
pub fn set_live_bar(bar: &ProgressBar) {
    *LIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
}

/// Sets --quiet for the rest of the process.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether --quiet was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Prints `line` on stderr above the progress bar (which is cleared, then
/// redrawn below it), so the bar's next redraw cannot overwrite it. Used
/// for the lines that must be seen: the interrupt notice, errors.
pub fn say(line: &str) {
    let line = crate::session::visible::text(line);
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match live {
        Some(bar) if !bar.is_hidden() && !bar.is_finished() => bar.suspend(|| eprintln!("{line}")),
        _ => eprintln!("{line}"),
    }
}

/// A status line (what runs now, the plan): said unless --quiet.
pub fn status(line: &str) {
    if !quiet() {
        say(line);
    }
}
