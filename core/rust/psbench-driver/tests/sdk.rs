//! The SDK through the table it exports, as the node sees it: refusals counted and
//! prefixed, errors prefixed, a panic turned into an error, optional entries NULL unless
//! their trait is implemented (found at compile time, nothing to declare), loans
//! held to the ABI's rule, take_waiting, listener delivery and its error count, close()
//! destroying what was left open.
use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr, CString};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use psbench_driver::abi::*;
use psbench_driver::*;

// ---- a small driver over an in-process queue per topic -------------------------------

type Queue = Arc<Mutex<VecDeque<Vec<u8>>>>;

fn queue(topic: &str) -> Queue {
    static QUEUES: OnceLock<Mutex<Vec<(String, Queue)>>> = OnceLock::new();
    let mut all = QUEUES.get_or_init(Default::default).lock().unwrap();
    if let Some((_, q)) = all.iter().find(|(t, _)| t == topic) {
        return q.clone();
    }
    let q = Queue::default();
    all.push((topic.to_string(), q.clone()));
    q
}

static DROPPED: AtomicUsize = AtomicUsize::new(0);

struct Test;
struct Settings {
    fail: usize, // 0 none, 1 open, 2 panic
}

fn parse(cfg: &Config, refusals: &Refusals) -> Settings {
    let options = Options::new(cfg, refusals);
    options.number("depth", 1, 1, 100, None);
    let fail = options.choice("fail", &["none", "open", "panic"], 0);
    if cfg.qos.durability == PSB_TRANSIENT_LOCAL {
        refusals.add("durability", "nothing is kept for late readers");
    }
    Settings { fail }
}

impl Driver for Test {
    const NAME: &'static str = "sdktest";
    const DESCRIPTION: &'static str = "the SDK's test driver";
    type Context = Ctx;
    fn version() -> String {
        "1.2.3".into()
    }
    fn capabilities() -> Capabilities {
        Capabilities {
            reliability: PSB_RELIABLE,
            durability: PSB_VOLATILE,
            history: PSB_KEEP_LAST,
            notify: PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL | PSB_NOTIFY_LISTENER,
            transports: &["mem"],
            option_keys: &["depth", "fail"],
            max_payload: 1024,
            ..Default::default()
        }
    }
    fn check(cfg: &Config, refusals: &mut Refusals) {
        if parse(cfg, refusals).fail == 2 {
            panic!("check was asked to panic");
        }
    }
}

struct Ctx;
impl Context for Ctx {
    type Writer = Wr;
    type Reader = Rd;
    fn open(cfg: &Config) -> Result<Self, Error> {
        match parse_or_error(cfg, parse)?.fail {
            1 => fail!("open failed as asked ({})", cfg.run_id),
            2 => panic!("open was asked to panic"),
            _ => Ok(Ctx),
        }
    }
    fn create_writer(&mut self, topic: &str) -> Result<Wr, Error> {
        Ok(Wr {
            q: queue(topic),
            buf: vec![0; 1024],
        })
    }
    fn create_reader(&mut self, topic: &str, listener: Option<Listener>) -> Result<Rd, Error> {
        let q = queue(topic);
        let thread = match &listener {
            None => None,
            Some(l) => {
                let (l2, q2) = (l.clone(), q.clone());
                Some(ListenerThread::start(l, move |stop| {
                    while !stop.load(Ordering::Relaxed) {
                        let next = q2.lock().unwrap().pop_front();
                        match next {
                            Some(s) if s == b"bad" => l2.error("a bad sample"),
                            Some(s) => l2.deliver(&s),
                            None => std::thread::sleep(Duration::from_millis(1)),
                        }
                    }
                    Ok(())
                })?)
            }
        };
        Ok(Rd {
            q,
            held: Vec::new(),
            _thread: thread,
        })
    }
}

struct Wr {
    q: Queue,
    buf: Vec<u8>,
}
impl Drop for Wr {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}
impl Writer for Wr {
    fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        if data == b"panic" {
            panic!("write was asked to panic");
        }
        if data == b"fail" {
            fail!("write failed as asked");
        }
        self.q.lock().unwrap().push_back(data.to_vec());
        Ok(())
    }
    fn matched(&self) -> Option<u32> {
        Some(1)
    }
    fn counters(&self, put: &mut dyn FnMut(&str, u64)) {
        put("written_somewhere", 7);
    }
}
impl Loan for Wr {
    fn loan(&mut self, len: usize) -> Result<*mut u8, Error> {
        if len > self.buf.len() {
            fail!("a loan of {len} bytes is more than 1024");
        }
        Ok(self.buf.as_mut_ptr())
    }
    fn write_loan(&mut self, _sample: *mut u8, len: usize) -> Result<(), Error> {
        let sample = self.buf[..len].to_vec();
        self.q.lock().unwrap().push_back(sample);
        Ok(())
    }
}

