//! CPU lists as the kernel writes them (`0-3,8,10-11`), for `--cpus` and
//! `--exclude-cpus`.

/// The highest CPU number accepted (the kernel's NR_CPUS ceiling).
const MAX_CPU: usize = 8191;

/// Parses a CPU list into sorted, distinct CPU numbers.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let number = |s: &str| -> Result<usize, String> {
            let n: usize =
                s.trim().parse().map_err(|_| format!("`{s}` in CPU list `{text}` is not a CPU number"))?;
            if n > MAX_CPU {
                return Err(format!("CPU {n} in `{text}` is beyond any machine (max {MAX_CPU})"));
            }
            Ok(n)
        };
        match part.split_once('-') {
            _ if part.is_empty() => return Err(format!("empty element in CPU list `{text}`")),
            Some((lo, hi)) => {
                let (lo, hi) = (number(lo)?, number(hi)?);
                if lo > hi {
                    return Err(format!("range `{part}` in `{text}` runs backwards"));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(number(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Writes CPU numbers back in the kernel's compact form.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_cpu_list("0-3,8,10-11"), Ok(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_cpu_list("3,1,1"), Ok(vec![1, 3]));
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[5]), "5");
    }

    #[test]
    fn bad_lists_are_refused() {
        for bad in ["", "1,", "a", "3-1", "1-", "99999", "-1"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad}");
        }
    }
}
