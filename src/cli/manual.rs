//! The manual: one roff page per command (contend(1), contend-lock(1),
//! ...), generated from the command definitions by clap_mangen, with the
//! sections a man page reader looks for and clap cannot know: EXIT STATUS,
//! ENVIRONMENT, FILES and SEE ALSO.

use clap_mangen::Man;
use std::io::Write;

/// Every page of the manual for `top` (the public command tree): the name
/// of each page (`contend`, `contend-lock`, ...) and its roff.
pub fn pages(top: &clap::Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let subs: Vec<&clap::Command> = top.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    // SEE ALSO names every page there is.
    let every = std::iter::once("contend(1)".to_string())
        .chain(subs.iter().map(|s| format!("contend-{}(1)", s.get_name())))
        .collect::<Vec<_>>()
        .join(", ");
    let top_page = Page { sub: None, measuring: true, every: &every };
    let mut pages = vec![("contend".to_string(), page(top, "contend", &top_page)?)];
    for sub in subs {
        let name = format!("contend-{}", sub.get_name());
        // A subcommand's version is the top's once clap builds the tree;
        // the page is made before that.
        let sub = sub.clone().version(env!("CARGO_PKG_VERSION"));
        let this = Page { sub: Some(sub.get_name()), measuring: super::measures(&sub), every: &every };
        pages.push((name.clone(), page(&sub, &name, &this)?));
    }
    Ok(pages)
}

/// What our sections of a page depend on.
struct Page<'a> {
    /// The subcommand (None: the top page, which speaks for all).
    sub: Option<&'a str>,
    /// It measures (see [`super::measures`]): a signal ends it with what
    /// it measured.
    measuring: bool,
    /// Every page of the manual, for SEE ALSO.
    every: &'a str,
}