struct Rd {
    q: Queue,
    held: Vec<u8>,
    _thread: Option<ListenerThread>,
}
impl Drop for Rd {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}
impl Reader for Rd {
    fn take(&mut self, timeout_ns: i64) -> Result<Option<&[u8]>, Error> {
        take_waiting(self, timeout_ns)
    }
}
impl Polling for Rd {
    fn try_take(&mut self) -> Result<Option<&[u8]>, Error> {
        match self.q.lock().unwrap().pop_front() {
            Some(s) => {
                self.held = s;
                Ok(Some(&self.held))
            }
            None => Ok(None),
        }
    }
    fn wait(&mut self, timeout_ns: i64) -> Result<bool, Error> {
        let ns = if timeout_ns < 0 {
            1_000_000
        } else {
            timeout_ns.min(1_000_000)
        };
        std::thread::sleep(Duration::from_nanos(ns as u64));
        Ok(true)
    }
}

/// The context of the small test drivers below: it makes default writers and readers.
struct Made<W, R>(PhantomData<(W, R)>);
impl<W: Writer + Default, R: Reader + Default> Context for Made<W, R> {
    type Writer = W;
    type Reader = R;
    fn open(_: &Config) -> Result<Self, Error> {
        Ok(Made(PhantomData))
    }
    fn create_writer(&mut self, _: &str) -> Result<W, Error> {
        Ok(W::default())
    }
    fn create_reader(&mut self, _: &str, _: Option<Listener>) -> Result<R, Error> {
        Ok(R::default())
    }
}

/// A driver with nothing optional.
struct Plain;
#[derive(Default)]
struct PlainW;
#[derive(Default)]
struct PlainR;
impl Driver for Plain {
    const NAME: &'static str = "plain";
    const DESCRIPTION: &'static str = "nothing optional";
    type Context = Made<PlainW, PlainR>;
    fn version() -> String {
        panic!("no version")
    }
    fn capabilities() -> Capabilities {
        Capabilities {
            transports: &["mem"],
            ..Default::default()
        }
    }
}
impl Writer for PlainW {
    fn write(&mut self, _: &[u8]) -> Result<(), Error> {
        Ok(())
    }
}
impl Reader for PlainR {
    fn take(&mut self, _: i64) -> Result<Option<&[u8]>, Error> {
        Err(Error::new("plain readers have nothing"))
    }
}

/// A driver whose Writer implements Drain and Flush and whose Reader implements Release,
/// with nothing else declared: the table has those entries (issue 33: a drain() without a
/// flag beside it used to be left out silently).
struct Optional;
#[derive(Default)]
struct OptW {
    drained: bool,
}
#[derive(Default)]
struct OptR {
    released: usize,
}
impl Driver for Optional {
    const NAME: &'static str = "optional";
    const DESCRIPTION: &'static str = "drain, flush and release, nothing declared";
    type Context = Made<OptW, OptR>;
    fn version() -> String {
        "1".into()
    }
    fn capabilities() -> Capabilities {
        Plain::capabilities()
    }
}
impl Writer for OptW {
    fn write(&mut self, _: &[u8]) -> Result<(), Error> {
        self.drained = false;
        Ok(())
    }
}
impl Drain for OptW {
    fn drain(&mut self, timeout_ns: i64) -> Result<bool, Error> {
        if timeout_ns == 0 {
            return Err(Error::timeout("not drained at once"));
        }
        self.drained = true;
        Ok(true)
    }
}
impl Flush for OptW {
    fn flush(&mut self) -> Result<(), Error> {
        fail!("nothing to flush")
    }
}
impl Reader for OptR {
    fn take(&mut self, _: i64) -> Result<Option<&[u8]>, Error> {
        Ok(None)
    }
    fn counters(&self, put: &mut dyn FnMut(&str, u64)) {
        put("released", self.released as u64);
    }
}
impl Release for OptR {
    fn release(&mut self) {
        self.released += 1;
    }
}

