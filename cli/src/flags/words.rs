//! The arguments of our own subcommands (`select`, `coverage`), one by one:
//! `--flag=value` and `--flag value` alike.

/// A subcommand's arguments, read in order.
pub struct Words<'a> {
    rest: std::slice::Iter<'a, String>,
}

impl<'a> Words<'a> {
    pub fn new(args: &'a [String]) -> Self {
        Words { rest: args.iter() }
    }

    /// The next argument: the word, or a long flag with the value written
    /// after its `=`.
    pub fn next_word(&mut self) -> Option<(&'a str, Option<&'a str>)> {
        let arg = self.rest.next()?;
        Some(match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ => (arg.as_str(), None),
        })
    }

    /// A flag's value: the one after its `=`, else the next argument.
    pub fn value(&mut self, inline: Option<&'a str>) -> Option<&'a str> {
        inline.or_else(|| self.rest.next().map(String::as_str))
    }
}
