//! Names a call site with the best the machine has, in this order:
//! `function (file:line)` from DWARF, in the module or in its separate
//! debug file (Debian's -dbgsym packages put it under
//! /usr/lib/debug/.build-id/, found by the module's build-id, or beside
//! it by `.gnu_debuglink`); `function` from a full symbol table
//! (`.symtab`); the dynamic symbol (`.dynsym`) that contains the address,
//! checked against the symbol's size (the nearest entry of a stripped
//! binary's dynamic table is usually another function), read here after
//! the run rather than by dladdr in the program, whose linear scans of a
//! large library's table made the report cost db_bench 15% of its CPU;
//! else
//! `module+0xoffset`, the offset `addr2line -e MODULE` takes once debug
//! symbols are installed. Uses the addr2line crate (gimli-rs), which reads
//! DWARF and symbol tables without running a tool per address, and the
//! `object` crate it is built on for the build-id and debug link.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where separate debug files live.
const DEBUG_ROOT: &str = "/usr/lib/debug";

/// What one module can tell.
struct Module {
    /// DWARF and symbols, from the separate debug file if there is one.
    loader: Option<addr2line::Loader>,
    /// Position-independent: addresses are offsets from the load base.
    pie: bool,
    /// The loaded file has a full symbol table.
    symtab: bool,
    /// Its dynamic symbols that are functions with a size: (start, end,
    /// name), by start (addresses as the file has them).
    dynamic: Vec<(u64, u64, String)>,
}

/// The sized function symbols of `file`'s dynamic table, by address.
fn dynamic_functions(file: &object::File) -> Vec<(u64, u64, String)> {
    use object::{Object, ObjectSymbol};
    let mut out: Vec<(u64, u64, String)> = file
        .dynamic_symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0 && s.is_definition())
        .filter_map(|s| Some((s.address(), s.address() + s.size(), s.name().ok()?.to_string())))
        .collect();
    out.sort();
    out
}

/// Loaded modules, each read once per report, and the hint for each
/// module without symbols (one `dpkg -S` per module, not per run).
#[derive(Default)]
pub struct Symbolizer {
    modules: HashMap<String, Module>,
    hints: HashMap<String, String>,
}