// ---- calling through the table --------------------------------------------------------

struct Cfg {
    _strings: Vec<CString>,
    _options: Vec<psb_option>,
    raw: psb_config,
}

fn config(run_id: &str, options: &[(&str, &str)], qos: psb_qos, notify: u32) -> Cfg {
    let mut strings: Vec<CString> =
        vec![CString::new(run_id).unwrap(), CString::new("mem").unwrap()];
    for (k, v) in options {
        strings.push(CString::new(*k).unwrap());
        strings.push(CString::new(*v).unwrap());
    }
    let opts: Vec<psb_option> = (0..options.len())
        .map(|i| psb_option {
            key: strings[2 + 2 * i].as_ptr(),
            value: strings[3 + 2 * i].as_ptr(),
        })
        .collect();
    let raw = psb_config {
        run_id: strings[0].as_ptr(),
        transport: strings[1].as_ptr(),
        notify,
        qos,
        max_payload: 256,
        options: opts.as_ptr(),
        option_count: opts.len(),
        use_loan: 0,
        intra_process: 1,
        local_address: std::ptr::null(),
        peer_addresses: std::ptr::null(),
        readers: 1,
        writers: 1,
        run_topics: std::ptr::null(),
        run_topic_count: 0,
    };
    Cfg {
        _strings: strings,
        _options: opts,
        raw,
    }
}

const RELIABLE: psb_qos = psb_qos {
    reliability: PSB_RELIABLE,
    durability: PSB_VOLATILE,
    history: 0,
    history_depth: 0,
};

unsafe extern "C" fn collect(user: *mut c_void, setting: *const c_char, reason: *const c_char) {
    let out = &mut *(user as *mut Vec<(String, String)>);
    out.push((
        CStr::from_ptr(setting).to_str().unwrap().into(),
        CStr::from_ptr(reason).to_str().unwrap().into(),
    ));
}

fn check(t: &psb_driver, cfg: &Cfg) -> (i32, Vec<(String, String)>) {
    let mut found: Vec<(String, String)> = Vec::new();
    let n =
        unsafe { t.check.unwrap()(&cfg.raw, Some(collect), &mut found as *mut _ as *mut c_void) };
    (n, found)
}

fn new_error() -> psb_error {
    psb_error { message: [0; 512] }
}

fn message(e: &psb_error) -> String {
    unsafe { CStr::from_ptr(e.message.as_ptr()) }
        .to_str()
        .unwrap()
        .to_string()
}

/// A context of driver t for run_id, best effort, notify wait (asserted open).
unsafe fn opened_best_effort(t: &psb_driver, run_id: &str) -> *mut psb_context {
    let qos = psb_qos {
        reliability: PSB_BEST_EFFORT,
        ..RELIABLE
    };
    let cfg = config(run_id, &[], qos, PSB_NOTIFY_WAIT);
    let mut err = new_error();
    let ctx = t.open.unwrap()(&cfg.raw, &mut err);
    assert!(!ctx.is_null(), "{}", message(&err));
    ctx
}

fn topic(name: &str) -> CString {
    CString::new(name).unwrap()
}

#[test]
fn every_refusal_is_counted_and_prefixed() {
    let t = driver_table!(Test);
    let qos = psb_qos {
        reliability: PSB_BEST_EFFORT,
        durability: PSB_TRANSIENT_LOCAL,
        history: PSB_KEEP_LAST,
        history_depth: 0,
    };
    let cfg = config(
        "r1",
        &[("depth", "abc"), ("fail", "sometimes")],
        qos,
        PSB_NOTIFY_WAIT,
    );
    let (n, found) = check(t, &cfg);
    let settings: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        settings,
        [
            "option:depth",
            "option:fail",
            "durability",
            "reliability",
            "history"
        ]
    );
    assert_eq!(n, 5);
    for (_, reason) in &found {
        assert!(reason.starts_with("sdktest: "), "{reason}");
    }
    assert_eq!(
        found[0].1,
        "sdktest: option depth='abc': use a whole number from 1 to 100"
    );
    assert_eq!(
        found[1].1,
        "sdktest: option fail='sometimes' is not known; use fail=none (default), fail=open or fail=panic"
    );
    assert_eq!(found[2].1, "sdktest: nothing is kept for late readers"); // the driver's reason, not the caps'
    assert_eq!(
        found[3].1,
        "sdktest: reliability 'best_effort' is not supported; this driver supports reliable"
    );
    assert_eq!(
        found[4].1,
        "sdktest: history keep_last needs a depth of at least 1 (keep_last:N)"
    );
    assert_eq!(
        check(
            t,
            &config("r1", &[("depth", "5")], RELIABLE, PSB_NOTIFY_WAIT)
        )
        .0,
        0
    );
}

