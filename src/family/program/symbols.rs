//! Names a call site: `function (file:line)` from the module's DWARF,
//! else the dynamic symbol the interposer's dladdr found (dladdr checks
//! the symbol's size; the nearest symbol of a stripped binary's table,
//! which the addr2line crate would give, is usually another function),
//! else `module+0xoffset` (the offset is what `addr2line -e MODULE`
//! takes once debug symbols are installed). Uses the addr2line crate (gimli-rs), which reads DWARF and
//! symbol tables without running a tool per address.

use std::collections::HashMap;
use std::path::Path;

/// Loaded modules, each read once per report.
#[derive(Default)]
pub struct Symbolizer {
    modules: HashMap<String, Option<(addr2line::Loader, bool)>>,
}

/// Whether the ELF file at `path` is position-independent (ET_DYN: its
/// addresses are offsets from its load base) rather than fixed (ET_EXEC).
fn relocatable(path: &str) -> bool {
    use std::io::Read;
    let mut header = [0u8; 18];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut header));
    // e_type, little-endian on the machines the interposer supports.
    read.is_ok() && u16::from_le_bytes([header[16], header[17]]) == 3
}

impl Symbolizer {
    /// The name of the call at `site` (a return address) in `module`
    /// loaded at `base`; `dynamic` is dladdr's nearest dynamic symbol.
    pub fn name(
        &mut self,
        site: u64,
        module: &str,
        base: u64,
        dynamic: Option<(&str, u64)>,
    ) -> (String, u64) {
        let call = site.saturating_sub(1);
        let offset = call.saturating_sub(base);
        let short = Path::new(module).file_name().map_or(module.to_string(), |n| n.to_string_lossy().into());
        if site == 0 || module == "-" {
            return ("(unknown site)".into(), 0);
        }
        let loaded = self
            .modules
            .entry(module.to_string())
            .or_insert_with(|| addr2line::Loader::new(module).ok().map(|l| (l, relocatable(module))));
        if let Some((loader, pie)) = loaded {
            let probe = if *pie { offset } else { call };
            // The innermost frame: with inlining, the function that
            // really made the call, and its line.
            if let Ok(mut frames) = loader.find_frames(probe) {
                if let Ok(Some(frame)) = frames.next() {
                    let function =
                        frame.function.as_ref().and_then(|f| f.demangle().ok()).map(|f| f.into_owned());
                    if let Some(loc) = frame.location.as_ref() {
                        if let (Some(file), Some(line)) = (loc.file, loc.line) {
                            let file =
                                Path::new(file).file_name().map_or(file.into(), |n| n.to_string_lossy());
                            let function = function.or_else(|| loader.find_symbol(probe).map(demangle));
                            return (format!("{} ({file}:{line})", function.unwrap_or(short)), offset);
                        }
                    }
                }
            }
        }
        if let Some((name, addr)) = dynamic {
            return (format!("{}+{:#x} ({short})", demangle(name), call.saturating_sub(addr)), offset);
        }
        (format!("{short}+{offset:#x}"), offset)
    }
}

/// Rust and C++ names as people write them (C names pass through).
fn demangle(name: &str) -> String {
    addr2line::demangle_auto(name.into(), None).into_owned()
}
