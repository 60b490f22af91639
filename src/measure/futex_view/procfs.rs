//! What the futex view reads of /proc and sysfs: a process's threads,
//! their names, states and kernel stacks, its memory map (which name the
//! words afterwards), and the online CPUs (one buffer each).

/// One mapping of a process's memory, from /proc/PID/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// Offset in the file.
    pub offset: u64,
    /// The file, `[heap]`, `[stack]`, or empty (anonymous).
    pub path: String,
    /// Mapped executable (code), as /proc says; false where not known.
    pub executable: bool,
}

/// The online CPUs.
pub fn online() -> Result<Vec<i32>, String> {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    cpu_list(&online).ok_or_else(|| format!("cannot read the online CPUs ({online:?})"))
}

/// The threads of process `pid` now (None: no such process).
pub fn threads(pid: u32) -> Option<Vec<i32>> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut tids: Vec<i32> =
        dir.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok())).collect();
    tids.sort_unstable();
    (!tids.is_empty()).then_some(tids)
}

/// The name (comm) of process `pid`, or of its thread `tid`; empty when
/// it is gone.
pub fn comm(pid: u32, tid: Option<u32>) -> String {
    let path = match tid {
        Some(tid) => format!("/proc/{pid}/task/{tid}/comm"),
        None => format!("/proc/{pid}/comm"),
    };
    std::fs::read_to_string(path).unwrap_or_default().trim().to_string()
}

/// Thread `tid`'s state letter, as /proc/PID/task/TID/stat says it
/// (`R` running or runnable, `S` or `D` asleep, ...); None: it is gone.
pub fn task_state(pid: u32, tid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    state_letter(&stat)
}

/// The state letter of a stat line: the first field after the name, which
/// ends at the line's last `)` (a name may hold spaces and parentheses).
fn state_letter(stat: &str) -> Option<char> {
    stat.rsplit_once(") ")?.1.chars().next()
}

/// The functions of thread `tid`'s kernel stack, innermost first, from
/// /proc/PID/task/TID/stack (root only; None where it cannot be read).
pub fn kernel_stack(pid: u32, tid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stack")).ok()?;
    Some(text.lines().filter_map(stack_function).collect())
}

/// `[<0>] do_epoll_wait+0x4a1/0x6b0` is `do_epoll_wait`.
fn stack_function(line: &str) -> Option<String> {
    let frame = line.split_once("] ")?.1;
    let name = frame.split_once('+').map_or(frame, |(n, _)| n).trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// `pid`'s memory map (None: it is gone, or going: a process that is
/// exiting, or exited and not yet reaped, reads as an empty map, which
/// would hide the one recorded while it lived).
pub fn read_maps(pid: u32) -> Option<Vec<Mapping>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let maps: Vec<Mapping> = text.lines().filter_map(parse_map_line).collect();
    (!maps.is_empty()).then_some(maps)
}

/// One line of /proc/PID/maps: `start-end perms offset dev inode path`.
fn parse_map_line(line: &str) -> Option<Mapping> {
    let mut f = line.splitn(6, ' ');
    let (range, perms, offset, _dev, _inode) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
    let (start, end) = range.split_once('-')?;
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        offset: u64::from_str_radix(offset, 16).ok()?,
        path: f.next().unwrap_or("").trim().to_string(),
        executable: perms.as_bytes().get(2) == Some(&b'x'),
    })
}

/// The CPUs of a sysfs CPU list (`0-3,6`).
pub fn cpu_list(text: &str) -> Option<Vec<i32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(lo.parse::<i32>().ok()?..=hi.parse::<i32>().ok()?);
    }
    (!cpus.is_empty()).then_some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_sysfs_writes_them() {
        assert_eq!(cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(cpu_list("0,2-3,7"), Some(vec![0, 2, 3, 7]));
        assert_eq!(cpu_list(""), None);
        assert_eq!(cpu_list("x"), None);
    }

    #[test]
    fn a_threads_state_and_kernel_stack_read_as_proc_writes_them() {
        assert_eq!(state_letter("42 (a) b) (c) S 1 42"), Some('S'));
        assert_eq!(state_letter("42 (x"), None);
        assert_eq!(
            stack_function("[<0>] __x64_sys_clock_nanosleep+0xde/0x150").as_deref(),
            Some("__x64_sys_clock_nanosleep")
        );
        assert_eq!(stack_function("garbage"), None);
        let me = std::process::id();
        assert_eq!(task_state(me, locks::sys::tid::current()), Some('R'), "the caller runs");
    }

    #[test]
    fn map_lines_read_with_and_without_a_path() {
        let m = parse_map_line("55d0a000-55d0b000 rw-p 00003000 fd:01 123   /usr/bin/prog").unwrap();
        assert_eq!(
            (m.start, m.end, m.offset, m.path.as_str()),
            (0x55d0a000, 0x55d0b000, 0x3000, "/usr/bin/prog")
        );
        let anon = parse_map_line("7f00-8f00 rw-p 00000000 00:00 0 ").unwrap();
        assert_eq!(anon.path, "");
        assert_eq!(parse_map_line("7f00-8f00 rw-p 00000000 00:00 0    [heap]").unwrap().path, "[heap]");
    }

    #[test]
    fn an_exited_unreaped_process_has_no_map() {
        let mut child = std::process::Command::new("true").spawn().expect("true runs");
        let pid = child.id();
        // Not reaped yet: a zombie, whose /proc/PID/maps reads empty.
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("unreaped, it stays");
            if stat.rsplit(") ").next().is_some_and(|s| s.starts_with('Z')) {
                break;
            }
            std::thread::yield_now();
        }
        assert!(read_maps(pid).is_none(), "a zombie's map is not a map");
        child.wait().unwrap();
        assert!(read_maps(std::process::id()).is_some_and(|m| m.iter().any(|m| m.executable)));
    }
}
