//! What a browser shows of a page: headless Chromium loads it, takes a
//! screenshot, and must log no console error; a blank page is refused by
//! the screenshot's size. Skipped (visibly) where Chromium is not
//! installed; scripts/test.sh installs it as root.

use std::path::Path;

/// Checks that Chromium shows `html` without errors and not blank.
pub fn shows_without_errors(html: &Path) {
    let Some(chromium) = super::which("chromium") else {
        super::skip("headless Chromium check of the HTML report: chromium is not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let out = std::process::Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .args(["--window-size=1200,1600", "--hide-scrollbars"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Chromium logs the page's console messages as CONSOLE lines.
    let console: Vec<&str> =
        stderr.lines().filter(|l| l.contains("CONSOLE") || l.contains("Uncaught")).collect();
    assert!(console.is_empty(), "console output: {console:?}");
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // A blank page compresses to a few kB; text, tables and figures do not.
    assert!(png.len() > 50_000, "{} bytes: a blank screenshot?", png.len());
}