#[test]
fn open_refuses_outside_the_caps_with_the_checks_reasons() {
    let t = driver_table!(Test);
    let qos = psb_qos {
        durability: PSB_TRANSIENT_LOCAL,
        ..RELIABLE
    };
    let cfg = config("r2", &[], qos, PSB_NOTIFY_WAIT);
    let mut err = new_error();
    let ctx = unsafe { t.open.unwrap()(&cfg.raw, &mut err) };
    assert!(ctx.is_null());
    assert_eq!(message(&err), "sdktest: nothing is kept for late readers");
}

#[test]
fn an_error_is_prefixed_and_a_panic_becomes_one() {
    let t = driver_table!(Test);
    let mut err = new_error();
    let cfg = config("r3", &[("fail", "open")], RELIABLE, PSB_NOTIFY_WAIT);
    assert!(unsafe { t.open.unwrap()(&cfg.raw, &mut err) }.is_null());
    assert_eq!(message(&err), "sdktest: open failed as asked (r3)");

    let cfg = config("r3", &[("fail", "panic")], RELIABLE, PSB_NOTIFY_WAIT);
    assert!(unsafe { t.open.unwrap()(&cfg.raw, &mut err) }.is_null());
    assert_eq!(message(&err), "sdktest: panic: open was asked to panic");
    let (n, found) = check(t, &cfg);
    assert_eq!(n, 1);
    assert_eq!(
        found[0],
        (
            "driver".to_string(),
            "sdktest: panic: check was asked to panic".to_string()
        )
    );

    let cfg = config("r3", &[], RELIABLE, PSB_NOTIFY_WAIT);
    unsafe {
        let ctx = t.open.unwrap()(&cfg.raw, &mut err);
        assert!(!ctx.is_null());
        let w = t.create_writer.unwrap()(ctx, topic("psb_r3_a").as_ptr(), &mut err);
        assert_eq!(
            t.write.unwrap()(w, b"panic".as_ptr().cast(), 5, &mut err),
            -1
        );
        assert_eq!(message(&err), "sdktest: panic: write was asked to panic");
        assert_eq!(
            t.write.unwrap()(w, b"fail".as_ptr().cast(), 4, &mut err),
            -1
        );
        assert_eq!(message(&err), "sdktest: write failed as asked");
        t.close.unwrap()(ctx);
    }
}

#[test]
fn optional_entries_are_null_unless_implemented() {
    let plain = driver_table!(Plain);
    assert_eq!(plain.abi_version, PSB_ABI_VERSION);
    assert!(plain.loan.is_none() && plain.write_loan.is_none());
    assert!(plain.flush.is_none() && plain.drain.is_none() && plain.release.is_none());
    let name = unsafe { CStr::from_ptr(plain.name) };
    assert_eq!(name.to_str().unwrap(), "plain");
    let version = unsafe { CStr::from_ptr(plain.version.unwrap()()) };
    assert_eq!(version.to_str().unwrap(), "unknown (version() failed)");
    let test = driver_table!(Test);
    assert!(test.loan.is_some() && test.write_loan.is_some());
    assert!(test.flush.is_none() && test.drain.is_none());
    assert_eq!(
        unsafe { CStr::from_ptr(test.version.unwrap()()) }
            .to_str()
            .unwrap(),
        "1.2.3"
    );
    let keys: Vec<&str> = (0..)
        .map(|i| unsafe { *test.caps.option_keys.add(i) })
        .take_while(|p| !p.is_null())
        .map(|p| unsafe { CStr::from_ptr(p) }.to_str().unwrap())
        .collect();
    assert_eq!(keys, ["depth", "fail"]);
    // A reader's failure is the driver's message (a Reader without take() does not compile).
    unsafe {
        let mut err = new_error();
        let ctx = opened_best_effort(plain, "r4");
        let r = plain.create_reader.unwrap()(
            ctx,
            topic("psb_r4_a").as_ptr(),
            None,
            std::ptr::null_mut(),
            &mut err,
        );
        let (mut data, mut len) = (std::ptr::null(), 0usize);
        assert_eq!(plain.take.unwrap()(r, 0, &mut data, &mut len, &mut err), -1);
        assert_eq!(message(&err), "plain: plain readers have nothing");
        assert_eq!(plain.matched_writers.unwrap()(r), -1);
        plain.close.unwrap()(ctx);
    }
}

