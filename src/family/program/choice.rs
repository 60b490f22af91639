//! Per-mutex lock choice: `--lock adaptive@MUTEX`, the chosen mutexes
//! swapped and every other one left to glibc (crates/interpose's
//! `chosen.rs` does it in the program).
//!
//! A point is one lock for the whole program (`adaptive`) or a choice:
//! `LOCK@MUTEX`, several joined by `+` (`adaptive@0x4040c0+mcs@queue_put`).
//! MUTEX is an address from a profile (`0x4040c0`; the program runs
//! without address randomization wherever mutexes are chosen by address,
//! `--aslr`, so it names the same mutex in the next execution of a
//! profile made so) or any name the profile prints for it (where it waits,
//! each contended stack's and release site's place, its first
//! acquisition's): whole, its function (a C++ one with or without its
//! parameters) or its `file:line`; or `module+0xoffset`. A name is
//! turned into addresses by one profiled execution under glibc's mutex
//! before the measured ones (every mutex that matches is chosen: a call
//! site that creates many mutexes names them all).

use crate::model::program::MutexProfile;
use locks::in_mutex::{input, Swap};

/// Which mutexes a choice names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One address.
    Address(u64),
    /// A name from the profile.
    Site(String),
}

/// One `LOCK@MUTEX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The lock the mutex gets.
    pub lock: Swap,
    /// The mutex.
    pub target: Target,
}

/// Mutexes that one execution can choose (the interposer's table).
pub const MAX_MUTEXES: usize = 16;

/// Splits a point's name into its choices; None for a whole-program lock
/// (no `@`). A `+` inside a name (`pigz+0x91a5`) stays in it: a new
/// choice starts only at a part that has its own `@`.
pub fn parse(point: &str) -> Result<Option<Vec<Choice>>, String> {
    if !point.contains('@') {
        return Ok(None);
    }
    let mut items: Vec<String> = Vec::new();
    for part in point.split('+') {
        match items.last_mut() {
            Some(last) if !part.contains('@') => {
                last.push('+');
                last.push_str(part);
            }
            _ => items.push(part.to_string()),
        }
    }
    let mut out = Vec::new();
    for item in items {
        let (lock, at) = item.split_once('@').ok_or_else(|| format!("{item}: not LOCK@MUTEX"))?;
        let swap = Swap::parse(lock).filter(|s| s.offered() && *s != Swap::Pthread).ok_or_else(|| {
            let can: Vec<&str> = Swap::all().filter(|s| *s != Swap::Pthread).map(|s| s.name()).collect();
            format!("{lock}@{at}: {lock} is not a lock a mutex can be given; these can: {}", can.join(", "))
        })?;
        swap.check().map_err(|why| format!("{lock}: {why}"))?;
        let at = at.trim();
        if at.is_empty() {
            return Err(format!(
                "{item}: no mutex after @ (an address from the profile, or a name it prints)"
            ));
        }
        let target = target(at)?;
        if out.iter().any(|c: &Choice| c.target == target) {
            return Err(format!("{point}: {at} is chosen twice (a mutex takes one lock)"));
        }
        out.push(Choice { lock: swap, target });
    }
    Ok(Some(out))
}

/// Splits a comma-separated list (`--lock`, `--what-if`) at the commas
/// outside brackets, so that a C++ name the profile printed stays whole:
/// `tas@shop::Ledger::take(int, long),mcs` is two items. Angle brackets
/// count too (`std::map<int, int>::find`) unless they do not pair up
/// (`operator<`), in which case only (), [] and {} do.
pub fn split_list(text: &str) -> Vec<String> {
    let split = |angles: bool| -> Option<Vec<String>> {
        let (mut out, mut item, mut depth) = (Vec::new(), String::new(), 0i32);
        for c in text.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                '<' if angles => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                '>' if angles => depth -= 1,
                ',' if depth == 0 => {
                    out.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            if depth < 0 {
                return None;
            }
            item.push(c);
        }
        out.push(item);
        (depth == 0).then_some(out)
    };
    split(true).or_else(|| split(false)).unwrap_or_else(|| text.split(',').map(str::to_string).collect())
}

