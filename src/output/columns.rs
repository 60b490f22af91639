//! Which columns a table shows. Each family's table names its optional
//! column groups (`cpu`, `fairness`, `kernel`, ...) and which of them it
//! shows by default: the ones that answer its question. `--columns LIST`
//! picks groups (`default` and `all` included), `--wide` shows every
//! column, and the legend (`output::column`) explains only the columns
//! shown. The core columns (the swept axes and the family's metric) are
//! always there; columns that do not fit the terminal go in blocks below.

use crate::model::SpecError;
use crate::output::args::OutputArgs;

/// An optional group of columns in a family's table.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// Its name for `--columns`.
    pub name: &'static str,
    /// Shown without `--columns`.
    pub default: bool,
    /// What its columns mean, for the legend (lines end with `\n`).
    pub legend: &'static str,
}

/// The core group: always shown.
pub const CORE: &str = "";

/// The groups a table shows.
#[derive(Debug, Clone)]
pub struct Shown(Vec<&'static str>);

impl Shown {
    /// What `output` asks of a table with these `groups`; an unknown
    /// group name is a mistake that names the groups there are.
    pub fn of(groups: &[Group], output: &OutputArgs) -> Result<Self, SpecError> {
        let mut shown: Vec<&'static str> = Vec::new();
        let mut add = |g: &Group| {
            if !shown.contains(&g.name) {
                shown.push(g.name);
            }
        };
        let asked: Vec<&str> = if output.columns.is_empty() {
            vec!["default"]
        } else {
            output.columns.iter().map(|s| s.trim()).collect()
        };
        for name in asked {
            match name {
                "default" => groups.iter().filter(|g| g.default).for_each(&mut add),
                "all" => groups.iter().for_each(&mut add),
                name => match groups.iter().find(|g| g.name == name) {
                    Some(g) => add(g),
                    None => {
                        return Err(SpecError(format!(
                            "--columns {name}: no such column group here; choose from default, all, {}",
                            groups.iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
                        )))
                    }
                },
            }
        }
        if output.wide {
            groups.iter().for_each(add);
        }
        Ok(Shown(shown))
    }

    /// What a report shows: `output`'s choice, which `experiment::run`
    /// checked with [`Shown::of`] before anything ran; every group should
    /// it be invalid all the same (a report built some other way).
    pub fn planned(groups: &[Group], output: &OutputArgs) -> Self {
        Self::of(groups, output).unwrap_or_else(|_| Shown(groups.iter().map(|g| g.name).collect()))
    }

    /// Whether columns of `group` are shown.
    pub fn has(&self, group: &str) -> bool {
        group == CORE || self.0.contains(&group)
    }

    /// Keeps the items of `row` whose group (in `groups`, same order) is
    /// shown.
    pub fn select<T>(&self, groups: &[&str], row: Vec<T>) -> Vec<T> {
        row.into_iter().zip(groups).filter(|(_, g)| self.has(g)).map(|(x, _)| x).collect()
    }

    /// A line naming the groups not shown, or nothing when all are.
    pub fn hidden_note(&self, groups: &[Group]) -> String {
        let hidden: Vec<&str> = groups.iter().filter(|g| !self.has(g.name)).map(|g| g.name).collect();
        if hidden.is_empty() {
            String::new()
        } else {
            format!("more columns: --columns {} (or --wide)\n", hidden.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUPS: &[Group] = &[
        Group { name: "cpu", default: false, legend: "cpu\n" },
        Group { name: "kernel", default: true, legend: "kernel\n" },
    ];

    fn args(columns: &[&str], wide: bool) -> OutputArgs {
        OutputArgs { columns: columns.iter().map(|s| s.to_string()).collect(), wide, ..Default::default() }
    }

    #[test]
    fn defaults_lists_and_wide_choose_the_groups() {
        let d = Shown::of(GROUPS, &args(&[], false)).unwrap();
        assert!(d.has(CORE) && d.has("kernel") && !d.has("cpu"));
        assert_eq!(d.hidden_note(GROUPS), "more columns: --columns cpu (or --wide)\n");
        let c = Shown::of(GROUPS, &args(&["cpu"], false)).unwrap();
        assert!(c.has("cpu") && !c.has("kernel"));
        assert_eq!(c.select(&[CORE, "cpu", "kernel"], vec![1, 2, 3]), vec![1, 2]);
        let both = Shown::of(GROUPS, &args(&["default", "cpu"], false)).unwrap();
        assert!(both.has("cpu") && both.has("kernel"));
        assert!(Shown::of(GROUPS, &args(&[], true)).unwrap().has("cpu"));
        assert!(Shown::of(GROUPS, &args(&["all"], false)).unwrap().hidden_note(GROUPS).is_empty());
        let err = Shown::of(GROUPS, &args(&["disk"], false)).unwrap_err().to_string();
        assert!(err.contains("--columns disk") && err.contains("cpu, kernel"), "{err}");
    }
}
