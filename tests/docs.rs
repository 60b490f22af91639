//! The documentation's links point at files that exist: every relative
//! Markdown link in README.md, ARCHITECTURE.md and docs/ (anchors and web
//! addresses aside). A renamed or deleted file then fails here, not in a
//! reader's browser. And what the README says of the export's version is
//! what this build writes and reads.

mod common;

use std::path::Path;

/// The targets of `[text](target)` links in `text`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn every_relative_link_names_a_file_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    files.extend(common::files_under(&root.join("docs"), "md"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in links(&text) {
            let target = link.split('#').next().unwrap_or_default().trim();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            if !file.parent().unwrap().join(target).exists() {
                broken.push(format!("{}: {link}", file.strip_prefix(root).unwrap().display()));
            }
        }
    }
    assert!(checked > 20, "only {checked} links found: is the parser broken?");
    assert!(broken.is_empty(), "links to nothing:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_names_the_schema_version_written_and_the_versions_compare_reads() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let newest = contend::output::json::SCHEMA_VERSION;
    let oldest = contend::exports::compare::export::OLDEST_READ;
    for claim in
        [format!("`schema_version` ({newest})"), format!("`compare` reads versions {oldest} to {newest}")]
    {
        assert!(readme.contains(&claim), "README.md should say {claim:?}");
    }
}
