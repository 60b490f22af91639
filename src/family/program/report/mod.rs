//! `contend run`'s formats: table (with the profile), CSV, gnuplot, JSON.

pub mod advice;
pub mod details;
pub mod futex;
pub mod futex_sites;
pub mod holder_state;
pub mod holders;
pub mod plot;
pub mod rwlocks;
pub mod speedup;
pub mod table;
pub mod whatif;

use crate::family::program::spec::ProgramSpec;
use crate::family::program::sweep::ProgramOutcome;
use crate::model::program::{ProgramResult, VsGlibc, GLIBC};
use crate::output::columns::Shown;
use crate::output::document::Report;
use crate::output::json::Header;
use crate::output::results::Results;
use comfy_table::presets::{ASCII_MARKDOWN, NOTHING};
use serde::Serialize;
use serde_json::Value;

/// One lock against glibc's mutex, in the export.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LockVsGlibc<'a> {
    /// The lock.
    pub lock: &'a str,
    /// In a parameter scan: the value both ran with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<&'a crate::model::program::ParameterValue>,
    /// Its ratio, when it has rounds to pair.
    #[serde(flatten)]
    pub vs: Option<VsGlibc>,
}

/// The JSON document of `contend run`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ProgramExport<'a> {
    /// Version, family, environment, warnings.
    #[serde(flatten)]
    pub header: Header<'a>,
    /// What was asked for.
    pub spec: &'a ProgramSpec,
    /// One entry per lock, with every run (and each run's profile).
    pub points: &'a [ProgramResult],
    /// Each lock but pthread against pthread.
    pub vs_glibc: Vec<LockVsGlibc<'a>>,
    /// With `--profile`: the profiled pthread's metric over the unprofiled
    /// pthread's, paired by round (a wall-time ratio above 1, or a rate
    /// ratio below 1, is the profile's cost).
    pub profile_cost: Option<VsGlibc>,
    /// With `--recommend`: the lock per mutex and the winners together.
    pub recommendation: Option<&'a crate::model::advice::Recommendation>,
    /// With `--what-if`: the slope and the predictions.
    pub what_if: Option<&'a crate::model::advice::WhatIf>,
    /// With `--what-if` by virtual speedup: the mutexes ranked, each
    /// prediction with its interval.
    pub speedup: Option<&'a crate::model::advice::SpeedupWhatIf>,
    /// The locks under which the program failed while it succeeds under
    /// glibc's mutex: why, and every execution; no statistics, no ratio.
    pub failed: &'a [crate::model::program::FailedPoint],
}

/// `contend run`'s results.
pub type ProgramReport<'a> = Results<'a, ProgramSpec, ProgramOutcome>;

#[derive(Default, Serialize)]
struct Row {
    lock: String,
    metric_mean: f64,
    metric_ci95_pct: Option<f64>,
    runs: usize,
    vs_pthread: Option<f64>,
    vs_pthread_lo: Option<f64>,
    vs_pthread_hi: Option<f64>,
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    futex_calls: Option<u64>,
    voluntary_cs: i64,
    involuntary_cs: i64,
    processes: u32,
    swapped: u64,
    to_glibc: u64,
    mutexes: usize,
    failure: Option<String>,
}

