//! The trampolines: the C table of a Driver. No panic and no error crosses the ABI: each
//! entry catches a panic (as "panic: <message>") and reports an Error as "<NAME>: <message>"
//! through psb_error, formatting only then. The write and take entries cost a call through
//! catch_unwind, which is free unless something panics.

use std::any::TypeId;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::caps::refuse_outside_caps;
use crate::config::Config;
use crate::error::{panic_text, Error, ErrorKind};
use crate::listener::{Listener, ListenerErrors};
use crate::refusals::Refusals;
use crate::{Context, Drain, Driver, Flush, Loan, Reader, Release, Writer};

pub(crate) type W<D> = <<D as Driver>::Context as Context>::Writer;
pub(crate) type R<D> = <<D as Driver>::Context as Context>::Reader;

/// A context and its open endpoints, so that close() can destroy those a caller left open
/// (readers first) before the context. No lock: driver.h has a context and its endpoints
/// used by one thread at a time.
struct CtxBox<D: Driver> {
    context: D::Context,
    writers: Vec<*mut OpenWriter<D>>,
    readers: Vec<*mut OpenReader<D>>,
}

struct OpenWriter<D: Driver> {
    owner: *mut CtxBox<D>,
    loaned: *mut u8, // the last loan() not yet written
    loaned_len: usize,
    endpoint: W<D>,
}

struct OpenReader<D: Driver> {
    owner: *mut CtxBox<D>,
    errors: Arc<ListenerErrors>,
    listening: bool,
    endpoint: R<D>,
}

/// f(), with a panic turned into an Error.
#[inline(always)]
fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(Error::new(panic_text(&*p))),
    }
}

/// A C string of text, a NUL inside it replaced.
fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

/// Writes "<NAME>: <message>" into err, cut to fit (at a character boundary).
#[cold]
fn report<D: Driver>(err: *mut psb_error, e: &Error) {
    if err.is_null() {
        return;
    }
    let text = format!("{}: {}", D::NAME, e.message());
    let mut n = text.len().min(511);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: err points to a psb_error (driver.h).
    let out = unsafe { &mut (*err).message };
    for (o, b) in out.iter_mut().zip(text.as_bytes()[..n].iter()) {
        *o = *b as c_char;
    }
    out[n] = 0;
}

unsafe fn topic_text(topic: *const c_char) -> String {
    if topic.is_null() {
        String::new()
    } else {
        CStr::from_ptr(topic).to_string_lossy().into_owned()
    }
}

/// What check() refuses (a panic is one more refusal, of setting "driver"), what the SDK
/// finds in the config itself, then what the capabilities leave out that check() did not.
fn refusals<D: Driver>(cfg: &Config) -> Refusals {
    let mut found = Refusals::new();
    for p in &cfg.problems {
        found.add(p.setting.clone(), p.reason.clone());
    }
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| D::check(cfg, &mut found))) {
        found.add("driver", panic_text(&*p));
    }
    refuse_outside_caps(&D::capabilities(), cfg, &found);
    found
}

unsafe extern "C" fn check<D: Driver>(
    cfg: *const psb_config,
    refuse: psb_refuse,
    user: *mut c_void,
) -> c_int {
    let mut count: c_int = 0;
    let mut hand = |setting: &str, reason: &str| {
        if let Some(refuse) = refuse {
            let setting = c_text(setting);
            let message = c_text(&format!("{}: {reason}", D::NAME));
            refuse(user, setting.as_ptr(), message.as_ptr());
        }
        count += 1;
    };
    match catch_unwind(AssertUnwindSafe(|| refusals::<D>(&Config::from_raw(&*cfg)))) {
        Ok(found) => {
            for r in found.all().iter() {
                hand(&r.setting, &r.reason);
            }
        }
        Err(p) => hand("driver", &panic_text(&*p)),
    }
    count
}

unsafe extern "C" fn open<D: Driver>(
    cfg: *const psb_config,
    err: *mut psb_error,
) -> *mut psb_context {
    version::<D>(); // asked once, never on the timed path
    let opened = guarded(|| {
        let cfg = Config::from_raw(&*cfg);
        // Outside the capabilities: refused with check()'s reasons, which say why.
        let outside = Refusals::new();
        refuse_outside_caps(&D::capabilities(), &cfg, &outside);
        if !outside.is_empty() || !cfg.problems.is_empty() {
            refusals::<D>(&cfg).raise()?;
        }
        D::Context::open(&cfg)
    });
    match opened {
        Ok(context) => Box::into_raw(Box::new(CtxBox::<D> {
            context,
            writers: Vec::new(),
            readers: Vec::new(),
        }))
        .cast(),
        Err(e) => {
            report::<D>(err, &e);
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn close<D: Driver>(ctx: *mut psb_context) {
    if ctx.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let boxed = Box::from_raw(ctx.cast::<CtxBox<D>>());
        // Readers first, newest first; the context after every endpoint.
        for r in boxed.readers.iter().rev() {
            // Explicit as rustc's dangerous_implicit_autorefs asks; clippy would drop it.
            #[allow(clippy::needless_borrow)]
            (&(**r).errors).closing.store(true, Ordering::Relaxed);
            drop(Box::from_raw(*r));
        }
        for w in boxed.writers.iter().rev() {
            drop(Box::from_raw(*w));
        }
        drop(boxed);
    }));
}