/// The separate debug file of the ELF file `path` whose bytes are `data`:
/// by build-id under /usr/lib/debug/.build-id, else by `.gnu_debuglink`
/// beside it, in its `.debug/`, or under /usr/lib/debug.
pub(crate) fn debug_file(path: &Path, file: &object::File) -> Option<PathBuf> {
    use object::Object;
    if let Ok(Some(id)) = file.build_id() {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        if hex.len() > 2 {
            let p =
                Path::new(DEBUG_ROOT).join(".build-id").join(&hex[..2]).join(format!("{}.debug", &hex[2..]));
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let (name, _crc) = file.gnu_debuglink().ok()??;
    let name = OsStr::from_bytes(name);
    let dir = path.parent()?;
    let under_root = Path::new(DEBUG_ROOT).join(dir.strip_prefix("/").unwrap_or(dir)).join(name);
    [dir.join(name), dir.join(".debug").join(name), under_root].into_iter().find(|p| p.is_file() && p != path)
}

/// Whether the ELF file `data` has a symbol table beyond the dynamic one.
fn has_symtab(data: &[u8]) -> bool {
    use object::Object;
    object::File::parse(data).is_ok_and(|f| f.symbol_table().is_some())
}

impl Module {
    fn open(path: &str) -> Module {
        let none = Module { loader: None, pie: false, symtab: false, dynamic: Vec::new() };
        let Ok(data) = std::fs::read(path) else { return none };
        let Ok(file) = object::File::parse(&*data) else { return none };
        // ET_DYN (a shared object or a PIE): its addresses are offsets.
        let pie = object::Object::kind(&file) == object::ObjectKind::Dynamic;
        let (source, symtab) = match debug_file(Path::new(path), &file) {
            Some(debug) => {
                let symtab = std::fs::read(&debug).is_ok_and(|d| has_symtab(&d));
                (debug, symtab)
            }
            None => (PathBuf::from(path), object::Object::symbol_table(&file).is_some()),
        };
        let dynamic = dynamic_functions(&file);
        Module { loader: addr2line::Loader::new(&source).ok(), pie, symtab, dynamic }
    }
}

impl Symbolizer {
    /// The name of the call at `site` (a return address) in `module`
    /// loaded at `base`; `dynamic` is a nearest dynamic symbol the program
    /// found itself (older reports; now None, and the module's own
    /// dynamic table is read here).
    pub fn name(&mut self, site: u64, module: &str, base: u64, dynamic: Option<(&str, u64)>) -> Named {
        let call = site.saturating_sub(1);
        let offset = call.saturating_sub(base);
        let short = short_name(module);
        if site == 0 || module == "-" {
            return Named { text: "(unknown site)".into(), offset: 0, by_offset: false, toolchain: false };
        }
        let m = self.modules.entry(module.to_string()).or_insert_with(|| Module::open(module));
        if let Some(loader) = &m.loader {
            let probe = if m.pie { offset } else { call };
            // With inlining, the innermost frame is the function that
            // really made the call; past the toolchain's headers (a C++
            // std::mutex::lock inlined into its caller is gthr-default.h's
            // __gthread_mutex_lock in every mutex's stack) to the first
            // frame of the program's own source, when there is one.
            if let Ok(mut frames) = loader.find_frames(probe) {
                let mut chosen: Option<(String, bool)> = None;
                while let Ok(Some(frame)) = frames.next() {
                    let Some((file, line)) = frame.location.as_ref().and_then(|l| Some((l.file?, l.line?)))
                    else {
                        continue;
                    };
                    let function =
                        frame.function.as_ref().and_then(|f| f.demangle().ok()).map(|f| f.into_owned());
                    let function = function.or_else(|| loader.find_symbol(probe).map(demangle));
                    let base = Path::new(file).file_name().map_or(file.into(), |n| n.to_string_lossy());
                    let text = format!("{} ({base}:{line})", function.unwrap_or_else(|| short.clone()));
                    let toolchain = toolchain_header(file);
                    if chosen.is_none() || !toolchain {
                        chosen = Some((text, toolchain));
                    }
                    if !toolchain {
                        break;
                    }
                }
                if let Some((text, toolchain)) = chosen {
                    return Named { text, offset, by_offset: false, toolchain };
                }
            }
            if m.symtab {
                if let Some(function) = loader.find_symbol(probe) {
                    return Named {
                        text: format!("{} ({short})", demangle(function)),
                        offset,
                        by_offset: false,
                        toolchain: false,
                    };
                }
            }
        }
        let probe = if m.pie { offset } else { call };
        let i = m.dynamic.partition_point(|(start, _, _)| *start <= probe);
        let own = i.checked_sub(1).map(|i| &m.dynamic[i]).filter(|(_, end, _)| probe < *end);
        if let Some((start, _, name)) = own {
            let text = format!("{}+{:#x} ({short})", demangle(name), probe - start);
            return Named { text, offset, by_offset: false, toolchain: false };
        }
        if let Some((name, addr)) = dynamic {
            let text = format!("{}+{:#x} ({short})", demangle(name), call.saturating_sub(addr));
            return Named { text, offset, by_offset: false, toolchain: false };
        }
        Named { text: format!("{short}+{offset:#x}"), offset, by_offset: true, toolchain: false }
    }

    /// How to get names for `module` (asked once per module).
    pub fn hint(&mut self, module: &str) -> String {
        self.hints.entry(module.to_string()).or_insert_with(|| how_to_name(module)).clone()
    }
}

/// A call site, named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// As people read it.
    pub text: String,
    /// The call's offset in its module.
    pub offset: u64,
    /// Only `module+0xoffset` was possible: the module has no symbols.
    pub by_offset: bool,
    /// The call is in a toolchain header's code (libstdc++'s
    /// std::mutex::lock, std::lock_guard, gthr-default.h), even after the
    /// inlined frames: a wrapper of every mutex that goes through it.
    pub toolchain: bool,
}

/// Whether DWARF's `file` is a header of the compiler's or the C
/// library's (the C++ standard library's mutex wrappers live there), or
/// the source of Rust's standard library (`/rustc/<commit>/library/...`,
/// as rustc records it: std's Mutex is inlined into every caller) or of
/// a crate from the registry (parking_lot, lock_api).
fn toolchain_header(file: &str) -> bool {
    ["/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm", "/rustc/"].iter().any(|p| file.starts_with(p))
        || file.contains("/include/c++/")
        || file.contains("/.cargo/registry/src/")
}

/// The paths dpkg may know `module` by. On merged-/usr Debian, /lib is a
/// link to /usr/lib, and a package registers its files under one or the
/// other (libc6 under /lib/x86_64-linux-gnu, libjemalloc2 under
/// /usr/lib/x86_64-linux-gnu), while the loader names a module by the
/// path it opened, perhaps a version link (libx264.so.164 for the file
/// the package ships). So: the path, its canonical form, and each one's
/// twin across the /usr link.
fn dpkg_paths(module: &str) -> Vec<String> {
    let mut paths = vec![module.to_string()];
    if let Ok(real) = std::fs::canonicalize(module) {
        paths.push(real.to_string_lossy().into_owned());
    }
    for p in paths.clone() {
        let twin = match p.strip_prefix("/usr") {
            Some(rest)
                if rest.starts_with("/lib") || rest.starts_with("/bin") || rest.starts_with("/sbin") =>
            {
                rest.to_string()
            }
            _ if p.starts_with("/lib") || p.starts_with("/bin") || p.starts_with("/sbin") => {
                format!("/usr{p}")
            }
            _ => continue,
        };
        paths.push(twin);
    }
    let mut seen = std::collections::BTreeSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    paths
}

/// The Debian package that installed `module`, if dpkg knows it by any of
/// its paths.
fn package_of(module: &str) -> Option<String> {
    dpkg_paths(module).iter().find_map(|path| {
        let out = std::process::Command::new("dpkg").args(["-S", path]).output().ok()?;
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines().next()?.split(':').next().map(|p| p.trim().to_string())
    })
}

/// How to get names for `module`: its Debian package's debug symbols, or
/// a build with `-g`.
fn how_to_name(module: &str) -> String {
    match package_of(module) {
        Some(p) => format!(
            "{module} has no debug symbols: install {p}-dbgsym (Debian's debug archive, \
             deb.debian.org/debian-debug) for function and line names"
        ),
        None => format!("{module} has no debug symbols: rebuild it with -g for function and line names"),
    }
}

/// A module as the tables name it: its file name.
pub(crate) fn short_name(module: &str) -> String {
    Path::new(module).file_name().map_or(module.to_string(), |n| n.to_string_lossy().into_owned())
}

/// Rust and C++ names as people write them (C names pass through).
pub(crate) fn demangle(name: &str) -> String {
    addr2line::demangle_auto(name.into(), None).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_is_asked_for_by_its_path_its_canonical_one_and_their_usr_twins() {
        let paths = dpkg_paths("/lib/x86_64-linux-gnu/no-such-lib.so.1");
        assert_eq!(
            paths,
            ["/lib/x86_64-linux-gnu/no-such-lib.so.1", "/usr/lib/x86_64-linux-gnu/no-such-lib.so.1"]
        );
        let paths = dpkg_paths("/usr/bin/no-such-program");
        assert_eq!(paths, ["/usr/bin/no-such-program", "/bin/no-such-program"]);
        assert_eq!(dpkg_paths("/opt/x/lib.so"), ["/opt/x/lib.so"], "no twin outside the merged folders");
    }

    #[test]
    fn debian_packages_are_found_whichever_side_of_the_usr_link_they_registered() {
        if std::process::Command::new("dpkg").arg("--version").output().is_err() {
            return; // not Debian: the hint says "rebuild with -g", which the other test covers
        }
        // libc6 registers /lib/..., and the loader may name it /usr/lib/...
        for libc in ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"] {
            if std::path::Path::new(libc).exists() {
                assert_eq!(package_of(libc).as_deref(), Some("libc6"), "{libc}");
            }
        }
    }
}
