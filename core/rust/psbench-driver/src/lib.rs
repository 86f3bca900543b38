//! psbench driver SDK for Rust: the C ABI of core/include/psbench/driver.h (module `abi`,
//! `#[repr(C)]` mirrors) and a safe layer that turns a small Rust driver into that table,
//! with the behaviour of the C++ SDK (psbench/sdk.hpp):
//!
//! ```ignore
//! struct MyDriver;
//! impl psbench_driver::Driver for MyDriver {
//!     const NAME: &'static str = "mymw";            // the folder under drivers/
//!     const DESCRIPTION: &'static str = "...";
//!     type Context = MyContext;
//!     fn version() -> String { "1.2.3".into() }     // asked once, kept
//!     fn capabilities() -> Capabilities { ... }
//!     fn check(cfg: &Config, refusals: &mut Refusals) { parse(cfg, refusals); }
//! }
//! psbench_driver::export_driver!(MyDriver);         // the exported psb_driver_entry
//! ```
//!
//! check() records every refusal; the SDK adds what the capabilities leave out and check()
//! did not refuse (refuse_outside_caps), hands each to the node as "<NAME>: <reason>", and
//! counts them. open() refuses a configuration outside the capabilities with those same
//! refusals, then calls Context::open (which parses with parse_or_error, the same parse as
//! check()). Every call returns Err(Error) to fail; the SDK writes "<NAME>: <message>" into
//! psb_error. A panic becomes such an error (check(): a refusal of setting "driver"); no
//! panic crosses the ABI. close() destroys the writers and readers a caller left open
//! (readers first) before the Context. The optional members are traits of their own: a
//! Writer that implements Loan, Flush or Drain, a Reader that implements Release, has those
//! entries in the table, found at compile time (module `optional`); without them they are
//! NULL. matched() defaults to None (the ABI's -1, as a NULL entry) and counters() to none.
//!
//! A Reader implements take(), or try_take() and wait() (trait Polling) and takes with
//! take_waiting(): which, the compiler checks.
//!
//! Timed path: write() and take() are one call through catch_unwind (free unless a panic
//! unwinds); a message is formatted only on failure. Treat EINTR and a timeout as "no
//! sample" (Ok(None)): the node uses signals to stop runs.

// Modules, each using only those above it: abi, error, refusals, config, caps, options,
// ids, listener, then adapter (the trampolines) and optional (which finds their entries).
pub mod abi;
mod adapter;
mod caps;
mod config;
mod error;
mod ids;
mod listener;
#[doc(hidden)]
pub mod optional; // for driver_table!
mod options;
mod refusals;

pub use caps::{payload_in_range, refuse_outside_caps, Capabilities, HEADER_SIZE};
pub use config::{Config, Qos};
pub use error::{Error, ErrorKind};
pub use ids::*;
pub use listener::{Listener, ListenerThread};
pub use options::{parse_or_error, Options};
pub use refusals::{Refusal, Refusals};

/// One middleware: its name, what it can do, and its Context type.
pub trait Driver: 'static {
    /// The folder name under drivers/, the prefix of every message.
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    type Context: Context;
    /// The middleware's version (asked once, kept).
    fn version() -> String;
    fn capabilities() -> Capabilities;
    /// Judges the whole configuration, recording every refusal; opens nothing and does not
    /// look at the machine.
    fn check(_cfg: &Config, _refusals: &mut Refusals) {}
}

/// A participant, a connection, a runtime: what open() returns.
pub trait Context: Sized {
    type Writer: Writer;
    type Reader: Reader;
    fn open(cfg: &Config) -> Result<Self, Error>;
    fn create_writer(&mut self, topic: &str) -> Result<Self::Writer, Error>;
    /// listener: Some exactly in notify mode listener; call it from the delivery thread.
    fn create_reader(
        &mut self,
        topic: &str,
        listener: Option<Listener>,
    ) -> Result<Self::Reader, Error>;
}

pub trait Writer {
    /// Timed path: no allocation, logging or lock the middleware lets you avoid.
    fn write(&mut self, data: &[u8]) -> Result<(), Error>;
    /// Matched readers; None: the middleware cannot tell.
    fn matched(&self) -> Option<u32> {
        None
    }
    /// The middleware's own counts, each handed to put(name, value) once.
    fn counters(&self, _put: &mut dyn FnMut(&str, u64)) {}
}