unsafe extern "C" fn create_writer<D: Driver>(
    ctx: *mut psb_context,
    topic: *const c_char,
    err: *mut psb_error,
) -> *mut psb_writer {
    let owner = ctx.cast::<CtxBox<D>>();
    match guarded(|| (*owner).context.create_writer(&topic_text(topic))) {
        Ok(endpoint) => {
            let w = Box::into_raw(Box::new(OpenWriter::<D> {
                owner,
                loaned: std::ptr::null_mut(),
                loaned_len: 0,
                endpoint,
            }));
            (*owner).writers.push(w);
            w.cast()
        }
        Err(e) => {
            report::<D>(err, &e);
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn destroy_writer<D: Driver>(w: *mut psb_writer) {
    if w.is_null() {
        return;
    }
    let w = w.cast::<OpenWriter<D>>();
    let _ = catch_unwind(AssertUnwindSafe(|| {
        (*(*w).owner).writers.retain(|x| *x != w);
        drop(Box::from_raw(w));
    }));
}

unsafe extern "C" fn create_reader<D: Driver>(
    ctx: *mut psb_context,
    topic: *const c_char,
    on_data: psb_on_data,
    user: *mut c_void,
    err: *mut psb_error,
) -> *mut psb_reader {
    let owner = ctx.cast::<CtxBox<D>>();
    let errors = ListenerErrors::new(D::NAME);
    let listener = on_data.map(|f| Listener::new(f, user, errors.clone()));
    match guarded(|| (*owner).context.create_reader(&topic_text(topic), listener)) {
        Ok(endpoint) => {
            let r = Box::into_raw(Box::new(OpenReader::<D> {
                owner,
                errors,
                listening: on_data.is_some(),
                endpoint,
            }));
            (*owner).readers.push(r);
            r.cast()
        }
        Err(e) => {
            report::<D>(err, &e);
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn destroy_reader<D: Driver>(r: *mut psb_reader) {
    if r.is_null() {
        return;
    }
    let r = r.cast::<OpenReader<D>>();
    // Explicit as rustc's dangerous_implicit_autorefs asks; clippy would drop it.
    #[allow(clippy::needless_borrow)]
    (&(*r).errors).closing.store(true, Ordering::Relaxed);
    let _ = catch_unwind(AssertUnwindSafe(|| {
        (*(*r).owner).readers.retain(|x| *x != r);
        drop(Box::from_raw(r));
    }));
}

fn matched_count(m: Option<u32>) -> c_int {
    m.map_or(-1, |n| n.min(c_int::MAX as u32) as c_int)
}

unsafe extern "C" fn matched_readers<D: Driver>(w: *mut psb_writer) -> c_int {
    let w = &*w.cast::<OpenWriter<D>>();
    catch_unwind(AssertUnwindSafe(|| matched_count(w.endpoint.matched()))).unwrap_or(-1)
}

unsafe extern "C" fn matched_writers<D: Driver>(r: *mut psb_reader) -> c_int {
    let r = &*r.cast::<OpenReader<D>>();
    catch_unwind(AssertUnwindSafe(|| matched_count(r.endpoint.matched()))).unwrap_or(-1)
}

// ---- timed path ---------------------------------------------------------------------

unsafe extern "C" fn write<D: Driver>(
    w: *mut psb_writer,
    data: *const c_void,
    len: usize,
    err: *mut psb_error,
) -> c_int {
    let w = &mut *w.cast::<OpenWriter<D>>();
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(data.cast(), len)
    };
    match guarded(|| w.endpoint.write(bytes)) {
        Ok(()) => 0,
        Err(e) => {
            report::<D>(err, &e);
            -1
        }
    }
}

unsafe extern "C" fn take<D: Driver>(
    r: *mut psb_reader,
    timeout_ns: i64,
    data: *mut *const c_void,
    len: *mut usize,
    err: *mut psb_error,
) -> c_int {
    let endpoint = &mut (*r.cast::<OpenReader<D>>()).endpoint;
    // The sample leaves the closure as its raw parts: valid until the next take or release.
    let taken = move || {
        endpoint
            .take(timeout_ns)
            .map(|s| s.map(|s| (s.as_ptr(), s.len())))
    };
    match catch_unwind(AssertUnwindSafe(taken)) {
        Ok(Ok(Some((p, n)))) => {
            *data = p.cast();
            *len = n;
            1
        }
        Ok(Ok(None)) => 0,
        Ok(Err(e)) => {
            report::<D>(err, &e);
            -1
        }
        Err(p) => {
            report::<D>(err, &Error::new(panic_text(&*p)));
            -1
        }
    }
}

// The SDK holds write_loan() to the ABI's rule (the last loan's sample, once, no longer
// than loaned), so a driver's write_loan() sees only what its loan() handed out.
pub(crate) unsafe extern "C" fn loan<D: Driver>(
    w: *mut psb_writer,
    len: usize,
    err: *mut psb_error,
) -> *mut c_void
where
    W<D>: Loan,
{
    let w = &mut *w.cast::<OpenWriter<D>>();
    match guarded(|| w.endpoint.loan(len)) {
        Ok(p) => {
            w.loaned = p;
            w.loaned_len = len;
            p.cast()
        }
        Err(e) => {
            w.loaned = std::ptr::null_mut();
            report::<D>(err, &e);
            std::ptr::null_mut()
        }
    }
}

pub(crate) unsafe extern "C" fn write_loan<D: Driver>(
    w: *mut psb_writer,
    sample: *mut c_void,
    len: usize,
    err: *mut psb_error,
) -> c_int
where
    W<D>: Loan,
{
    let w = &mut *w.cast::<OpenWriter<D>>();
    let result = guarded(|| {
        let sample = sample.cast::<u8>();
        if sample.is_null() || sample != w.loaned {
            return Err(Error::new(
                "write_loan got a sample that loan() did not return (or that was already written)",
            ));
        }
        w.loaned = std::ptr::null_mut();
        if len > w.loaned_len {
            return Err(Error::new(format!(
                "write_loan of {len} bytes for a sample loaned for {}",
                w.loaned_len
            )));
        }
        w.endpoint.write_loan(sample, len)
    });
    match result {
        Ok(()) => 0,
        Err(e) => {
            report::<D>(err, &e);
            -1
        }
    }
}

pub(crate) unsafe extern "C" fn release<D: Driver>(r: *mut psb_reader)
where
    R<D>: Release,
{
    let r = &mut *r.cast::<OpenReader<D>>();
    let _ = catch_unwind(AssertUnwindSafe(|| r.endpoint.release()));
}

pub(crate) unsafe extern "C" fn flush<D: Driver>(w: *mut psb_writer, err: *mut psb_error) -> c_int
where
    W<D>: Flush,
{
    let w = &mut *w.cast::<OpenWriter<D>>();
    match guarded(|| w.endpoint.flush()) {
        Ok(()) => 0,
        Err(e) => {
            report::<D>(err, &e);
            -1
        }
    }
}

pub(crate) unsafe extern "C" fn drain<D: Driver>(
    w: *mut psb_writer,
    timeout_ns: i64,
    err: *mut psb_error,
) -> c_int
where
    W<D>: Drain,
{
    let w = &mut *w.cast::<OpenWriter<D>>();
    match guarded(|| w.endpoint.drain(timeout_ns)) {
        Ok(true) => 1,
        Ok(false) => 0,
        Err(e) => {
            report::<D>(err, &e);
            if e.kind() == ErrorKind::Timeout {
                0
            } else {
                -1
            }
        }
    }
}

// Counters are a report beside the measurement; a failure leaves them out.
unsafe fn put_into(put: psb_put_counter, user: *mut c_void) -> impl FnMut(&str, u64) {
    move |name: &str, value: u64| {
        if let Some(put) = put {
            let name = c_text(name);
            put(user, name.as_ptr(), value);
        }
    }
}

unsafe extern "C" fn writer_counters<D: Driver>(
    w: *mut psb_writer,
    put: psb_put_counter,
    user: *mut c_void,
) {
    let w = &*w.cast::<OpenWriter<D>>();
    let mut sink = put_into(put, user);
    let _ = catch_unwind(AssertUnwindSafe(|| w.endpoint.counters(&mut sink)));
}

/// The driver's, then listener_errors for a reader in listener mode.
unsafe extern "C" fn reader_counters<D: Driver>(
    r: *mut psb_reader,
    put: psb_put_counter,
    user: *mut c_void,
) {
    let r = &*r.cast::<OpenReader<D>>();
    let mut sink = put_into(put, user);
    let _ = catch_unwind(AssertUnwindSafe(|| r.endpoint.counters(&mut sink)));
    if r.listening {
        sink(
            PSB_COUNTER_LISTENER_ERRORS,
            r.errors.count.load(Ordering::Relaxed),
        );
    }
}

// ---- the table ----------------------------------------------------------------------

/// One leaked value per driver type (a test program may hold several drivers).
fn per_type<D: 'static>(
    registry: &Mutex<Vec<(TypeId, usize)>>,
    make: impl FnOnce() -> usize,
) -> usize {
    let mut all = registry.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, v)) = all.iter().find(|(t, _)| *t == TypeId::of::<D>()) {
        return *v;
    }
    let v = make();
    all.push((TypeId::of::<D>(), v));
    v
}

fn leak_text(text: &str) -> *const c_char {
    c_text(text).into_raw()
}

fn leak_list(names: &[&str]) -> *const *const c_char {
    let mut list: Vec<*const c_char> = names.iter().map(|n| leak_text(n)).collect();
    list.push(std::ptr::null());
    Box::leak(list.into_boxed_slice()).as_ptr()
}

/// The middleware's version, asked once (by open() at the latest) and kept.
unsafe extern "C" fn version<D: Driver>() -> *const c_char {
    static VERSIONS: Mutex<Vec<(TypeId, usize)>> = Mutex::new(Vec::new());
    per_type::<D>(&VERSIONS, || {
        let text = catch_unwind(D::version).unwrap_or_else(|_| "unknown (version() failed)".into());
        leak_text(&text) as usize
    }) as *const c_char
}

/// The optional entries of a driver's table: each None unless the driver's Writer or Reader
/// implements its trait (Loan, Flush, Drain, Release), as found by driver_table!.
#[derive(Clone, Copy, Default)]
pub struct Entries {
    pub loan: Option<(LoanEntry, WriteLoanEntry)>,
    pub flush: Option<FlushEntry>,
    pub drain: Option<DrainEntry>,
    pub release: Option<ReleaseEntry>,
}

pub type LoanEntry = unsafe extern "C" fn(*mut psb_writer, usize, *mut psb_error) -> *mut c_void;
pub type WriteLoanEntry =
    unsafe extern "C" fn(*mut psb_writer, *mut c_void, usize, *mut psb_error) -> c_int;
pub type FlushEntry = unsafe extern "C" fn(*mut psb_writer, *mut psb_error) -> c_int;
pub type DrainEntry = unsafe extern "C" fn(*mut psb_writer, i64, *mut psb_error) -> c_int;
pub type ReleaseEntry = unsafe extern "C" fn(*mut psb_reader);

fn make_table<D: Driver>(optional: Entries) -> psb_driver {
    let caps = D::capabilities();
    psb_driver {
        abi_version: PSB_ABI_VERSION,
        name: leak_text(D::NAME),
        description: leak_text(D::DESCRIPTION),
        version: Some(version::<D>),
        caps: psb_capabilities {
            reliability: caps.reliability,
            durability: caps.durability,
            history: caps.history,
            notify: caps.notify,
            transports: leak_list(caps.transports),
            option_keys: leak_list(caps.option_keys),
            max_payload: caps.max_payload,
            readers_per_topic: caps.readers_per_topic,
            writers_per_topic: caps.writers_per_topic,
            crosses_hosts: caps.crosses_hosts as u32,
        },
        check: Some(check::<D>),
        open: Some(open::<D>),
        close: Some(close::<D>),
        create_writer: Some(create_writer::<D>),
        destroy_writer: Some(destroy_writer::<D>),
        create_reader: Some(create_reader::<D>),
        destroy_reader: Some(destroy_reader::<D>),
        matched_readers: Some(matched_readers::<D>),
        matched_writers: Some(matched_writers::<D>),
        write: Some(write::<D>),
        loan: optional.loan.map(|(loan, _)| loan),
        write_loan: optional.loan.map(|(_, write_loan)| write_loan),
        take: Some(take::<D>),
        release: optional.release,
        flush: optional.flush,
        drain: optional.drain,
        writer_counters: Some(writer_counters::<D>),
        reader_counters: Some(reader_counters::<D>), // listener_errors at least
    }
}

/// The table for driver D with its optional entries, built on first use. driver_table!
/// calls it with the entries its Writer and Reader implement.
pub fn table<D: Driver>(optional: Entries) -> &'static psb_driver {
    static TABLES: Mutex<Vec<(TypeId, usize)>> = Mutex::new(Vec::new());
    let p = per_type::<D>(&TABLES, || {
        Box::into_raw(Box::new(make_table::<D>(optional))) as usize
    });
    // SAFETY: leaked above, never freed.
    unsafe { &*(p as *const psb_driver) }
}