/// One page: clap_mangen's sections, then ours before the version.
fn page(cmd: &clap::Command, title: &str, p: &Page<'_>) -> std::io::Result<Vec<u8>> {
    let man = Man::new(cmd.clone()).title(title).section("1").manual("contend manual");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    if cmd.get_after_help().is_some() || cmd.get_after_long_help().is_some() {
        man.render_extra_section(&mut out)?;
    }
    for (heading, body) in sections(p) {
        write!(out, ".SH \"{heading}\"\n{}", roff(&body))?;
    }
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO for a page, as
/// paragraphs of plain text.
fn sections(p: &Page<'_>) -> Vec<(&'static str, Vec<String>)> {
    let (sub, measuring) = (p.sub, p.measuring);
    let mut exit = vec!["0: done; everything asked for was measured and written.".to_string()];
    exit.push(match sub {
        Some("compare") => "1: a regression: a point significantly slower by more than --threshold.".into(),
        Some("run") => "1: a failure during the run: the program exited non-zero or was killed, left \
                        without its report, or stalled; what was measured before it is reported."
            .into(),
        _ => "1: a failure during a run (a stalled lock, a worker that died, an export that could not \
              be written), named in one error line."
            .into(),
    });
    exit.push(
        "2: a usage error or a refusal before anything was measured: a bad value, a flag this command \
         does not take, a feature this machine or user lacks."
            .into(),
    );
    if measuring {
        exit.push(
            "128+N: ended by signal N (SIGINT, SIGTERM, SIGHUP or SIGQUIT; Ctrl-C gives 130), after \
             reporting and exporting what was measured and removing every resource the run made."
                .into(),
        );
    }
    let mut env = vec![
        "NO_COLOR: honoured. contend's own output (tables, warnings, the progress bar) carries no \
         colour; with NO_COLOR set, the styling of help and usage errors is off too."
            .to_string(),
        "XDG_RUNTIME_DIR: where the per-user ledger (and `contend run`'s interposer copy) live, as \
         $XDG_RUNTIME_DIR/contend; without it /run/user/UID/contend, else /tmp/contend-UID."
            .into(),
    ];
    if matches!(sub, None | Some("run")) {
        env.push(
            "CONTEND_INTERPOSER: the interposer library `contend run` preloads, instead of the one \
             contend carries (--interposer wins over both)."
                .into(),
        );
        env.push(
            "LD_PRELOAD: kept, with the interposer put first, so a program's own preloads still \
             load."
                .into(),
        );
    }
    if matches!(sub, None | Some("alloc")) {
        env.push("GLIBC_TUNABLES: set per allocator from --allocator glibc:NAME=VALUE.".into());
    }
    if matches!(sub, None | Some("lock") | Some("tune")) {
        env.push(
            "GLIBC_TUNABLES: set to glibc.pthread.mutex_spin_count=N, and nothing else, in the child \
             contend that makes each run of a --glibc-spin point."
                .into(),
        );
    }
    let files = vec![
        "$XDG_RUNTIME_DIR/contend/ (or /run/user/UID/contend/, /tmp/contend-UID/): a directory \
         owned by the user, mode 0700, holding the ledger of resources each run creates (SysV \
         semaphore sets, lock directories), which `contend cleanup` removes after a SIGKILL, and \
         the interposer copy libcontend_interpose-HASH.so."
            .to_string(),
        "/dev/shm/contend-*: the private lock directories of file-lock runs (--lock-dir moves \
         them)."
            .into(),
        "/sys/kernel/tracing: tracefs, for futex counts (--count-futex) and wakeup's ftrace \
         tagging (root)."
            .into(),
    ];
    let mut see = vec![p.every.to_string()];
    see.push(
        match sub {
            Some("lock" | "tune") => {
                "futex(2), futex(7), pthread_mutex_lock(3), flock(2), fcntl(2), semop(2), perf-bench(1)"
            }
            Some("wakeup") => {
                "sem_post(3), semop(2), futex(2), eventfd(2), pipe(2), sched_setscheduler(2), cyclictest(8)"
            }
            Some("alloc") => "malloc(3), mallopt(3), tunables in the glibc manual",
            Some("run") => "ld.so(8), pthread_mutex_lock(3), perf(1), strace(1), bpftrace(8)",
            Some("compare" | "report" | "plot") => "hyperfine(1), gnuplot(1)",
            _ => "futex(2), futex(7), pthread_mutex_lock(3), perf-bench(1), cyclictest(8)",
        }
        .into(),
    );
    see.push("The documentation of each experiment: docs/ in contend's source tree.".into());
    vec![("EXIT STATUS", exit), ("ENVIRONMENT", env), ("FILES", files), ("SEE ALSO", see)]
}

/// `contend man`: one page printed, or every page written to --dir.
pub fn run(args: &super::ManArgs) -> anyhow::Result<std::process::ExitCode> {
    let pages = pages(&super::tree::public_command())?;
    if let Some(dir) = &args.dir {
        // Every page checked before any is written; each through the
        // exports' sink (another user's link or FIFO is refused).
        let sinks = pages
            .iter()
            .map(|(name, _)| crate::output::sink::Sink::open("--dir", &dir.join(format!("{name}.1"))))
            .collect::<Result<Vec<_>, _>>()?;
        for (sink, (_, roff)) in sinks.into_iter().zip(&pages) {
            sink.write_bytes(roff)?;
        }
        println!("{} pages written to {}", pages.len(), dir.display());
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let want = args.command.as_deref().map_or("contend".to_string(), |c| format!("contend-{c}"));
    match pages.iter().find(|(name, _)| *name == want) {
        Some((_, roff)) => crate::output::sink::print(&String::from_utf8_lossy(roff))
            .map(|()| std::process::ExitCode::SUCCESS),
        None => {
            let names: Vec<&str> = pages.iter().skip(1).map(|(n, _)| &n["contend-".len()..]).collect();
            eprintln!(
                "error: no manual page for `{}`{}; the commands: {}",
                args.command.as_deref().unwrap_or_default(),
                crate::model::value::suggest::did_you_mean(
                    args.command.as_deref().unwrap_or_default(),
                    names.iter().copied()
                ),
                names.join(", ")
            );
            Ok(std::process::ExitCode::from(2))
        }
    }
}

/// Paragraphs as roff: each its own `.PP`, with the characters roff
/// treats specially escaped (backslash, a leading dot or quote, and the
/// minus sign, which roff would otherwise print as a hyphen).
fn roff(paragraphs: &[String]) -> String {
    let mut out = String::new();
    for p in paragraphs {
        let text = p.replace('\\', "\\e").replace('-', "\\-");
        let text = if text.starts_with('.') || text.starts_with('\'') { format!("\\&{text}") } else { text };
        out += &format!(".PP\n{text}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_has_the_reader_sections() {
        let top = clap::Command::new("contend")
            .subcommand(
                clap::Command::new("lock")
                    .arg(clap::Arg::new("threads").long("threads"))
                    .arg(clap::Arg::new("export_json").long("export-json")),
            )
            .subcommand(clap::Command::new("compare"));
        let pages = pages(&top).unwrap();
        assert_eq!(
            pages.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["contend", "contend-lock", "contend-compare"]
        );
        for (name, roff) in &pages {
            let text = String::from_utf8_lossy(roff);
            assert!(text.contains(&format!(".TH {name} 1")), "{text}");
            for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
                assert!(text.contains(&format!(".SH \"{section}\"")), "{name} lacks {section}");
            }
        }
        let compare = String::from_utf8_lossy(&pages[2].1);
        assert!(compare.contains("a regression") && !compare.contains("128+N"), "{compare}");
        let lock = String::from_utf8_lossy(&pages[1].1);
        assert!(lock.contains("128+N"), "a measuring command says what a signal does: {lock}");
        assert!(lock.contains("contend\\-compare(1)"), "SEE ALSO names every page: {lock}");
        assert!(roff(&["-x \\ .y".into()]).contains("\\-x \\e .y"));
    }
}