impl Report for ProgramReport<'_> {
    fn terminal(&self) -> String {
        table::table(self.spec, self.outcome, &Shown::planned(table::GROUPS, &self.spec.output), NOTHING)
    }
    fn csv(&self) -> String {
        // contend attach: the followed process's futex words, not a run's
        // columns (it ran no lock).
        if let crate::family::program::run_mode::RunMode::Attach { .. } = self.spec.mode {
            return self.outcome.results.first().map_or(String::new(), |r| futex::csv(&r.sample));
        }
        let rows = self.outcome.results.iter().zip(&self.outcome.vs_glibc).map(|(r, vs)| {
            let s = &r.sample;
            Row {
                lock: r.point.label(self.spec.profile),
                metric_mean: r.stats.mean,
                metric_ci95_pct: r.stats.ci95_pct,
                runs: r.stats.n,
                vs_pthread: vs.map(|v| v.ratio),
                vs_pthread_lo: vs.and_then(|v| v.ci95).map(|c| c.0),
                vs_pthread_hi: vs.and_then(|v| v.ci95).map(|c| c.1),
                wall_s: s.wall_s,
                user_s: s.user_s,
                sys_s: s.sys_s,
                futex_calls: r.kernel_run().futex.map(|f| f.calls),
                voluntary_cs: s.voluntary_context_switches,
                involuntary_cs: s.involuntary_context_switches,
                processes: s.processes,
                swapped: s.swapped,
                to_glibc: s.to_glibc,
                mutexes: s.mutexes.len(),
                failure: None,
            }
        });
        let failed = self.outcome.failed.iter().map(|f| {
            let s = f.runs.last().expect("a failed point has its failing run");
            Row {
                lock: f.point.label(self.spec.profile),
                metric_mean: f64::NAN,
                runs: f.runs.len(),
                wall_s: s.wall_s,
                user_s: s.user_s,
                sys_s: s.sys_s,
                processes: s.processes,
                swapped: s.swapped,
                to_glibc: s.to_glibc,
                failure: Some(f.reason.clone()),
                ..Row::default()
            }
        });
        crate::output::csv::render(rows.chain(failed))
    }
    fn markdown(&self) -> String {
        table::table(
            self.spec,
            self.outcome,
            &Shown::planned(table::GROUPS, &self.spec.output),
            ASCII_MARKDOWN,
        )
    }
    fn gnuplot(&self) -> String {
        // contend attach: the futex words, as its CSV has them.
        if let crate::family::program::run_mode::RunMode::Attach { .. } = self.spec.mode {
            return self.outcome.results.first().map_or(String::new(), |r| futex::gnuplot(&r.sample));
        }
        let mut out = String::from("# lock metric_mean ci95 vs_pthread lo hi\n");
        for (r, vs) in self.outcome.results.iter().zip(&self.outcome.vs_glibc) {
            let f = |v: Option<f64>| v.map_or("NaN".into(), |v| format!("{v:.6}"));
            out += &format!(
                "{} {:.6} {} {} {} {}\n",
                r.point.label(self.spec.profile).replace(' ', "_"),
                r.stats.mean,
                f(r.stats.ci95),
                f(vs.map(|v| v.ratio)
                    .or((r.sample.lock == GLIBC && r.point.profiled == self.spec.profile).then_some(1.0))),
                f(vs.and_then(|v| v.ci95).map(|c| c.0)),
                f(vs.and_then(|v| v.ci95).map(|c| c.1)),
            );
        }
        for failed in &self.outcome.failed {
            out += &format!("# {} failed: {}\n", failed.point.label(self.spec.profile), failed.reason);
        }
        out
    }
    fn plot(&self) -> Option<Result<String, String>> {
        let fig =
            self.document().map_err(|e| e.to_string()).and_then(|doc| plot::ProgramFigure::read(&doc, None));
        let caption = crate::output::results::plot_title(self.environment);
        Some(fig.and_then(|fig| {
            let mut svg = String::new();
            plot::draw(
                &fig,
                plotters::prelude::IntoDrawingArea::into_drawing_area(
                    plotters::prelude::SVGBackend::with_string(&mut svg, plot::SIZE),
                ),
                None,
                &caption,
            )?;
            Ok(svg)
        }))
    }
    fn document(&self) -> serde_json::Result<Value> {
        serde_json::to_value(ProgramExport {
            header: Header::new("run", self.environment, &self.outcome.warnings),
            spec: self.spec,
            points: &self.outcome.results,
            vs_glibc: self
                .outcome
                .results
                .iter()
                .zip(&self.outcome.vs_glibc)
                .filter(|(r, _)| r.point.lock != GLIBC)
                .map(|(r, vs)| LockVsGlibc {
                    lock: &r.point.lock,
                    parameter: r.point.parameter.as_ref(),
                    vs: *vs,
                })
                .collect(),
            profile_cost: self.outcome.profile_cost,
            recommendation: self.outcome.recommendation.as_ref(),
            what_if: self.outcome.what_if.as_ref(),
            speedup: self.outcome.speedup.as_ref(),
            failed: &self.outcome.failed,
        })
    }
}