/// What MUTEX names: an address (`0x...`, not 0) or a name from the
/// profile (`module+0x...` included).
pub fn target(at: &str) -> Result<Target, String> {
    match at.strip_prefix("0x").map(|h| u64::from_str_radix(h, 16)) {
        Some(Ok(a)) if a != 0 => Ok(Target::Address(a)),
        Some(_) if !at.contains('+') => Err(format!("{at}: not an address")),
        _ => Ok(Target::Site(at.to_string())),
    }
}

/// Whether the profile's mutex `m` is the one `name` names: any name the
/// profile printed for it (where it waits, each of its contended stacks'
/// and release sites' places, its first acquisition's, and those of its
/// other call sites, which every execution records), whole, as its
/// function alone, as a C++ function without its parameters, or as its
/// `file:line`; or its `module+0xoffset`.
pub fn names(m: &MutexProfile, name: &str) -> bool {
    let offset = format!("{}+0x{:x}", m.module.rsplit('/').next().unwrap_or(&m.module), m.offset);
    offset == name || printed(m).any(|text| forms(text).any(|f| f == name))
}

/// Every name the profile printed for `m`.
fn printed(m: &MutexProfile) -> impl Iterator<Item = &str> {
    let stacks = m.stacks.iter().chain(&m.first_stack).chain(&m.other_sites);
    let stacks = stacks.filter_map(|s| s.frames.get(s.wrappers));
    let holders = m.holders.iter().filter_map(|h| h.frames.get(h.wrappers));
    [m.waits_at.as_str(), m.site.as_str()].into_iter().chain(stacks.chain(holders).map(String::as_str))
}

/// The ways one printed name may be written: `function (file:line)`,
/// `function`, `file:line`, and a C++ `ns::f(int, long)` as `ns::f`.
fn forms(text: &str) -> impl Iterator<Item = &str> {
    let (function, place) = match text.rsplit_once(" (") {
        Some((f, rest)) if rest.ends_with(')') => (Some(f), Some(&rest[..rest.len() - 1])),
        _ => (None, None),
    };
    let bare = function.and_then(without_parameters);
    [Some(text), function, place, bare].into_iter().flatten()
}

/// `ns::f` of `ns::f(int, std::pair<int, int>) const`'s kind of name
/// ending in its parameter list (None when it has none).
fn without_parameters(function: &str) -> Option<&str> {
    let mut depth = 0;
    for (i, c) in function.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(function[..i].trim_end()).filter(|f| !f.is_empty());
                }
            }
            _ => {}
        }
    }
    None
}

/// The mutexes of the profile that `target` names (an address names
/// itself, mapped or not); the error lists the most waited-on names.
pub fn addresses(target: &Target, mapped: Option<&[MutexProfile]>) -> Result<Vec<u64>, String> {
    match target {
        Target::Address(a) => Ok(vec![*a]),
        Target::Site(name) => {
            let mutexes = mapped.expect("names are mapped before they are resolved");
            let found: Vec<u64> =
                mutexes.iter().filter(|m| m.address != 0 && names(m, name)).map(|m| m.address).collect();
            if found.is_empty() {
                let known: Vec<&str> = mutexes.iter().take(5).map(|m| m.waits_at.as_str()).collect();
                return Err(format!(
                    "{name}: no mutex of the program is named {name} in its profile; the most waited-on \
                     are: {}",
                    known.join("; ")
                ));
            }
            Ok(found)
        }
    }
}

/// The interposer's `CONTEND_RUN_MUTEXES` for `choices`: names turned
/// into addresses with the mapping execution's profile (`mapped`), in
/// which each must match at least one mutex.
pub fn env(choices: &[Choice], mapped: Option<&[MutexProfile]>) -> Result<String, String> {
    let mut out: Vec<(Swap, u64)> = Vec::new();
    for c in choices {
        let found = addresses(&c.target, mapped).map_err(|e| format!("{}@{e}", c.lock.name()))?;
        out.extend(found.into_iter().map(|a| (c.lock, a)));
    }
    out.sort_by_key(|&(_, a)| a);
    out.dedup_by_key(|&mut (_, a)| a);
    if out.len() > MAX_MUTEXES {
        return Err(format!("{} mutexes chosen: at most {MAX_MUTEXES} can be", out.len()));
    }
    Ok(input::write_chosen(&out))
}

