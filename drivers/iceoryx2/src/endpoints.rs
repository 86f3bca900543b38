//! A writer (a publisher, and a notifier when readers sleep on events) and a reader (a
//! subscriber, and a listener to sleep on; in listener mode all of it on a thread of its
//! own).
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::prelude::*;
use iceoryx2::sample::Sample;
use iceoryx2::sample_mut_uninit::SampleMutUninit;
use psbench_driver::{take_waiting, Error, Listener, ListenerThread, Polling, Reader, Writer};

use crate::ports::{self, Pub, Sleeper, Sub, Svc, Topic, Waker};
use crate::settings::Settings;

type Loan = SampleMutUninit<Svc, [MaybeUninit<u8>], ()>;

pub struct Wr {
    loaned: Option<Loan>, // dropped (given back) before the publisher
    publisher: Pub,
    notifier: Option<Waker>,
    topic: Topic,
    _wake: Option<ports::Wake>,
}

impl Wr {
    pub fn new(node: &Node<Svc>, s: &Settings, name: &str) -> Result<Self, Error> {
        let topic = ports::topic(node, s, name)?;
        let publisher = ports::publisher(&topic, s)?;
        let wake = if s.events() {
            Some(ports::wake(node, s, name)?)
        } else {
            None
        };
        let notifier = wake.as_ref().map(ports::notifier).transpose()?;
        Ok(Wr {
            loaned: None,
            publisher,
            notifier,
            topic,
            _wake: wake,
        })
    }

    #[inline]
    fn wake_readers(&self) -> Result<(), Error> {
        if let Some(n) = &self.notifier {
            n.notify()
                .map_err(|e| Error::new(format!("notify failed: {e:?}")))?;
        }
        Ok(())
    }
}

impl Writer for Wr {
    fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        let sample = self
            .publisher
            .loan_slice_uninit(data.len())
            .map_err(|e| loan_failed(e, data.len()))?;
        sample
            .write_from_slice(data)
            .send()
            .map_err(|e| Error::new(format!("send failed: {e:?}")))?;
        self.wake_readers()
    }

    /// The subscribers there are; first the publisher connects to new ones (and hands
    /// them its transient_local history), which iceoryx2 otherwise does at the next send.
    fn matched(&self) -> Option<u32> {
        let _ = self.publisher.update_connections();
        Some(self.topic.dynamic_config().number_of_subscribers() as u32)
    }
}

/// Zero-copy send: the table has loan and write_loan.
impl psbench_driver::Loan for Wr {
    fn loan(&mut self, len: usize) -> Result<*mut u8, Error> {
        self.loaned = None; // an earlier loan never written goes back first
        let mut sample = self
            .publisher
            .loan_slice_uninit(len)
            .map_err(|e| loan_failed(e, len))?;
        let p = sample.payload_mut().as_mut_ptr().cast::<u8>();
        self.loaned = Some(sample);
        Ok(p)
    }
    fn write_loan(&mut self, _sample: *mut u8, len: usize) -> Result<(), Error> {
        let sample = self
            .loaned
            .take()
            .ok_or_else(|| Error::new("write_loan without a loan"))?;
        if len != sample.payload().len() {
            return Err(Error::new(format!(
                "write_loan of {len} bytes for a sample loaned for {}: an iceoryx2 sample's length is fixed when it is loaned",
                sample.payload().len()
            )));
        }
        // SAFETY: the node filled all len bytes of the loan before handing it back.
        let sample = unsafe { sample.assume_init() };
        sample
            .send()
            .map_err(|e| Error::new(format!("send failed: {e:?}")))?;
        self.wake_readers()
    }
}

#[cold]
fn loan_failed(e: impl std::fmt::Debug, len: usize) -> Error {
    Error::new(format!("cannot loan a sample of {len} bytes: {e:?}"))
}

pub struct Rd {
    held: Option<Sample<Svc, [u8], ()>>, // the last take's, given back before the subscriber
    subscriber: Option<Sub>,
    sleeper: Option<Sleeper>,
    thread: Option<ListenerThread>, // listener mode: the subscriber lives there
    connected: Arc<AtomicU32>,      // listener mode: publishers its subscriber is connected to
    topic: Topic,
    _wake: Option<ports::Wake>,
}

impl Rd {
    pub fn new(
        node: &Node<Svc>,
        s: &Settings,
        name: &str,
        listener: Option<Listener>,
    ) -> Result<Self, Error> {
        let topic = ports::topic(node, s, name)?;
        if let Some(listener) = listener {
            let connected = Arc::new(AtomicU32::new(0));
            let thread = deliver_on_a_thread(s, name, listener, connected.clone())?;
            let (held, subscriber, sleeper, thread) = (None, None, None, Some(thread));
            return Ok(Rd {
                held,
                subscriber,
                sleeper,
                thread,
                connected,
                topic,
                _wake: None,
            });
        }
        // The listener before the subscriber: a sample (or history) that comes once the
        // subscriber exists always finds it.
        let wake = if s.events() {
            Some(ports::wake(node, s, name)?)
        } else {
            None
        };
        let sleeper = wake.as_ref().map(ports::listener).transpose()?;
        let subscriber = ports::subscriber(&topic, s)?;
        let connected = Arc::new(AtomicU32::new(0));
        Ok(Rd {
            held: None,
            subscriber: Some(subscriber),
            sleeper,
            thread: None,
            connected,
            topic,
            _wake: wake,
        })
    }
}

