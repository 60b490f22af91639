//! The allocators `contend alloc` compares, found where the dynamic linker
//! finds libraries (`ldconfig -p`, its cache) and loaded into a child with
//! LD_PRELOAD. When one is missing, the error names its Debian package.

use serde::Serialize;
use std::path::PathBuf;
use std::process::Command;

/// One allocator to run under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Allocator {
    /// glibc, tcmalloc, jemalloc or mimalloc.
    pub name: &'static str,
    /// glibc tunables (`glibc:arena_max=1` -> glibc.malloc.arena_max=1).
    pub tunables: Vec<(String, String)>,
    /// The library to preload, once resolved (`None` for glibc).
    pub library: Option<PathBuf>,
}

/// (name, shared object, Debian package) of the preloadable allocators.
pub const KNOWN: &[(&str, &str, &str)] = &[
    ("tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"),
    ("jemalloc", "libjemalloc.so.2", "libjemalloc2"),
    ("mimalloc", "libmimalloc.so.2", "libmimalloc2.0"),
];

impl Allocator {
    /// How it is written on the command line.
    pub fn label(&self) -> String {
        if self.tunables.is_empty() {
            return self.name.to_string();
        }
        let t: Vec<String> = self.tunables.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}:{}", self.name, t.join(":"))
    }

    /// The GLIBC_TUNABLES value, if any.
    pub fn glibc_tunables(&self) -> Option<String> {
        (!self.tunables.is_empty()).then(|| {
            self.tunables.iter().map(|(k, v)| format!("glibc.malloc.{k}={v}")).collect::<Vec<_>>().join(":")
        })
    }

    /// The same allocator with its library resolved, once, when the spec is
    /// validated: every run then preloads that exact file.
    pub fn resolved(self) -> Result<Self, String> {
        let library = self.find_preload()?;
        Ok(Self { library, ..self })
    }

    /// The library to preload: an absolute path to a regular file, found
    /// through the dynamic linker's cache; `None` for glibc.
    fn find_preload(&self) -> Result<Option<PathBuf>, String> {
        let Some(&(_, soname, package)) = KNOWN.iter().find(|(n, _, _)| *n == self.name) else {
            return Ok(None);
        };
        let path = find_library(soname).ok_or_else(|| {
            format!(
                "allocator `{}` is not installed: {soname} is not in the dynamic linker's cache \
                 (install it: apt-get install {package})",
                self.name
            )
        })?;
        if !path.is_absolute() || !path.is_file() {
            return Err(format!("{} is not an absolute path to a regular file", path.display()));
        }
        Ok(Some(path))
    }
}

/// Where the dynamic linker finds `soname`, from `ldconfig -p`.
pub fn find_library(soname: &str) -> Option<PathBuf> {
    let ldconfig =
        ["/sbin/ldconfig", "/usr/sbin/ldconfig"].into_iter().find(|p| std::path::Path::new(p).is_file())?;
    let out = Command::new(ldconfig).arg("-p").output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|line| {
        let (name, path) = line.trim().split_once(" => ")?;
        (name.split_whitespace().next()? == soname).then(|| PathBuf::from(path.trim()))
    })
}

/// The allocator names --allocator takes (and the completions offer).
pub const NAMES: [&str; 4] = ["glibc", "tcmalloc", "jemalloc", "mimalloc"];

/// Parses `glibc`, `glibc:arena_max=1:tcache_count=0`, `tcmalloc`, ...
pub fn parse_allocator(text: &str) -> Result<Allocator, String> {
    let t = text.trim();
    let (name, rest) = t.split_once(':').unwrap_or((t, ""));
    let name = NAMES.into_iter().find(|k| *k == name).ok_or_else(|| {
        format!(
            "unknown allocator `{name}`{} (known: {})",
            crate::model::value::suggest::did_you_mean(name, NAMES),
            NAMES.join(", ")
        )
    })?;
    let mut tunables = Vec::new();
    for kv in rest.split(':').filter(|s| !s.is_empty()) {
        if name != "glibc" {
            return Err(format!("tunables like `{kv}` apply to glibc only"));
        }
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("tunable `{kv}` should be name=value (e.g. glibc:arena_max=1)"))?;
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || v.is_empty() {
            return Err(format!("tunable `{kv}` should be name=value (e.g. glibc:arena_max=1)"));
        }
        tunables.push((k.to_string(), v.to_string()));
    }
    Ok(Allocator { name, tunables, library: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocators_parse() {
        assert_eq!(parse_allocator("jemalloc").unwrap().name, "jemalloc");
        let g = parse_allocator("glibc:arena_max=1:tcache_count=0").unwrap();
        assert_eq!(
            g.glibc_tunables().as_deref(),
            Some("glibc.malloc.arena_max=1:glibc.malloc.tcache_count=0")
        );
        assert_eq!(g.label(), "glibc:arena_max=1:tcache_count=0");
        assert!(parse_allocator("hoard").unwrap_err().contains("unknown allocator"));
        assert!(parse_allocator("jemalloc:x=1").unwrap_err().contains("glibc only"));
        assert!(parse_allocator("glibc:arena_max").unwrap_err().contains("name=value"));
        assert!(parse_allocator("glibc:a;b=1").is_err());
    }

    #[test]
    fn glibc_needs_no_preload() {
        assert_eq!(parse_allocator("glibc").unwrap().resolved().unwrap().library, None);
    }
}
