//! Reading an export back, for the commands that take exports (`compare`,
//! `plot`, `report`): one reader, so each refuses the same things the same
//! way. What is read is capped at [`MAX_EXPORT`]: a path that names a
//! device or an endless stream (`/dev/urandom`) is refused once the cap is
//! passed, instead of filling memory, and what is read is held slimmed,
//! within a budget of values ([`crate::exports::slim`]). A FIFO's open and read run with the
//! ending signals unblocked, so Ctrl-C ends a wait for a writer. Every
//! refusal is the user's mistake (exit 2) and names the path.

use crate::model::SpecError;
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// The largest export read: far above any export contend writes (a
/// profiled `contend run` of many runs is tens of MB).
pub const MAX_EXPORT: u64 = 256 << 20;

/// Reads `path` as JSON.
pub fn read_export(path: &Path) -> Result<Value, SpecError> {
    let bad = |why: String| SpecError(format!("reading {}: {why}", path.display()));
    let bytes = crate::session::signals::interruptible(|| -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        std::fs::File::open(path)?.take(MAX_EXPORT + 1).read_to_end(&mut bytes)?;
        Ok(bytes)
    })
    .map_err(|e| bad(e.to_string()))?;
    if bytes.len() as u64 > MAX_EXPORT {
        return Err(bad(format!(
            "more than {} MiB: not a contend export (a device or a stream?)",
            MAX_EXPORT >> 20
        )));
    }
    // Slimmed as it is read: the runs' profiles no reader uses are dropped,
    // and no file can hold more values than memory can (exports/slim.rs).
    crate::exports::slim::parse(&bytes).map_err(|e| SpecError(format!("{}: not JSON: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_stream_is_refused_once_past_the_cap() {
        let e = read_export(Path::new("/dev/zero")).unwrap_err();
        assert!(e.0.contains("not a contend export"), "{}", e.0);
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("x.json");
        std::fs::write(&bad, "{").unwrap();
        assert!(read_export(&bad).unwrap_err().0.contains("not JSON"));
        std::fs::write(&bad, "{\"a\": 1}").unwrap();
        assert_eq!(read_export(&bad).unwrap()["a"], 1);
    }
}
