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
use iceoryx2::sample_mut::SampleMut;
use iceoryx2::sample_mut_uninit::SampleMutUninit;
use psbench_driver::{
    err, fail, take_waiting, Error, Listener, ListenerThread, Polling, Reader, Writer,
};

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
        let wake = s.events.then(|| ports::wake(node, s, name)).transpose()?;
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
    fn loan_uninit(&self, len: usize) -> Result<Loan, Error> {
        (self.publisher.loan_slice_uninit(len))
            .map_err(|e| err!("cannot loan a sample of {len} bytes: {e:?}"))
    }

    /// Sends the sample, then wakes the readers that sleep on the topic's event.
    #[inline]
    fn send(&self, sample: SampleMut<Svc, [u8], ()>) -> Result<(), Error> {
        sample.send().map_err(|e| err!("send failed: {e:?}"))?;
        if let Some(n) = &self.notifier {
            n.notify().map_err(|e| err!("notify failed: {e:?}"))?;
        }
        Ok(())
    }
}

impl Writer for Wr {
    fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        let sample = self.loan_uninit(data.len())?;
        self.send(sample.write_from_slice(data))
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
        let sample = self.loaned.insert(self.loan_uninit(len)?);
        Ok(sample.payload_mut().as_mut_ptr().cast())
    }
    fn write_loan(&mut self, _sample: *mut u8, len: usize) -> Result<(), Error> {
        let Some(sample) = self.loaned.take() else {
            fail!("write_loan without a loan");
        };
        if len != sample.payload().len() {
            fail!(
                "write_loan of {len} bytes for a sample loaned for {}: an iceoryx2 sample's length is fixed when it is loaned",
                sample.payload().len()
            );
        }
        // SAFETY: the node filled all len bytes of the loan before handing it back.
        self.send(unsafe { sample.assume_init() })
    }
}

/// Dropped in the order of its fields: the listener thread joined first, then the last
/// take's sample given back before the subscriber.
pub struct Rd {
    _thread: Option<ListenerThread>, // listener mode: the subscriber lives there
    held: Option<Sample<Svc, [u8], ()>>,
    subscriber: Option<Sub>,
    sleeper: Option<Sleeper>,
    connected: Arc<AtomicU32>, // listener mode: publishers its subscriber is connected to
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
        let connected = Arc::new(AtomicU32::new(0));
        let (mut thread, mut wake, mut sleeper, mut subscriber) = (None, None, None, None);
        if let Some(listener) = listener {
            thread = Some(deliver_on_a_thread(s, name, listener, connected.clone())?);
        } else {
            // The listener before the subscriber: a sample (or history) that comes once the
            // subscriber exists always finds it.
            wake = s.events.then(|| ports::wake(node, s, name)).transpose()?;
            sleeper = wake.as_ref().map(ports::listener).transpose()?;
            subscriber = Some(ports::subscriber(&topic, s)?);
        }
        Ok(Rd {
            _thread: thread,
            held: None,
            subscriber,
            sleeper,
            connected,
            topic,
            _wake: wake,
        })
    }
}

/// iceoryx2 looks (receive) and waits (a listener's sleeper): take() is take_waiting().
impl Polling for Rd {
    fn try_take(&mut self) -> Result<Option<&[u8]>, Error> {
        self.held = None;
        let Some(subscriber) = &self.subscriber else {
            fail!("take() on a reader in listener mode");
        };
        match subscriber.receive() {
            Ok(Some(sample)) => Ok(Some(self.held.insert(sample).payload())),
            Ok(None) => Ok(None),
            Err(e) => Err(err!("receive failed: {e:?}")),
        }
    }

    fn wait(&mut self, timeout_ns: i64) -> Result<bool, Error> {
        let timeout = Duration::from_nanos(timeout_ns.max(0) as u64);
        let Some(sleeper) = &self.sleeper else {
            // poll mode, asked to wait: a short sleep, then look again
            std::thread::sleep(Duration::from_micros(20).min(timeout));
            return Ok(true);
        };
        let woken = if timeout_ns < 0 {
            sleeper.blocking_wait(|_| {})
        } else {
            sleeper.timed_wait(|_| {}, timeout)
        };
        match woken {
            Ok(n) => Ok(n > 0),
            Err(e) if format!("{e:?}").contains("Interrupt") => Ok(false), // a signal: no sample
            Err(e) => Err(err!("waiting for a sample failed: {e:?}")),
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
        // A reader of the thread's own that waits on the event, as in notify wait (dropped
        // before its node: the reverse order of the bindings).
        let made = ports::node(&s.namespace).and_then(|node| {
            let reader = Rd::new(&node, &s, &name, None)?;
            Ok((node, reader))
        });
        let _ = ready_tx.send(made.as_ref().map(|_| ()).map_err(Error::clone));
        let Ok((_node, mut reader)) = made else {
            return Ok(());
        };
        while !stop.load(Ordering::Relaxed) {
            loop {
                match reader.try_take() {
                    Ok(Some(data)) => deliver.deliver(data),
                    Ok(None) => break,
                    Err(e) => {
                        deliver.error(e);
                        break;
                    }
                }
            }
            reader.held = None;
            // Connected to every publisher there is (matched() says how many), before a
            // reliable one fills the buffer.
            let publishers = reader.matched().unwrap_or(0);
            connected.store(publishers, Ordering::Release);
            // Bounded, so that destroy_reader's stop is seen within 100 ms; 1 ms while no
            // publisher is there, to connect to the first one soon.
            reader.wait(if publishers == 0 {
                1_000_000
            } else {
                100_000_000
            })?;
        }
        Ok(())
    })?;
    let ended = |_| {
        Err(err!(
            "the listener thread ended before its subscriber was made"
        ))
    };
    ready_rx.recv().unwrap_or_else(ended).map(|()| thread)
}