impl Drop for Rd {
    fn drop(&mut self) {
        self.thread = None; // joins the listener thread
        self.held = None;
    }
}

/// iceoryx2 looks (receive) and waits (a listener's sleeper): take() is take_waiting().
impl Polling for Rd {
    fn try_take(&mut self) -> Result<Option<&[u8]>, Error> {
        self.held = None;
        let Some(subscriber) = &self.subscriber else {
            return Err(Error::new("take() on a reader in listener mode"));
        };
        match subscriber.receive() {
            Ok(Some(sample)) => Ok(Some(self.held.insert(sample).payload())),
            Ok(None) => Ok(None),
            Err(e) => Err(Error::new(format!("receive failed: {e:?}"))),
        }
    }

    fn wait(&mut self, timeout_ns: i64) -> Result<bool, Error> {
        let Some(sleeper) = &self.sleeper else {
            // poll mode, asked to wait: a short sleep, then look again
            std::thread::sleep(Duration::from_micros(20).min(duration(timeout_ns)));
            return Ok(true);
        };
        let woken = if timeout_ns < 0 {
            sleeper.blocking_wait(|_| {})
        } else {
            sleeper.timed_wait(|_| {}, duration(timeout_ns))
        };
        match woken {
            Ok(n) => Ok(n > 0),
            Err(e) if format!("{e:?}").contains("Interrupt") => Ok(false), // a signal: no sample
            Err(e) => Err(Error::new(format!("waiting for a sample failed: {e:?}"))),
        }
    }
}

impl Reader for Rd {
    fn take(&mut self, timeout_ns: i64) -> Result<Option<&[u8]>, Error> {
        take_waiting(self, timeout_ns)
    }

    /// The publishers this reader's subscriber is connected to. iceoryx2 connects a
    /// subscriber's end of a connection only when the subscriber looks (receive() or
    /// update_connections()), and a publisher delivers nothing to a connection whose
    /// subscriber end is not connected. So matched() connects before it counts.
    fn matched(&self) -> Option<u32> {
        match &self.subscriber {
            Some(subscriber) => {
                let _ = subscriber.update_connections();
                Some(self.topic.dynamic_config().number_of_publishers() as u32)
            }
            None => Some(self.connected.load(Ordering::Acquire)),
        }
    }
}

impl psbench_driver::Release for Rd {
    fn release(&mut self) {
        self.held = None;
    }
}

fn duration(ns: i64) -> Duration {
    Duration::from_nanos(ns.max(0) as u64)
}

/// Listener mode: a thread with a node, subscriber and event listener of its own (iceoryx2's
/// ipc ports stay on the thread that made them) sleeps on the event, then hands every
/// sample in the buffer to the node. Returns once the subscriber exists.
fn deliver_on_a_thread(
    s: &Settings,
    name: &str,
    listener: Listener,
    connected: Arc<AtomicU32>,
) -> Result<ListenerThread, Error> {
    let (s, name, deliver) = (s.clone(), name.to_string(), listener.clone());
    let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), Error>>(1);
    let thread = ListenerThread::start(&listener, move |stop: &AtomicBool| {
        let made = (|| {
            let node = ports::node(&s.namespace)?;
            let topic = ports::topic(&node, &s, &name)?;
            let wake = ports::wake(&node, &s, &name)?;
            let sleeper = ports::listener(&wake)?;
            let subscriber = ports::subscriber(&topic, &s)?;
            Ok::<_, Error>((node, topic, wake, sleeper, subscriber))
        })();
        let (_node, topic, _wake, sleeper, subscriber) = match made {
            Ok(p) => {
                let _ = ready_tx.send(Ok(()));
                p
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return Ok(());
            }
        };
        while !stop.load(Ordering::Relaxed) {
            loop {
                match subscriber.receive() {
                    Ok(Some(sample)) => deliver.deliver(sample.payload()),
                    Ok(None) => break,
                    Err(e) => {
                        deliver.error(format_args!("receive failed: {e:?}"));
                        break;
                    }
                }
            }
            // Connected to every publisher there is (matched() says how many), before a
            // reliable one fills the buffer.
            let _ = subscriber.update_connections();
            let publishers = topic.dynamic_config().number_of_publishers() as u32;
            connected.store(publishers, Ordering::Release);
            // Bounded, so that destroy_reader's stop is seen within 100 ms; 1 ms while no
            // publisher is there, to connect to the first one soon.
            let slice = Duration::from_millis(if publishers == 0 { 1 } else { 100 });
            if let Err(e) = sleeper.timed_wait(|_| {}, slice) {
                if !format!("{e:?}").contains("Interrupt") {
                    return Err(Error::new(format!("waiting for a sample failed: {e:?}")));
                }
            }
        }
        Ok(())
    })?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(thread),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Error::new(
            "the listener thread ended before its subscriber was made",
        )),
    }
}
