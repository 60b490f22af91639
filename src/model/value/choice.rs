//! A value chosen by name from a fixed list (`--spinners one`,
//! `--affinity spread`): one table per type gives both its parser and
//! its printed name, and every refusal lists the names the same way.

/// The value `text` names in `choices`; else a refusal naming `what` and
/// every choice: "unknown affinity `x` (expected none, spread or same)".
pub fn parse_choice<T: Copy>(text: &str, what: &str, choices: &[(&str, T)]) -> Result<T, String> {
    let text = text.trim();
    match choices.iter().find(|(name, _)| *name == text) {
        Some(&(_, value)) => Ok(value),
        None => Err(format!("unknown {what} `{text}` (expected {})", listed(choices))),
    }
}

/// The name `value` has in `choices` (every value has one: the tables
/// list each variant).
pub fn choice_name<T: Copy + PartialEq>(value: T, choices: &[(&'static str, T)]) -> &'static str {
    choices.iter().find(|(_, v)| *v == value).map_or("?", |&(name, _)| name)
}

/// "a, b or c".
fn listed<T>(choices: &[(&str, T)]) -> String {
    let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_parses_and_prints_and_a_wrong_one_lists_the_choices() {
        let choices = [("low", 1), ("mid", 2), ("high", 3)];
        assert_eq!(parse_choice(" mid ", "level", &choices), Ok(2));
        assert_eq!(choice_name(3, &choices), "high");
        assert_eq!(
            parse_choice("max", "level", &choices),
            Err("unknown level `max` (expected low, mid or high)".to_string())
        );
        assert_eq!(listed(&[("only", 0)]), "only");
    }
}
