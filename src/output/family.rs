//! Each family's [`Report`]: which renderer makes each form of its
//! results, and its JSON document. The renderers themselves stay one file
//! per format (table/, csv/, gnuplot/, plot/, markdown).

use crate::cli::Format;
use crate::family::alloc::spec::AllocSpec;
use crate::family::alloc::sweep::AllocOutcome;
use crate::family::lock::spec::LockSpec;
use crate::family::lock::sweep::SweepOutcome;
use crate::family::wakeup::spec::WakeupSpec;
use crate::family::wakeup::sweep::WakeupOutcome;
use crate::measure::env::Environment;
use crate::output::document::Report;
use crate::output::json::{AllocExport, Header, LockExport, TuneExport, WakeupExport};
use crate::tune::run::TuneOutcome;
use crate::tune::spec::TuneSpec;
use serde_json::Value;

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

/// `contend lock`'s results.
pub type LockReport<'a> = Results<'a, LockSpec, SweepOutcome>;

impl Report for LockReport<'_> {
    fn terminal(&self) -> String {
        let results = &self.outcome.results;
        match self.spec.format {
            Format::Table => crate::family::lock::report::table::render(results, self.environment),
            Format::Seed => crate::family::lock::report::seed::render(results),
            Format::Gnuplot => crate::family::lock::report::gnuplot::render(results),
        }
    }
    fn csv(&self) -> String {
        crate::family::lock::report::csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        crate::output::markdown::lock(&self.outcome.results, self.environment)
    }
    fn gnuplot(&self) -> String {
        crate::family::lock::report::gnuplot::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(crate::family::lock::report::plot::render(
            &self.outcome.results,
            &plot_title(self.environment),
        ))
    }
    fn document(&self) -> serde_json::Result<Value> {
        serde_json::to_value(LockExport {
            header: Header::new("lock", self.environment, &self.outcome.warnings),
            spec: self.spec,
            points: &self.outcome.results,
        })
    }
}

/// `contend tune`'s results: lock points, and the search's summary.
pub struct TuneReport<'a> {
    /// What was asked for.
    pub spec: &'a TuneSpec,
    /// Where it ran.
    pub environment: &'a Environment,
    /// What was measured.
    pub outcome: &'a TuneOutcome,
    /// How long the search took.
    pub took: std::time::Duration,
}

impl Report for TuneReport<'_> {
    fn terminal(&self) -> String {
        crate::family::lock::report::table::render(&self.outcome.results, self.environment)
            + &crate::tune::table::summary(self.outcome, self.took)
    }
    fn csv(&self) -> String {
        crate::family::lock::report::csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        crate::output::markdown::lock(&self.outcome.results, self.environment)
    }
    fn gnuplot(&self) -> String {
        crate::family::lock::report::gnuplot::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(crate::family::lock::report::plot::render(
            &self.outcome.results,
            &plot_title(self.environment),
        ))
    }
    fn document(&self) -> serde_json::Result<Value> {
        let o = self.outcome;
        serde_json::to_value(TuneExport {
            header: Header::new("lock", self.environment, &o.warnings),
            spec: self.spec,
            best_spin: o.best.and_then(|b| o.results[b].point.spin),
            points: &o.results,
        })
    }
}

/// `contend wakeup`'s results.
pub type WakeupReport<'a> = Results<'a, WakeupSpec, WakeupOutcome>;

impl Report for WakeupReport<'_> {
    fn terminal(&self) -> String {
        let o = self.outcome;
        let mut text = crate::family::wakeup::report::table::render(&o.results, &o.clock, o.trace.as_ref());
        if let Some(bucket) = self.spec.histogram_bucket_ns {
            text += &crate::output::histogram::render(&o.results, bucket);
        }
        text
    }
    fn csv(&self) -> String {
        crate::family::wakeup::report::csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        let o = self.outcome;
        crate::output::markdown::wakeup(&o.results, &o.clock, o.trace.as_ref())
    }
    fn gnuplot(&self) -> String {
        crate::family::wakeup::report::gnuplot::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(crate::family::wakeup::report::plot::render(
            &self.outcome.results,
            &plot_title(self.environment),
        ))
    }
    fn document(&self) -> serde_json::Result<Value> {
        let o = self.outcome;
        serde_json::to_value(WakeupExport {
            header: Header::new("wakeup", self.environment, &o.warnings),
            spec: self.spec,
            clock: &o.clock,
            trace: o.trace.as_ref(),
            points: &o.results,
        })
    }
}

/// `contend alloc`'s results.
pub type AllocReport<'a> = Results<'a, AllocSpec, AllocOutcome>;

impl Report for AllocReport<'_> {
    fn terminal(&self) -> String {
        crate::family::alloc::report::table::table(&self.outcome.results)
    }
    fn csv(&self) -> String {
        crate::family::alloc::report::csv::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        crate::output::markdown::alloc(&self.outcome.results)
    }
    fn gnuplot(&self) -> String {
        crate::family::alloc::report::gnuplot::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        None
    }
    fn document(&self) -> serde_json::Result<Value> {
        serde_json::to_value(AllocExport {
            header: Header::new("alloc", self.environment, &self.outcome.warnings),
            spec: self.spec,
            points: &self.outcome.results,
        })
    }
}
