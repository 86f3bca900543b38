//! Reading options: the Rust side of psbench/sdk_refusals.hpp's Options. A driver parses
//! its configuration once, in one function both check() and open() call, recording every
//! refusal instead of stopping at the first:
//!
//! ```ignore
//! fn parse(cfg: &Config, refusals: &Refusals) -> Settings {
//!     let options = Options::new(cfg, refusals);
//!     let depth = options.number("depth", 16, 1, 1024, None); // malformed: "option:depth"
//!     if cfg.qos.durability != PSB_VOLATILE {
//!         refusals.add("durability", "durability must be volatile: nothing is kept");
//!     }
//!     Settings { depth }                                        // complete, with fallbacks
//! }
//! fn check(cfg: &Config, refusals: &mut Refusals) { parse(cfg, refusals); }
//! fn open(cfg: &Config) -> Result<Self, Error> { let s = parse_or_error(cfg, parse)?; ... }
//! ```

use crate::config::Config;
use crate::error::Error;
use crate::refusals::{or_list, Refusals};

/// Runs parse(cfg, refusals) and returns what it returns, or an Error naming every refusal
/// it recorded: the open() side of a parse that check() runs to collect them.
pub fn parse_or_error<T>(
    cfg: &Config,
    parse: impl FnOnce(&Config, &Refusals) -> T,
) -> Result<T, Error> {
    let refusals = Refusals::new();
    let result = parse(cfg, &refusals);
    refusals.raise()?;
    Ok(result)
}

/// A view over cfg.options. A malformed or missing value is recorded in the Refusals given,
/// as setting "option:KEY", and the lookup returns its fallback, so parsing goes on and
/// finds every other problem too.
pub struct Options<'a> {
    cfg: &'a Config,
    refusals: &'a Refusals,
}

impl<'a> Options<'a> {
    pub fn new(cfg: &'a Config, refusals: &'a Refusals) -> Self {
        Options { cfg, refusals }
    }

    fn refuse(&self, key: &str, reason: String) {
        self.refusals.add(format!("option:{key}"), reason);
    }

    /// The value given for key (the first, if repeated), or None.
    pub fn find(&self, key: &str) -> Option<&'a str> {
        self.cfg
            .options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    pub fn has(&self, key: &str) -> bool {
        self.find(key).is_some()
    }
    pub fn text(&self, key: &str, fallback: &str) -> String {
        self.find(key).unwrap_or(fallback).to_string()
    }

    /// Refuses each option whose key is not in keys: "unknown option 'KEY'; valid options:
    /// A, B", or "...; this driver takes no options".
    pub fn refuse_unknown(&self, keys: &[&str]) {
        let valid = if keys.is_empty() {
            "this driver takes no options".to_string()
        } else {
            format!("valid options: {}", keys.join(", "))
        };
        for (key, _) in &self.cfg.options {
            if !keys.contains(&key.as_str()) {
                self.refuse(key, format!("unknown option '{key}'; {valid}"));
            }
        }
    }

    /// Whether key was given where it does not apply (not_here): then also the refusal
    /// "option KEY REASON", e.g. reason "applies to transport tcp only".
    pub fn given_but(&self, key: &str, not_here: bool, reason: &str) -> bool {
        if !not_here || !self.has(key) {
            return false;
        }
        self.refuse(key, format!("option {key} {reason}"));
        true
    }

    /// The value, or None with the refusal "option KEY[=FORM] is missing[; ADVICE]".
    pub fn required(&self, key: &str, form: &str, advice: &str) -> Option<&'a str> {
        if let Some(v) = self.find(key) {
            return Some(v);
        }
        let mut m = format!("option {key}");
        if !form.is_empty() {
            m += &format!("={form}");
        }
        m += " is missing";
        if !advice.is_empty() {
            m += &format!("; {advice}");
        }
        self.refuse(key, m);
        None
    }

    /// true/1 or false/0 (strict: true or false only); anything else refused,
    /// "option KEY='VALUE': use true or false" (strict: "use KEY=true or KEY=false").
    pub fn flag(&self, key: &str, fallback: bool, strict: bool) -> bool {
        let Some(v) = self.find(key) else {
            return fallback;
        };
        match v {
            "true" => return true,
            "false" => return false,
            "1" if !strict => return true,
            "0" if !strict => return false,
            _ => {}
        }
        let use_ = if strict {
            format!("{key}=true or {key}=false")
        } else {
            "true or false".into()
        };
        self.refuse(key, format!("option {key}='{v}': use {use_}"));
        fallback
    }

    /// A decimal whole number in [min, max]; anything else refused, "option KEY='VALUE':
    /// use a whole number from MIN to MAX", or "...: use HINT" with a hint.
    pub fn number(&self, key: &str, fallback: i64, min: i64, max: i64, hint: Option<&str>) -> i64 {
        let Some(v) = self.find(key) else {
            return fallback;
        };
        let b = v.as_bytes();
        let starts_well = b.first().is_some_and(u8::is_ascii_digit)
            || (b.first() == Some(&b'-') && b.get(1).is_some_and(u8::is_ascii_digit));
        if starts_well {
            if let Ok(n) = v.parse::<i64>() {
                if (min..=max).contains(&n) {
                    return n;
                }
            }
        }
        let use_ = hint
            .map(str::to_string)
            .unwrap_or_else(|| format!("a whole number from {min} to {max}"));
        self.refuse(key, format!("option {key}='{v}': use {use_}"));
        fallback
    }

    /// Which of names the value is (its index), or fallback when the key was not given;
    /// anything else refused, "option KEY='VALUE' is not known; use KEY=A (default), KEY=B
    /// or KEY=C".
    pub fn choice(&self, key: &str, names: &[&str], fallback: usize) -> usize {
        let Some(v) = self.find(key) else {
            return fallback;
        };
        if let Some(i) = names.iter().position(|n| *n == v) {
            return i;
        }
        let listed: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{key}={n}{}", if i == fallback { " (default)" } else { "" }))
            .collect();
        let refs: Vec<&str> = listed.iter().map(String::as_str).collect();
        self.refuse(
            key,
            format!("option {key}='{v}' is not known; use {}", or_list(&refs)),
        );
        fallback
    }
}
