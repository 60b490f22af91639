//! What every family's report shares: the `Results` bundle its `Report`
//! is implemented on, and the title of its plots. Each family implements
//! [`crate::output::document::Report`] in its own `report/` folder.

use crate::measure::env::Environment;

/// A figure's caption: the command that made it and the machine it ran
/// on, from a run's environment.
pub fn plot_title(env: &Environment) -> String {
    let args: Vec<&str> = env.command_line.iter().map(String::as_str).collect();
    caption(&args, env.cpus_online as u64, &env.kernel)
}

/// A figure's caption from a command line as recorded (`argv`, the
/// binary first), the online CPUs and the kernel: `contend` and the
/// arguments that shape the measurement (where results go does not), cut
/// to 160 characters.
pub fn caption(argv: &[&str], cpus: u64, kernel: &str) -> String {
    let mut args = Vec::new();
    let mut skip = false;
    for &a in argv.iter().skip(1) {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a == "--plot" || a.starts_with("--export") {
            skip = !a.contains('=');
            continue;
        }
        if a != "--no-progress" {
            args.push(a);
        }
    }
    // Whole: a figure wraps it over up to three lines (output::plot), and
    // a command cut short could not be rerun.
    format!("contend {} ({cpus} CPUs, Linux {kernel})", args.join(" "))
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_caption_keeps_what_shapes_the_measurement() {
        let argv = ["/x/contend", "lock", "--threads", "4", "--export-json", "/tmp/a.json", "--no-progress"];
        assert_eq!(super::caption(&argv, 2, "6.18"), "contend lock --threads 4 (2 CPUs, Linux 6.18)");
    }
}
