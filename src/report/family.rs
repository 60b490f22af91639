//! Each family's [`Report`]: which renderer makes each form of its
//! results, and its JSON document. The renderers themselves stay one file
//! per format (table/, csv/, gnuplot/, plot/, markdown).

use super::document::Report;
use super::json::{AllocExport, Header, LockExport, TuneExport, WakeupExport};
use crate::cli::Format;
use crate::measure::env::Environment;
use crate::runner::alloc_sweep::AllocOutcome;
use crate::runner::sweep::SweepOutcome;
use crate::runner::tune::TuneOutcome;
use crate::runner::wakeup_sweep::WakeupOutcome;
use crate::spec::alloc::AllocSpec;
use crate::spec::tune::TuneSpec;
use crate::spec::wakeup::WakeupSpec;
use crate::spec::LockSpec;
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
            Format::Table => super::table::lock::render(results, self.environment),
            Format::Seed => super::seed::render(results),
            Format::Gnuplot => super::gnuplot::lock::render(results),
        }
    }
    fn csv(&self) -> String {
        super::csv::lock::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        super::markdown::lock(&self.outcome.results, self.environment)
    }
    fn gnuplot(&self) -> String {
        super::gnuplot::lock::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(super::plot::lock::render(
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
        super::table::lock::render(&self.outcome.results, self.environment)
            + &super::table::tune::summary(self.outcome, self.took)
    }
    fn csv(&self) -> String {
        super::csv::lock::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        super::markdown::lock(&self.outcome.results, self.environment)
    }
    fn gnuplot(&self) -> String {
        super::gnuplot::lock::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(super::plot::lock::render(
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
        let mut text = super::table::wakeup::render(&o.results, &o.clock, o.trace.as_ref());
        if let Some(bucket) = self.spec.histogram_bucket_ns {
            text += &super::histogram::render(&o.results, bucket);
        }
        text
    }
    fn csv(&self) -> String {
        super::csv::wakeup::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        let o = self.outcome;
        super::markdown::wakeup(&o.results, &o.clock, o.trace.as_ref())
    }
    fn gnuplot(&self) -> String {
        super::gnuplot::wakeup::render(&self.outcome.results)
    }
    fn plot(&self) -> Option<Result<String, String>> {
        Some(super::plot::wakeup::render(
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
        super::table::alloc::table(&self.outcome.results)
    }
    fn csv(&self) -> String {
        super::csv::alloc::render(&self.outcome.results)
    }
    fn markdown(&self) -> String {
        super::markdown::alloc(&self.outcome.results)
    }
    fn gnuplot(&self) -> String {
        super::gnuplot::alloc::render(&self.outcome.results)
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
