//! Names an address in a process's data, for the futex view's words: the
//! data symbol of a module that contains it (`stats_lock (prog)`, or
//! `table+0x40 (prog)` inside a larger object: an array of locks, a
//! struct), from the module's symbol table, its separate debug file's, or
//! its dynamic one; else the kind of memory it is in, from the process's
//! map (`heap`, `stack`, `anonymous memory`, a shared file). A module's
//! `.bss` lies past its file-backed pages, so a word is matched against
//! the module's loaded segments as the ELF program headers lay them out
//! (shifted by where the loader put the module), not against the map's
//! file mappings alone.

use crate::family::program::symbols::{demangle, short_name};
use crate::measure::futex_view::Mapping;
use std::collections::HashMap;
use std::path::Path;

/// What one module's file says.
#[derive(Default)]
struct Module {
    /// Position-independent: the loader shifts its addresses.
    shifted: bool,
    /// Loaded segments: (vaddr, vaddr + memsz).
    segments: Vec<(u64, u64)>,
    /// Data symbols with a size: (start, end, name), by start.
    data: Vec<(u64, u64, String)>,
}

impl Module {
    fn open(path: &str) -> Module {
        use object::{Object, ObjectSegment, ObjectSymbol};
        let Ok(bytes) = std::fs::read(path) else { return Module::default() };
        let Ok(file) = object::File::parse(&*bytes) else { return Module::default() };
        let shifted = file.kind() == object::ObjectKind::Dynamic;
        let segments =
            file.segments().map(|s| (s.address(), s.address() + s.size())).filter(|s| s.1 > s.0).collect();
        let mut data: Vec<(u64, u64, String)> = Vec::new();
        let mut add = |f: &object::File| {
            for s in f.symbols().chain(f.dynamic_symbols()) {
                if matches!(s.kind(), object::SymbolKind::Data | object::SymbolKind::Unknown)
                    && s.size() > 0
                    && s.is_definition()
                {
                    if let Ok(name) = s.name() {
                        data.push((s.address(), s.address() + s.size(), demangle(name)));
                    }
                }
            }
        };
        add(&file);
        let debug = crate::family::program::symbols::debug_file(Path::new(path), &file)
            .and_then(|p| std::fs::read(p).ok());
        if let Some(d) = debug.as_deref().and_then(|d| object::File::parse(d).ok()) {
            add(&d);
        }
        data.sort();
        data.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        Module { shifted, segments, data }
    }

    /// The data symbol holding `vaddr`, as `name` or `name+0xN`.
    fn symbol(&self, vaddr: u64) -> Option<String> {
        let i = self.data.partition_point(|(start, _, _)| *start <= vaddr);
        // The innermost: of the symbols starting at or before, the last
        // that still covers it.
        self.data[..i].iter().rev().take(16).find(|(_, end, _)| vaddr < *end).map(|(start, _, name)| {
            if vaddr == *start {
                name.clone()
            } else {
                format!("{name}+{:#x}", vaddr - start)
            }
        })
    }
}

/// Names addresses of many processes, each module read once.
#[derive(Default)]
pub struct DataNames {
    modules: HashMap<String, Module>,
}

impl DataNames {
    /// The name of `address` in a process whose map is `maps`.
    pub fn name(&mut self, address: u64, maps: &[Mapping]) -> String {
        // The loader maps a module's first page at its lowest segment:
        // each module's lowest mapping (the maps may come from two
        // sources, in any order).
        let mut firsts: Vec<&Mapping> = Vec::new();
        for m in maps.iter().filter(|m| m.path.starts_with('/')) {
            match firsts.iter_mut().find(|f| f.path == m.path) {
                Some(f) if m.start < f.start => *f = m,
                Some(_) => {}
                None => firsts.push(m),
            }
        }
        for first in firsts {
            let module = self.modules.entry(first.path.clone()).or_insert_with(|| Module::open(&first.path));
            let Some(lowest) = module.segments.iter().map(|s| s.0).min() else { continue };
            // Where the loader put it: the first mapping is the page
            // holding the lowest segment's start.
            let shift = if module.shifted { first.start.wrapping_sub(lowest & !0xfff) } else { 0 };
            let vaddr = address.wrapping_sub(shift);
            if module.segments.iter().any(|&(lo, hi)| lo <= vaddr && vaddr < hi) {
                let short = short_name(&first.path);
                return match module.symbol(vaddr) {
                    Some(sym) => format!("{sym} ({short})"),
                    None => format!("{short}+{vaddr:#x} (no symbol)"),
                };
            }
        }
        match maps.iter().find(|m| m.start <= address && address < m.end) {
            Some(m) if m.path == "[heap]" => "heap".into(),
            Some(m) if m.path.starts_with("[stack") => "stack".into(),
            Some(m) if m.path.is_empty() => "anonymous memory".into(),
            Some(m) => format!("{} (mapped file)", m.path),
            None => "not mapped when last seen".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test binary's own data: a static's address names it.
    static A_WORD_OF_THIS_TEST: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(7);

    #[test]
    fn a_static_is_named_by_its_symbol_and_the_heap_by_its_kind() {
        let maps = crate::measure::futex_view::read_maps(std::process::id()).unwrap();
        let mut names = DataNames::default();
        let at = &A_WORD_OF_THIS_TEST as *const _ as u64;
        let name = names.name(at, &maps);
        assert!(name.contains("A_WORD_OF_THIS_TEST"), "{name}");
        assert!(names.name(at + 2, &maps).contains("A_WORD_OF_THIS_TEST+0x2"), "inside the object");
        let boxed = Box::new([0u8; 64]);
        let on_heap = names.name(boxed.as_ptr() as u64, &maps);
        assert!(on_heap == "heap" || on_heap == "anonymous memory", "{on_heap}");
        assert_eq!(A_WORD_OF_THIS_TEST.load(std::sync::atomic::Ordering::Relaxed), 7);
    }
}
