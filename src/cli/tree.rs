//! The command tree users see: without the hidden commands (the children
//! contend starts), and for completion scripts with the names a flag
//! takes.

use super::Cli;
use clap::CommandFactory;

/// The command tree without hidden commands (the allocator child), which
/// clap_complete would otherwise offer to complete.
pub fn public_command() -> clap::Command {
    let full = Cli::command();
    let public = full.get_subcommands().filter(|s| !s.is_hide_set()).cloned();
    clap::Command::new("contend")
        .version(env!("CARGO_PKG_VERSION"))
        .about(full.get_about().cloned().unwrap_or_default())
        .propagate_version(true)
        .subcommand_required(true)
        .subcommands(public)
}

/// The command tree for completion scripts: the flags that take names of
/// locks, primitives or allocators (comma lists, parsed by contend) offer
/// those names, so `--lock <TAB>` completes `futex`, not file names. One
/// name per completion: the shells complete the first item of a list.
fn completing_names(cmd: clap::Command) -> clap::Command {
    use clap::builder::PossibleValuesParser;
    let locks: Vec<&str> = crate::family::lock::registry::offered().collect();
    let swaps: Vec<&str> = locks::in_mutex::Swap::all().map(|s| s.name()).collect();
    let primitives: Vec<&str> = crate::family::wakeup::registry::PRIMITIVES.iter().map(|p| p.name).collect();
    let names = |arg: &'static str, names: Vec<&'static str>| {
        move |c: clap::Command| c.mut_arg(arg, |a| a.value_parser(PossibleValuesParser::new(names)))
    };
    cmd.mut_subcommand("lock", names("lock", locks.clone()))
        .mut_subcommand("tune", names("lock", locks))
        .mut_subcommand("run", names("lock", swaps))
        .mut_subcommand("wakeup", names("primitive", primitives))
        .mut_subcommand("alloc", names("allocator", crate::family::alloc::registry::NAMES.to_vec()))
}

/// `contend completions SHELL`: the script on stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<std::process::ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut completing_names(public_command()), "contend", &mut out);
    crate::output::sink::print(&String::from_utf8_lossy(&out))?;
    Ok(std::process::ExitCode::SUCCESS)
}
