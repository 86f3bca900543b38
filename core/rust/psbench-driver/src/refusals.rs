//! Refusals: every setting of one configuration that a driver refuses, and why, recorded
//! by check() (and by the same parse in open()) instead of stopping at the first. The
//! bottom of the SDK with error.rs: it needs neither Config nor the capabilities.

use std::cell::{Ref, RefCell};

use crate::error::Error;

/// One refused setting, in the node's vocabulary ("reliability", "transport",
/// "option:KEY", "driver", ...; psb_refuse in driver.h) and why, without the driver's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub setting: String,
    pub reason: String,
}

/// Every refusal of one configuration, in the order found. add() takes &self, so that an
/// Options view and the driver's own rules can record into one.
#[derive(Default, Debug)]
pub struct Refusals {
    found: RefCell<Vec<Refusal>>,
}

impl Refusals {
    pub fn new() -> Self {
        Self::default()
    }
    /// Records that `setting` is refused, and why.
    pub fn add(&self, setting: impl Into<String>, reason: impl Into<String>) {
        self.found.borrow_mut().push(Refusal {
            setting: setting.into(),
            reason: reason.into(),
        });
    }
    pub fn is_empty(&self) -> bool {
        self.found.borrow().is_empty()
    }
    pub fn len(&self) -> usize {
        self.found.borrow().len()
    }
    /// Whether `setting` is refused already.
    pub fn has(&self, setting: &str) -> bool {
        self.found.borrow().iter().any(|r| r.setting == setting)
    }
    pub fn all(&self) -> Ref<'_, Vec<Refusal>> {
        self.found.borrow()
    }
    /// For open(): an Error with every reason, "; " between them, when any was found.
    pub fn raise(&self) -> Result<(), Error> {
        let found = self.found.borrow();
        if found.is_empty() {
            return Ok(());
        }
        let all: Vec<&str> = found.iter().map(|r| r.reason.as_str()).collect();
        Err(Error::new(all.join("; ")))
    }
}

/// "a, b or c": names in a refusal's text.
pub(crate) fn or_list(names: &[&str]) -> String {
    let mut text = String::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            text += if i + 1 == names.len() { " or " } else { ", " };
        }
        text += n;
    }
    text
}