#[test]
fn samples_and_loans_go_through_and_loans_keep_the_rule() {
    let t = driver_table!(Test);
    let cfg = config("r5", &[], RELIABLE, PSB_NOTIFY_WAIT);
    let mut err = new_error();
    unsafe {
        let ctx = t.open.unwrap()(&cfg.raw, &mut err);
        let w = t.create_writer.unwrap()(ctx, topic("psb_r5_a").as_ptr(), &mut err);
        let r = t.create_reader.unwrap()(
            ctx,
            topic("psb_r5_a").as_ptr(),
            None,
            std::ptr::null_mut(),
            &mut err,
        );
        let (mut data, mut len) = (std::ptr::null(), 0usize);
        assert_eq!(t.take.unwrap()(r, 0, &mut data, &mut len, &mut err), 0);
        assert_eq!(
            t.take.unwrap()(r, 3_000_000, &mut data, &mut len, &mut err),
            0
        ); // waited, nothing
        assert_eq!(
            t.write.unwrap()(w, b"hello".as_ptr().cast(), 5, &mut err),
            0
        );
        assert_eq!(t.take.unwrap()(r, -1, &mut data, &mut len, &mut err), 1);
        assert_eq!(std::slice::from_raw_parts(data.cast::<u8>(), len), b"hello");

        let p = t.loan.unwrap()(w, 8, &mut err).cast::<u8>();
        assert!(!p.is_null());
        std::ptr::copy_nonoverlapping(b"loaned!!".as_ptr(), p, 8);
        assert_eq!(t.write_loan.unwrap()(w, p.cast(), 9, &mut err), -1);
        assert_eq!(
            message(&err),
            "sdktest: write_loan of 9 bytes for a sample loaned for 8"
        );
        assert_eq!(t.write_loan.unwrap()(w, p.cast(), 8, &mut err), -1); // written (refused) once already
        assert!(message(&err).contains("that loan() did not return"));
        let p = t.loan.unwrap()(w, 8, &mut err).cast::<u8>();
        std::ptr::copy_nonoverlapping(b"loaned!!".as_ptr(), p, 8);
        assert_eq!(t.write_loan.unwrap()(w, p.cast(), 6, &mut err), 0);
        assert_eq!(
            t.take.unwrap()(r, 1_000_000_000, &mut data, &mut len, &mut err),
            1
        );
        assert_eq!(
            std::slice::from_raw_parts(data.cast::<u8>(), len),
            b"loaned"
        );
        assert!(t.loan.unwrap()(w, 4096, &mut err).is_null());
        assert_eq!(
            message(&err),
            "sdktest: a loan of 4096 bytes is more than 1024"
        );
        assert_eq!(t.matched_readers.unwrap()(w), 1);
        assert_eq!(t.matched_writers.unwrap()(r), -1);

        let mut counters: Vec<(String, u64)> = Vec::new();
        unsafe extern "C" fn put(user: *mut c_void, name: *const c_char, value: u64) {
            let out = &mut *(user as *mut Vec<(String, u64)>);
            out.push((CStr::from_ptr(name).to_str().unwrap().into(), value));
        }
        t.writer_counters.unwrap()(w, Some(put), &mut counters as *mut _ as *mut c_void);
        t.reader_counters.unwrap()(r, Some(put), &mut counters as *mut _ as *mut c_void);
        assert_eq!(counters, [("written_somewhere".to_string(), 7)]); // no listener_errors: not listening

        // close() destroys the writer and reader left open.
        let before = DROPPED.load(Ordering::Relaxed);
        t.close.unwrap()(ctx);
        assert!(DROPPED.load(Ordering::Relaxed) >= before + 2);
    }
}

