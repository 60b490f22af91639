//! The lines a Markdown export opens with: the command that made it, the
//! contend that ran it, when, and on what machine. A table pasted into a
//! page (docs/results/ is made of them) then says where it came from,
//! as the JSON export does in its header.

use serde_json::Value;

/// The provenance of the export `doc` (its header's environment), as
/// Markdown, ending in a blank line; `now`: when it was written.
pub fn markdown(doc: &Value, now: std::time::SystemTime) -> String {
    let env = &doc["environment"];
    let text = |v: &Value| v.as_str().unwrap_or("unknown").to_string();
    let args: Vec<&str> = env["command_line"]
        .as_array()
        .map(|a| a.iter().skip(1).filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let line = shlex::try_join(std::iter::once("contend").chain(args.iter().copied()))
        .unwrap_or_else(|_| format!("contend {}", args.join(" ")));
    // A backtick inside the command would end a one-backtick code span.
    let fence = if line.contains('`') { "`` " } else { "`" };
    let close: String = fence.chars().rev().collect();
    format!(
        "{fence}{line}{close}\n\ncontend {} (git {}) · {} · {} CPUs ({}) · Linux {}\n\n",
        text(&env["tool_version"]),
        text(&env["git_hash"]),
        humantime::format_rfc3339_seconds(now),
        env["cpus_online"].as_u64().map_or("?".into(), |n| n.to_string()),
        text(&env["cpu_model"]),
        text(&env["kernel"]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_command_is_quoted_as_a_shell_reads_it_and_the_machine_follows() {
        let doc = json!({"environment": {
            "command_line": ["/x/target/release/contend", "run", "--metric", "eps: ([0-9]+)", "--", "./p"],
            "tool_version": "0.1.0", "git_hash": "abc123", "cpus_online": 2,
            "cpu_model": "Xeon", "kernel": "6.18"
        }});
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(86_400);
        let md = markdown(&doc, at);
        assert!(md.starts_with("`contend run --metric 'eps: ([0-9]+)' -- ./p`\n\n"), "{md}");
        assert!(
            md.contains("contend 0.1.0 (git abc123) · 1970-01-02T00:00:00Z · 2 CPUs (Xeon) · Linux 6.18"),
            "{md}"
        );
        let tick = json!({"environment": {"command_line": ["c", "run", "--", "echo", "`x`"]}});
        assert!(markdown(&tick, at).starts_with("`` contend run -- echo "), "{}", markdown(&tick, at));
        assert!(
            markdown(&json!({}), at).starts_with("`contend`"),
            "an export without an environment still opens"
        );
    }
}