/// A reader implements take(); one whose middleware can only look and wait implements
/// Polling too and takes with take_waiting(self, timeout_ns) (one wait strategy for all).
/// Both are checked at compile time, as the C++ SDK checks its Reader's take forms.
pub trait Reader {
    /// A sample within timeout_ns (0: do not block; negative: no limit), valid until the
    /// next take() or release(); Ok(None): none (also on EINTR).
    fn take(&mut self, timeout_ns: i64) -> Result<Option<&[u8]>, Error>;
    /// Matched writers; None: the middleware cannot tell.
    fn matched(&self) -> Option<u32> {
        None
    }
    fn counters(&self, _put: &mut dyn FnMut(&str, u64)) {}
}

/// A reader that looks (try_take) and waits (wait) instead of taking with a timeout; its
/// take() is take_waiting(self, timeout_ns).
pub trait Polling {
    /// A sample if one is there now; never blocks.
    fn try_take(&mut self) -> Result<Option<&[u8]>, Error>;
    /// Blocks in the middleware up to timeout_ns (negative: no limit); true: data may have
    /// come.
    fn wait(&mut self, timeout_ns: i64) -> Result<bool, Error>;
}

/// Optional: zero-copy send. loan(len) returns a buffer of len bytes the node fills,
/// write_loan() sends it (the SDK passes only the last loan's sample, once, with len <= the
/// loan's). Implemented: the table has loan and write_loan.
pub trait Loan: Writer {
    fn loan(&mut self, len: usize) -> Result<*mut u8, Error>;
    fn write_loan(&mut self, sample: *mut u8, len: usize) -> Result<(), Error>;
}

/// Optional: Ok(true) when what this writer was given has left the process (and was
/// acknowledged); Ok(false) or Err(Error::timeout(..)): not within timeout_ns.
/// Implemented: the table has drain.
pub trait Drain: Writer {
    fn drain(&mut self, timeout_ns: i64) -> Result<bool, Error>;
}

/// Optional: send now what the writer holds back. Implemented: the table has flush.
pub trait Flush: Writer {
    fn flush(&mut self) -> Result<(), Error>;
}

/// Optional: give back the sample of the last take() early. Implemented: the table has
/// release.
pub trait Release: Reader {
    fn release(&mut self);
}

/// The take() of a Polling reader: try_take() at once; then, until one succeeds or
/// timeout_ns has passed (negative: no limit), wait(time left, -1: no limit) and
/// try_take() again. A wakeup without data waits again.
pub fn take_waiting<R: Polling + ?Sized>(
    reader: &mut R,
    timeout_ns: i64,
) -> Result<Option<&[u8]>, Error> {
    // The sample is handed out as a raw part and re-borrowed: the loop below would
    // otherwise keep the first try_take's borrow alive (a known limit of the borrow checker).
    fn hand<'a>(s: &[u8]) -> Option<&'a [u8]> {
        // SAFETY: valid until the reader's next take/release, which needs &mut reader.
        Some(unsafe { std::slice::from_raw_parts(s.as_ptr(), s.len()) })
    }
    if let Some(s) = reader.try_take()? {
        return Ok(hand(s));
    }
    if timeout_ns == 0 {
        return Ok(None);
    }
    let start = std::time::Instant::now();
    loop {
        let mut left = -1;
        if timeout_ns > 0 {
            left =
                timeout_ns.saturating_sub(start.elapsed().as_nanos().min(i64::MAX as u128) as i64);
            if left <= 0 {
                return Ok(None);
            }
        }
        if reader.wait(left)? {
            if let Some(s) = reader.try_take()? {
                return Ok(hand(s));
            }
        }
    }
}

/// The table of driver type D (`&'static psb_driver`), built on first use, with the
/// optional entries its Writer and Reader implement (module `optional`). export_driver!
/// returns it; a test may use it to look at several drivers in one program.
#[macro_export]
macro_rules! driver_table {
    ($driver:ty) => {{
        #[allow(unused_imports)]
        use $crate::optional::{
            HasDrain as _, HasFlush as _, HasLoan as _, HasRelease as _, NoDrain as _,
            NoFlush as _, NoLoan as _, NoRelease as _,
        };
        let probe = &$crate::optional::Probe::<$driver>::NEW;
        $crate::optional::table::<$driver>($crate::optional::Entries {
            loan: probe.loan_entries(),
            flush: probe.flush_entry(),
            drain: probe.drain_entry(),
            release: probe.release_entry(),
        })
    }};
}

/// Defines the library's one exported function, psb_driver_entry(), for driver type D.
/// Once per driver library (a staticlib that psbench_add_rust_driver links).
#[macro_export]
macro_rules! export_driver {
    ($driver:ty) => {
        /// The driver table (psbench/driver.h).
        #[unsafe(no_mangle)]
        pub extern "C" fn psb_driver_entry() -> *const $crate::abi::psb_driver {
            $crate::driver_table!($driver)
        }
    };
}
