//! What every family's report shares: the `Results` bundle its `Report`
//! is implemented on, and the title of its plots. Each family implements
//! [`crate::output::document::Report`] in its own `report/` folder.

use crate::measure::env::Environment;

/// A plot's title: the command that made it and the machine it ran on.
pub fn plot_title(env: &Environment) -> String {
    // The arguments that shape the measurement; where results go does not.
    let mut args = Vec::new();
    let mut skip = false;
    for a in env.command_line.iter().skip(1) {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a == "--plot" || a.starts_with("--export") {
            skip = !a.contains('=');
            continue;
        }
        if a != "--no-progress" {
            args.push(a.as_str());
        }
    }
    let mut title = format!("contend {}", args.join(" "));
    if title.chars().count() > 110 {
        title = title.chars().take(107).collect::<String>() + "...";
    }
    format!("{title} ({} CPUs, Linux {})", env.cpus_online, env.kernel)
}

/// A family's results: what was asked, where it ran, what was measured.
pub struct Results<'a, Spec, Outcome> {
    /// What was asked for.
    pub spec: &'a Spec,
    /// Where it ran.
    pub environment: &'a Environment,
    /// What was measured.
    pub outcome: &'a Outcome,
}
