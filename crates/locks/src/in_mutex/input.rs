//! What `contend run` tells the interposer, stated once: the environment
//! variables it sets for each execution of a program, and the grammar of
//! each value, with the writer contend uses and the parser the interposer
//! uses side by side and round-trip tested (as [`super::report`] is for
//! what flows back).
//!
//! The parsers allocate nothing unless they fail: the interposer runs
//! them inside the program's first lock call, where an allocation could
//! take the allocator's own mutex; a failure ends the program anyway.

use super::Swap;
use std::ffi::CStr;

/// One environment variable of the protocol.
#[derive(Clone, Copy)]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// The same, NUL-terminated, for `getenv`.
    pub c_name: &'static CStr,
}

macro_rules! vars {
    ($( $(#[$doc:meta])* $id:ident = $name:literal; )*) => {
        $(
            $(#[$doc])*
            pub const $id: Var = Var {
                name: $name,
                c_name: match CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes()) {
                    Ok(c) => c,
                    Err(_) => panic!("a variable's name holds no NUL"),
                },
            };
        )*
        /// Every variable of the protocol.
        pub const ALL: &[Var] = &[$($id),*];
    };
}

vars! {
    /// The lock every plain mutex gets: a swappable lock's name
    /// ([`Swap::name`]); empty or `pthread` for glibc's mutex.
    LOCK = "CONTEND_RUN_LOCK";
    /// Per-mutex choice: [`write_chosen`]'s `LOCK@0xADDR;...`.
    MUTEXES = "CONTEND_RUN_MUTEXES";
    /// The delay method of `--what-if --delays`: [`write_at`]'s
    /// `0xADDR@NS`, nanoseconds added to each of the mutex's sections.
    DELAY = "CONTEND_RUN_DELAY";
    /// A virtual speedup: [`write_at`]'s `0xADDR@PERCENT`.
    SPEEDUP = "CONTEND_RUN_SPEEDUP";
    /// `1`: profile every acquisition ([`PROFILE_ON`]).
    PROFILE = "CONTEND_RUN_PROFILE";
    /// The execution's directory, where the interposer writes its report.
    DIR = "CONTEND_RUN_DIR";
    /// That directory's identity: [`write_dir_id`]'s `DEV:INO:UID`.
    DIR_ID = "CONTEND_RUN_DIR_ID";
    /// A futex wake-up's cost measured by contend, ns.
    WAKE_NS = "CONTEND_WAKE_NS";
    /// Padding that keeps the environment's size the same in every
    /// execution (contend's side only: the interposer ignores it).
    PAD = "CONTEND_RUN_PAD";
}

/// [`PROFILE`]'s value that turns the profile on.
pub const PROFILE_ON: &str = "1";

/// A mutex's address as the protocol writes it: `0x` and hex digits.
pub fn write_address(address: u64) -> String {
    format!("0x{address:x}")
}

/// Parses [`write_address`]'s form; 0 is no mutex.
pub fn parse_address(at: &str) -> Result<usize, String> {
    at.strip_prefix("0x")
        .and_then(|h| usize::from_str_radix(h, 16).ok())
        .filter(|&a| a != 0)
        .ok_or_else(|| format!("{at}: not a mutex address (0x...)"))
}

/// One mutex and a number: `0xADDR@VALUE` ([`DELAY`], [`SPEEDUP`]).
pub fn write_at(address: u64, value: u64) -> String {
    format!("{}@{value}", write_address(address))
}

/// Parses [`write_at`]'s form; `unit` names the value in the error
/// ("nanoseconds", "percent").
pub fn parse_at(spec: &str, unit: &str) -> Result<(usize, u64), String> {
    let (at, value) = spec.split_once('@').ok_or_else(|| format!("{spec}: not 0xADDRESS@{unit}"))?;
    let address = parse_address(at)?;
    let value = value.parse().map_err(|_| format!("{value}: not a number of {unit}"))?;
    Ok((address, value))
}

/// The per-mutex choice ([`MUTEXES`]): `LOCK@0xADDR` items joined by `;`.
pub fn write_chosen(items: &[(Swap, u64)]) -> String {
    items.iter().map(|&(s, a)| format!("{}@{}", s.name(), write_address(a))).collect::<Vec<_>>().join(";")
}

/// The items of [`write_chosen`]'s form, each parsed or the error that
/// says what is wrong with it (a lock that is glibc's or does not fit is
/// one).
pub fn chosen_items(spec: &str) -> impl Iterator<Item = Result<(Swap, usize), String>> + '_ {
    spec.split(';').filter(|s| !s.is_empty()).map(|item| {
        let (lock, at) = item.split_once('@').ok_or_else(|| format!("{item}: not LOCK@0xADDRESS"))?;
        let swap = Swap::parse(lock)
            .filter(|s| *s != Swap::Pthread && s.check().is_ok())
            .ok_or_else(|| format!("{lock}: not a lock that fits in a pthread_mutex_t"))?;
        Ok((swap, parse_address(at)?))
    })
}

/// The execution directory's identity ([`DIR_ID`]).
pub fn write_dir_id(dev: u64, ino: u64, uid: u32) -> String {
    format!("{dev}:{ino}:{uid}")
}

/// Parses [`write_dir_id`]'s form.
pub fn parse_dir_id(id: &str) -> Option<(u64, u64, u32)> {
    let mut parts = id.split(':');
    let dev = parts.next()?.parse().ok()?;
    let ino = parts.next()?.parse().ok()?;
    let uid = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((dev, ino, uid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_reads_back_as_written() {
        assert_eq!(parse_at(&write_at(0x5555_5555_8080, 250), "nanoseconds"), Ok((0x5555_5555_8080, 250)));
        let chosen = [(Swap::Tas, 0x20), (Swap::Mcs, 0x7fff_0040)];
        let back: Vec<_> = chosen_items(&write_chosen(&chosen)).collect::<Result<_, _>>().unwrap();
        assert_eq!(back, vec![(Swap::Tas, 0x20), (Swap::Mcs, 0x7fff_0040)]);
        assert_eq!(parse_dir_id(&write_dir_id(64769, 1234567, 1000)), Some((64769, 1234567, 1000)));
        assert_eq!(parse_address(&write_address(0xdead_beef)), Ok(0xdead_beef));
    }

    #[test]
    fn a_malformed_value_is_refused_with_what_is_wrong() {
        assert!(parse_at("0x10", "percent").unwrap_err().contains("0xADDRESS@percent"));
        assert!(parse_at("16@5", "percent").unwrap_err().contains("not a mutex address"));
        assert!(parse_at("0x0@5", "percent").is_err(), "0 is no mutex");
        assert!(parse_at("0x10@five", "nanoseconds").unwrap_err().contains("not a number of nanoseconds"));
        let errors: Vec<String> =
            chosen_items("tas@0x10;pthread@0x20;nolock;wat@0x30").filter_map(Result::err).collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("pthread") && errors[1].contains("nolock") && errors[2].contains("wat"));
        assert_eq!(parse_dir_id("1:2"), None);
        assert_eq!(parse_dir_id("1:2:3:4"), None);
    }

    #[test]
    fn the_names_are_distinct_and_nul_terminated_alike() {
        for (i, v) in ALL.iter().enumerate() {
            assert_eq!(v.c_name.to_str().unwrap(), v.name);
            assert!(v.name.starts_with("CONTEND_"));
            assert!(ALL[..i].iter().all(|w| w.name != v.name));
        }
    }
}