#[test]
fn a_listener_delivers_and_its_errors_are_counted() {
    let t = driver_table!(Test);
    let cfg = config("r6", &[], RELIABLE, PSB_NOTIFY_LISTENER);
    let got: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    unsafe extern "C" fn on_data(user: *mut c_void, data: *const c_void, len: usize) {
        let got = &*(user as *const Mutex<Vec<Vec<u8>>>);
        got.lock()
            .unwrap()
            .push(std::slice::from_raw_parts(data.cast::<u8>(), len).to_vec());
    }
    let mut err = new_error();
    unsafe {
        let ctx = t.open.unwrap()(&cfg.raw, &mut err);
        let w = t.create_writer.unwrap()(ctx, topic("psb_r6_a").as_ptr(), &mut err);
        let r = t.create_reader.unwrap()(
            ctx,
            topic("psb_r6_a").as_ptr(),
            Some(on_data),
            Arc::as_ptr(&got) as *mut c_void,
            &mut err,
        );
        for s in [&b"one"[..], b"bad", b"two", b"bad"] {
            assert_eq!(t.write.unwrap()(w, s.as_ptr().cast(), s.len(), &mut err), 0);
        }
        for _ in 0..2000 {
            if got.lock().unwrap().len() == 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(*got.lock().unwrap(), [b"one".to_vec(), b"two".to_vec()]);
        let mut counters: Vec<(String, u64)> = Vec::new();
        unsafe extern "C" fn put(user: *mut c_void, name: *const c_char, value: u64) {
            let out = &mut *(user as *mut Vec<(String, u64)>);
            out.push((CStr::from_ptr(name).to_str().unwrap().into(), value));
        }
        t.reader_counters.unwrap()(r, Some(put), &mut counters as *mut _ as *mut c_void);
        assert_eq!(counters, [(PSB_COUNTER_LISTENER_ERRORS.to_string(), 2)]);
        t.destroy_reader.unwrap()(r);
        t.destroy_writer.unwrap()(w);
        t.close.unwrap()(ctx);
    }
}

#[test]
fn the_sdk_refuses_a_malformed_run_topics_list() {
    let t = driver_table!(Test);
    let mut cfg = config("r7", &[], RELIABLE, PSB_NOTIFY_WAIT);
    let a = topic("psb_r7_a");
    let topics = [a.as_ptr(), a.as_ptr()];
    cfg.raw.run_topics = topics.as_ptr();
    cfg.raw.run_topic_count = 2;
    let (n, found) = check(t, &cfg);
    assert_eq!(n, 1);
    assert_eq!(
        found[0].1,
        "sdktest: run_topics[1] is listed twice: every topic of the run once, by name"
    );
}

#[test]
fn an_implemented_optional_trait_is_in_the_table_with_nothing_declared() {
    let t = driver_table!(Optional);
    assert!(t.drain.is_some() && t.flush.is_some() && t.release.is_some());
    assert!(t.loan.is_none() && t.write_loan.is_none());
    let mut err = new_error();
    unsafe {
        let ctx = opened_best_effort(t, "r8");
        let w = t.create_writer.unwrap()(ctx, topic("psb_r8_a").as_ptr(), &mut err);
        assert_eq!(t.write.unwrap()(w, b"x".as_ptr().cast(), 1, &mut err), 0);
        assert_eq!(t.drain.unwrap()(w, 1_000_000, &mut err), 1);
        assert_eq!(t.drain.unwrap()(w, 0, &mut err), 0); // a timeout is the ABI's 0
        assert_eq!(message(&err), "optional: not drained at once");
        assert_eq!(t.flush.unwrap()(w, &mut err), -1);
        assert_eq!(message(&err), "optional: nothing to flush");
        let r = t.create_reader.unwrap()(
            ctx,
            topic("psb_r8_a").as_ptr(),
            None,
            std::ptr::null_mut(),
            &mut err,
        );
        t.release.unwrap()(r);
        t.release.unwrap()(r);
        let mut counters: Vec<(String, u64)> = Vec::new();
        unsafe extern "C" fn put(user: *mut c_void, name: *const c_char, value: u64) {
            let out = &mut *(user as *mut Vec<(String, u64)>);
            out.push((CStr::from_ptr(name).to_str().unwrap().into(), value));
        }
        t.reader_counters.unwrap()(r, Some(put), &mut counters as *mut _ as *mut c_void);
        assert_eq!(counters, [("released".to_string(), 2)]);
        t.close.unwrap()(ctx);
    }
}
