//! Listener mode: the node's callback, called from a delivery thread, and the count of
//! errors met there (reader counter PSB_COUNTER_LISTENER_ERRORS).

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::{panic_text, Error, ErrorKind};

/// What a listener-mode reader's errors come to: their count and the first one's text on
/// stderr. Kept by the SDK beside each reader.
#[derive(Debug)]
pub(crate) struct ListenerErrors {
    pub driver: &'static str,
    pub count: AtomicU64,
    /// Set as the SDK destroys the reader: a middleware may still call its listener then;
    /// nothing measured is missed, so those errors are not counted.
    pub closing: AtomicBool,
}

impl ListenerErrors {
    pub fn new(driver: &'static str) -> Arc<Self> {
        Arc::new(ListenerErrors {
            driver,
            count: AtomicU64::new(0),
            closing: AtomicBool::new(false),
        })
    }
}

/// The node's listener callback (notify listener). Send and Clone: hand it to the
/// middleware's delivery thread; the data need be valid only during the call.
#[derive(Clone)]
pub struct Listener {
    on_data: unsafe extern "C" fn(*mut c_void, *const c_void, usize),
    user: *mut c_void,
    errors: Arc<ListenerErrors>,
}

// The node's callback is made to be called from a driver's thread (driver.h).
unsafe impl Send for Listener {}
unsafe impl Sync for Listener {}

impl Listener {
    pub(crate) fn new(
        on_data: unsafe extern "C" fn(*mut c_void, *const c_void, usize),
        user: *mut c_void,
        errors: Arc<ListenerErrors>,
    ) -> Self {
        Listener {
            on_data,
            user,
            errors,
        }
    }

    /// Hands one sample to the node.
    #[inline]
    pub fn deliver(&self, data: &[u8]) {
        // SAFETY: the node's callback and user pointer, as create_reader got them.
        unsafe { (self.on_data)(self.user, data.as_ptr().cast(), data.len()) }
    }

    /// An error on the delivery thread, which no call can return to the node: counted, and
    /// the first one printed on stderr as "<driver>: <message>". The samples it cost show
    /// as lost in psbench's own accounting.
    pub fn error(&self, message: impl std::fmt::Display) {
        let e = &self.errors;
        if e.closing.load(Ordering::Relaxed) || e.count.fetch_add(1, Ordering::Relaxed) != 0 {
            return;
        }
        eprintln!("{}: {}", e.driver, message);
    }

    /// Hands over every sample next() gives (Ok(None): none left). A bad_sample error is
    /// an error() and the next sample is taken; any other error is an error() that ends
    /// this delivery.
    pub fn drain<'s>(&self, mut next: impl FnMut() -> Result<Option<&'s [u8]>, Error>) {
        loop {
            match next() {
                Ok(Some(data)) => self.deliver(data),
                Ok(None) => return,
                Err(e) if e.kind() == ErrorKind::BadSample => self.error(&e),
                Err(e) => {
                    self.error(&e);
                    return;
                }
            }
        }
    }
}

/// A listener's thread, for a Reader whose middleware has no delivery thread of its own:
/// start(listener, body) runs body(stopping) on a new thread; the body returns soon after
/// `stopping` turns true, so it should block for a bounded slice at a time. Dropping it
/// sets that flag and joins. An error or panic the body returns ends it and is reported
/// with listener.error().
#[derive(Default)]
pub struct ListenerThread {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ListenerThread {
    pub fn start(
        listener: &Listener,
        body: impl FnOnce(&AtomicBool) -> Result<(), Error> + Send + 'static,
    ) -> Result<Self, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, listener) = (stop.clone(), listener.clone());
        let thread = std::thread::Builder::new()
            .name("psb-listener".into())
            .spawn(
                move || match catch_unwind(AssertUnwindSafe(|| body(&flag))) {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => listener.error(format_args!("{e}; the listener stops")),
                    Err(panic) => {
                        listener.error(format_args!("{}; the listener stops", panic_text(&*panic)))
                    }
                },
            )
            .map_err(|e| Error::new(format!("cannot start the listener thread: {e}")))?;
        Ok(ListenerThread {
            stop,
            thread: Some(thread),
        })
    }

    /// Returns when the body has (at once when none was started).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ListenerThread {
    fn drop(&mut self) {
        self.stop();
    }
}