/// The addresses an interposer's report label chooses (None: not a
/// per-mutex choice).
pub fn chosen_in(label: &str) -> Option<Vec<u64>> {
    if !label.contains('@') {
        return None;
    }
    Some(input::chosen_items(label).filter_map(Result::ok).map(|(_, a)| a as u64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_splits_into_its_choices_and_keeps_plus_inside_names() {
        assert_eq!(parse("adaptive").unwrap(), None);
        let c = parse("adaptive@0x4040c0+mcs@pigz+0x91a5").unwrap().unwrap();
        assert_eq!(
            c[0],
            Choice { lock: Swap::parse("adaptive").unwrap(), target: Target::Address(0x4040c0) }
        );
        assert_eq!(c[1].target, Target::Site("pigz+0x91a5".into()));
        assert!(parse("pthread@0x10").is_err(), "glibc's mutex is what the others get");
        assert!(parse("clh@0x10").unwrap_err().contains("these can"));
        assert!(parse("tas@").is_err());
        assert!(parse("tas@0xzz").is_err());
    }

    #[test]
    fn lists_split_at_commas_outside_brackets() {
        assert_eq!(
            split_list("pthread,tas@ns::f(int, long),mcs"),
            ["pthread", "tas@ns::f(int, long)", "mcs"]
        );
        assert_eq!(split_list("tas@std::map<int, int>::find,mcs"), ["tas@std::map<int, int>::find", "mcs"]);
        assert_eq!(split_list("tas@operator<,mcs"), ["tas@operator<", "mcs"], "an unpaired < is no bracket");
        assert_eq!(split_list("a,,b"), ["a", "", "b"], "an empty item is kept, to be refused");
    }

    #[test]
    fn any_printed_name_of_a_mutex_names_it() {
        let stack = |frames: &[&str], wrappers| crate::model::program::StackProfile {
            contended: 0,
            wait_ns: 0,
            frames: frames.iter().map(|f| f.to_string()).collect(),
            wrappers,
        };
        let m = MutexProfile {
            waits_at: "shop::Ledger::take(int, long) (m.cc:10)".into(),
            site: "shop::Ledger::take(int, long) (m.cc:10)".into(),
            module: "/bin/m".into(),
            offset: 0x10,
            other_sites: vec![stack(&["lock (w.c:1)", "shop::Ledger::add(int) const (m.cc:9)"], 1)],
            ..MutexProfile::default()
        };
        for name in [
            "shop::Ledger::take(int, long) (m.cc:10)",
            "shop::Ledger::take(int, long)",
            "shop::Ledger::take",
            "m.cc:10",
            "shop::Ledger::add",
            "m.cc:9",
            "m+0x10",
        ] {
            assert!(names(&m, name), "{name}");
        }
        for name in ["lock", "w.c:1", "shop::Ledger", "take"] {
            assert!(!names(&m, name), "{name}: a wrapper's name, or part of a name");
        }
    }

    #[test]
    fn addresses_and_names_become_the_interposers_list() {
        let m = |address, waits_at: &str| MutexProfile {
            address,
            waits_at: waits_at.into(),
            site: waits_at.into(),
            module: "/usr/bin/prog".into(),
            offset: 0x91a5,
            ..MutexProfile::default()
        };
        let profile = vec![m(0x20, "queue_put (q.c:10)"), m(0x30, "other (q.c:40)")];
        let c = parse("tas@q.c:10+mcs@0x40").unwrap().unwrap();
        assert_eq!(env(&c, Some(&profile)).unwrap(), "tas@0x20;mcs@0x40");
        let c = parse("tas@queue_put").unwrap().unwrap();
        assert_eq!(env(&c, Some(&profile)).unwrap(), "tas@0x20");
        let c = parse("tas@prog+0x91a5").unwrap().unwrap();
        assert_eq!(env(&c, Some(&profile)).unwrap(), "tas@0x20;tas@0x30", "one site, two mutexes");
        let c = parse("tas@nowhere").unwrap().unwrap();
        assert!(env(&c, Some(&profile)).unwrap_err().contains("queue_put (q.c:10)"));
        assert_eq!(chosen_in("tas@0x20;mcs@0x40"), Some(vec![0x20, 0x40]));
        assert_eq!(chosen_in("adaptive"), None);
    }
}
