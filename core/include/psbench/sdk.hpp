// psbench driver SDK: a header-only C++20 layer that turns a small C++ driver class into
// the C ABI table of psbench/driver.h.
//
// driver.h stays the contract; this header is optional (a driver in C or Rust fills the
// table itself). What it writes once for every C++ driver: the psb_driver table and its
// extern "C" entry point, trampolines that never let an exception cross the ABI and fill
// psb_error with "<driver name>: <what>", refusals and option parsing
// (psbench/sdk_refusals.hpp), FNV-1a hashing, ids derived from the run id, the registry
// of open endpoints that close() empties, a listener thread (ListenerThread), a version
// string computed once (dotted_version: "4.3.4" from a library's three ints), timeouts in
// milliseconds (ms_rounded_up), a bounded wait (wait_until), a resource the contexts of one process
// share per key (PerProcess), the refusal of what the capabilities leave out (refuse_outside_caps,
// run after check() and before open()), an owned C handle (Owned), and two looks at the host:
// library_file() (the name of the library a symbol is loaded from) and process_running() (a daemon
// such as iox-roudi).
//
//   struct Driver {
//     static constexpr const char *name = "mymw";          // the folder under drivers/
//     static constexpr const char *description = "...";
//     static std::string version();  // the middleware's version, kept by the SDK; a const
//                                    // char * one is called each time (the driver's own)
//     static psb::sdk::Capabilities capabilities();  // or static constexpr data
//     static constexpr const char *host_transports[] = {"udp", nullptr};
//                     // optional, with caps.crosses_hosts: the transports that cross
//                     // hosts (the SDK refuses the others across hosts, setting "hosts")
//     static void check(const psb_config &cfg, psb::sdk::Refusals &refusals);
//                     // optional; refusals.add(setting, fmt, ...) for each problem
//     class Context;  // Context(const psb_config &)                             -> open/close
//     class Writer;   // Writer(Context &, const char *topic); void write(const void *, size_t)
//     class Reader;   // Reader(Context &, const char *topic, psb::sdk::Listener);
//                     // bool take(int64_t timeout_ns, const void *&data, size_t &len)
//   };
//   PSB_SDK_DRIVER(Driver)
//
// check() records every refusal (a Refusals is what Options lookups record malformed
// values in; see sdk_refusals.hpp for a parse shared by check() and open()); the SDK adds
// what the capabilities leave out and check() did not refuse (refuse_outside_caps), hands
// each to the node's psb_refuse, as "<driver name>: <reason>", and counts them. open()
// refuses a configuration outside the capabilities with those same refusals. Constructors
// throw to refuse (psb::sdk::Error or psb::sdk::fail(); any std::exception is reported the
// same way, std::bad_alloc as "out of memory"); destructors free. close() destroys the
// writers and readers a caller left open (readers first) before the Context. Optional
// members, detected at compile time (absent: NULL in the table):
//   Writer: void *loan(size_t len); void write_loan(void *sample, size_t len);  (both or none)
//           void flush(); int matched() const;
//           bool drain(int64_t timeout_ns);  (false or throw Timeout: not within the timeout)
//           void counters(psb::sdk::CounterSink put);
//   Reader: void release(); int matched() const; void counters(psb::sdk::CounterSink put);
//           instead of take(): bool try_take(const void *&data, size_t &len) (never blocks)
//           and bool wait(int64_t timeout_ns) (blocks in the middleware; -1: no limit),
//           from which the SDK makes take() (take_waiting: one wait strategy for all).
// Writer::matched() fills matched_readers, Reader::matched() matched_writers; their
// counters() fill writer_counters and reader_counters. write_loan() is called only with
// the sample the last loan() returned, once, and no more bytes than loaned (the SDK
// refuses anything else). A listener-mode reader reports errors on the delivery thread
// with listener.error(fmt, ...): the SDK counts them (reader counter listener_errors).
//
// Timed path: the write and take trampolines cast the handle and call the member (inlined
// when it is defined in the class); their try/catch is zero-cost unless something throws,
// and a message is formatted only then.
#ifndef PSBENCH_SDK_HPP
#define PSBENCH_SDK_HPP

#include <dirent.h>
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <concepts>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "psbench/driver.h"
#include "psbench/sdk_futex.hpp"
#include "psbench/sdk_refusals.hpp"

// The SDK fills every member of psb_driver; a new ABI version must be taught here first.
static_assert(PSB_ABI_VERSION == 8u, "psbench/sdk.hpp is written for driver ABI version 8");

namespace psb::sdk {

// ---- capabilities -----------------------------------------------------------------------

// Every notify mode: a Reader's take() serves wait and poll (poll: timeout 0), a
// ListenerThread the listener.
inline constexpr uint32_t kNotifyAll = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL;

// A driver's capabilities: psb_capabilities (a C struct, without defaults) with defaults
// for what the initializer leaves out: every notify mode, and 0 for the rest (no history
// to ask for, no limit of readers or writers per topic, one host only).
struct Capabilities {
  uint32_t reliability = 0;
  uint32_t durability = 0;
  uint32_t history = 0;
  uint32_t notify = kNotifyAll;
  const char *const *transports = nullptr;
  const char *const *option_keys = nullptr;
  uint64_t max_payload = 0;
  uint32_t readers_per_topic = 0;
  uint32_t writers_per_topic = 0;
  uint32_t crosses_hosts = 0;
  constexpr operator psb_capabilities() const {
    return {reliability,       durability,   history,     notify,
            transports,        option_keys,  max_payload, readers_per_topic,
            writers_per_topic, crosses_hosts};
  }
};
static_assert(sizeof(Capabilities) == sizeof(psb_capabilities),
              "psb::sdk::Capabilities mirrors psb_capabilities: give it the new field too");

// ---- hashing and ids derived from the run id ------------------------------------------

// FNV-1a, 32 bits: what the drivers derive domain ids and ports with.
constexpr uint32_t fnv1a32(std::string_view s) noexcept {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ uint8_t(c)) * 16777619u;
  return h;
}

// FNV-1a, 64 bits: for names that must be shortened without colliding. basis: another
// offset basis, for a name derived with one that must stay what it was.
constexpr uint64_t fnv1a64(std::string_view s, uint64_t basis = 14695981039346656037ull) noexcept {
  uint64_t h = basis;
  for (char c : s) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

// name itself when it has at most max characters, else a prefix and "_" + the 16 hex
// digits of FNV-1a-64(name, basis), max characters in all: a name the middleware limits,
// shortened without colliding. max must be at least 17.
inline std::string shortened(const std::string &name, size_t max,
                             uint64_t basis = 14695981039346656037ull) {
  if (name.size() <= max) return name;
  char hash[18];
  std::snprintf(hash, sizeof hash, "_%016llx",
                static_cast<unsigned long long>(fnv1a64(name, basis)));
  return name.substr(0, max - 17) + hash;
}

// first + FNV-1a-32(key) % count: an id in [first, first + count) that is the same in
// every process of a run and differs between runs, e.g. a DDS domain id
// id_in_range(cfg.run_id, 1, 200) (cyclonedds, fastdds) or a port base + hash % span
// (udp, over the topic name). count must not be 0.
constexpr uint32_t id_in_range(std::string_view key, uint32_t first, uint32_t count) noexcept {
  return first + fnv1a32(key) % count;
}

// first + (FNV-1a-32(run_id) + index) % count: the index-th of a run's ids in [first, first +
// count), from a start that differs between runs; distinct for the indexes 0 .. count-1, so
// the topics of a run, by RunSettings::topic_index(), never share one as hashed ids can
// (udp's and minimal's ports). count must not be 0.
constexpr uint32_t slot_in_range(std::string_view run_id, uint32_t index, uint32_t first,
                                 uint32_t count) noexcept {
  return first + uint32_t((uint64_t(fnv1a32(run_id)) + index) % count);
}

// ---- time -------------------------------------------------------------------------------

// A timeout in whole milliseconds for an API that counts them: rounded up, so that a wait
// is never shorter than asked, and capped at INT_MAX; 0 for 0 and less.
constexpr int ms_rounded_up(int64_t ns) noexcept {
  if (ns <= 0) return 0;
  const int64_t ms = ns / 1'000'000 + (ns % 1'000'000 != 0);
  return ms > INT_MAX ? INT_MAX : int(ms);
}

// Asks ready() until it says true or timeout_ns has passed (negative: no limit) and returns
// its last answer: first spinning, then yielding, then sleeping 20 us between asks, so a
// short wait stays short and a long one costs little CPU. Allocates nothing.
template <class Ready>
bool wait_until(int64_t timeout_ns, Ready &&ready) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = timeout_ns < 0 ? Clock::time_point::max()
                                       : Clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (uint64_t i = 0;; ++i) {
    if (ready()) return true;
    if (Clock::now() >= deadline) return false;
    if (i < 64) {
      cpu_relax();
    } else if (i < 1024) {
      sched_yield();
    } else {
      timespec pause{0, 20'000};
      nanosleep(&pause, nullptr);
    }
  }
}

// The take() the SDK gives a Reader with try_take() and wait() instead: one wait strategy
// for every such driver. try_take() at once; then, until one succeeds or timeout_ns has
// passed (negative: no limit), wait(time left, -1: no limit), the middleware's blocking
// wait (true: data may have come), and try_take() again. A wakeup without data waits again.
template <class R>
bool take_waiting(R &reader, int64_t timeout_ns, const void *&data, size_t &len) {
  if (reader.try_take(data, len)) return true;
  if (timeout_ns == 0) return false;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (;;) {
    int64_t left = -1;
    if (timeout_ns > 0) {
      left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
    }
    if (reader.wait(left) && reader.try_take(data, len)) return true;
  }
}

// ---- the environment --------------------------------------------------------------------

// "MAJOR.MINOR.PATCH" from a library's call that fills three ints, e.g.
// dotted_version(&zmq_version) is "4.3.4" (mosquitto_lib_version fits too).
template <class Get>
std::string dotted_version(Get &&get) {
  int major = 0, minor = 0, patch = 0;
  get(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// The file name of the shared library (or program) that holds symbol, links resolved:
// e.g. "libddsc.so.0.10.2", whose name carries the full version of a library that cannot
// report its own. fallback when it cannot be found.
inline std::string library_file(const void *symbol, std::string_view fallback) {
  Dl_info info{};
  char resolved[PATH_MAX];
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr ||
      realpath(info.dli_fname, resolved) == nullptr)
    return std::string(fallback);
  const char *slash = std::strrchr(resolved, '/');
  return slash != nullptr ? slash + 1 : resolved;
}

// Whether a process of this name (its /proc/PID/comm: the program's file name, cut to 15
// characters) runs on this host, e.g. process_running("iox-roudi").
inline bool process_running(std::string_view name) {
  DIR *proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool found = false;
  while (!found) {
    const dirent *e = readdir(proc);
    if (e == nullptr) break;
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], comm[64] = "";
    std::snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
    if (FILE *f = std::fopen(path, "r")) {
      if (std::fgets(comm, sizeof comm, f) != nullptr) {
        std::string_view line(comm);
        if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
        found = line == name;
      }
      std::fclose(f);
    }
  }
  closedir(proc);
  return found;
}

// ---- what the contexts of one process share --------------------------------------------

// A resource the contexts of one process share, one per key: the first acquire() of a key
// makes it with make() (a std::unique_ptr<T>; when make() throws, nothing is kept), later
// ones get the same T, and when the last Lease of it goes, T is destroyed under the lock,
// so that a new one for the key is made only after the old one is gone. E.g. Cyclone's one
// domain per domain id (cyclonedds), the one zmq context of inproc endpoints (zeromq).
// It locks: for open() and close(), never the timed path. Make the PerProcess itself
// outlive static destruction (`static auto &p = *new PerProcess<K, T>`) when a Lease may
// be let go after it.
template <class Key, class T>
class PerProcess {
  struct Entry {
    std::unique_ptr<T> value;
    int users = 0;
  };
  using Entries = std::map<Key, Entry>;

 public:
  class Lease {  // empty when default-constructed
   public:
    Lease() = default;
    Lease(Lease &&o) noexcept : owner_(std::exchange(o.owner_, nullptr)), it_(o.it_) {}
    Lease &operator=(Lease &&o) noexcept {
      std::swap(owner_, o.owner_);
      std::swap(it_, o.it_);
      return *this;
    }
    ~Lease() {
      if (owner_ != nullptr) owner_->release(it_);
    }
    explicit operator bool() const noexcept { return owner_ != nullptr; }
    T &operator*() const noexcept { return *it_->second.value; }
    T *operator->() const noexcept { return it_->second.value.get(); }

   private:
    friend class PerProcess;
    Lease(PerProcess *owner, typename Entries::iterator it) : owner_(owner), it_(it) {}
    PerProcess *owner_ = nullptr;
    typename Entries::iterator it_{};
  };

  template <class Make>
  Lease acquire(const Key &key, Make &&make) {
    std::lock_guard lock(mu_);
    const auto it = entries_.try_emplace(key).first;
    if (it->second.users == 0) {
      try {
        it->second.value = std::forward<Make>(make)();
        if (!it->second.value) throw Error("PerProcess: make() gave nothing");
      } catch (...) {
        entries_.erase(it);
        throw;
      }
    }
    ++it->second.users;
    return Lease(this, it);
  }
  // How many Leases of key there are (0: none, and no T).
  int users(const Key &key) {
    std::lock_guard lock(mu_);
    const auto it = entries_.find(key);
    return it == entries_.end() ? 0 : it->second.users;
  }

 private:
  void release(typename Entries::iterator it) noexcept {
    std::lock_guard lock(mu_);
    if (--it->second.users == 0) entries_.erase(it);  // destroys T, under the lock
  }
  std::mutex mu_;
  Entries entries_;
};

// ---- what endpoints are handed ---------------------------------------------------------

// A C handle owned by one object (a socket, a DDS entity): Free(handle) when it goes, or
// when another is assigned, unless it is None. Not copied.
template <class H, auto Free, H None = H{}>
class Owned {
 public:
  Owned(H handle = None) noexcept : h_(handle) {}  // NOLINT: converts, as the handle would
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  Owned &operator=(H handle) noexcept {
    if (h_ != None) Free(h_);
    h_ = handle;
    return *this;
  }
  ~Owned() {
    if (h_ != None) Free(h_);
  }
  operator H() const noexcept { return h_; }

 private:
  H h_;
};

// What a listener-mode reader's errors come to: their count (reader counter
// PSB_COUNTER_LISTENER_ERRORS, which the node turns into a warning) and the first one's text
// on stderr. Kept by the SDK beside each reader.
struct ListenerErrors {
  const char *driver;
  std::atomic<uint64_t> count{0};
  // Set as the SDK destroys the reader: a middleware may still call its listener then,
  // when its endpoint can no longer be read from; nothing measured is missed, so those
  // errors are not counted.
  std::atomic<bool> closing{false};
};

// The node's listener callback (notify listener), empty otherwise. Call it from the
// middleware's delivery thread; the data need be valid only during the call.
struct Listener {
  psb_on_data fn = nullptr;
  void *user = nullptr;
  ListenerErrors *errors = nullptr;  // the SDK's, for error()
  explicit operator bool() const noexcept { return fn != nullptr; }
  void operator()(const void *data, size_t len) const { fn(user, data, len); }

  // An error on the delivery thread, which no call can return to the node: counted, and
  // the first one printed on stderr as "<driver>: <message>". The samples it cost show as
  // lost in psbench's own accounting.
  __attribute__((format(printf, 2, 3))) void error(const char *fmt, ...) const noexcept {
    if (errors == nullptr || errors->closing.load() || errors->count.fetch_add(1) != 0) return;
    char text[sizeof(psb_error::message)];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "%s: %s\n", errors->driver, text);
  }

  // Listener mode: hands over every sample next(data, len) gives (false: none left). A
  // BadSample it throws is an error() and the next sample is taken; any other exception
  // is an error() that ends this delivery.
  template <class Next>
  void drain(Next &&next) const {
    const void *data;
    size_t len;
    for (;;) {
      try {
        if (!next(data, len)) return;
      } catch (const BadSample &e) {
        error("%s", e.what());
        continue;
      } catch (const std::exception &e) {
        error("%s", e.what());
        return;
      }
      (*this)(data, len);
    }
  }
};

// A listener's thread, for a Reader whose middleware has no delivery thread of its own:
// start(listener, loop) runs loop() on a new thread; the loop returns soon after
// stopping() turns true. stop() (the destructor too) sets that and joins, so the loop
// should block for a bounded slice at a time. What the loop throws ends it and is reported
// with listener.error(): an exception must not end the process from a thread.
class ListenerThread {
 public:
  ListenerThread() = default;
  ListenerThread(const ListenerThread &) = delete;
  ListenerThread &operator=(const ListenerThread &) = delete;
  ~ListenerThread() { stop(); }

  // Throws Error "cannot start the listener thread: <why>".
  template <class Loop>
  void start(const Listener &listener, Loop &&loop) {
    try {
      thread_ = std::thread([listener, loop = std::forward<Loop>(loop)]() mutable {
        try {
          loop();
        } catch (const std::exception &e) {
          listener.error("%s; the listener stops", e.what());
        } catch (...) {
          listener.error("unknown error; the listener stops");
        }
      });
    } catch (const std::exception &e) {
      fail("cannot start the listener thread: %s", e.what());
    }
  }
  bool stopping() const noexcept { return stop_.load(std::memory_order_relaxed); }
  // Returns when the loop has (at once when none was started).
  void stop() noexcept {
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Where counters() puts the middleware's own counts: put("dropped", 3).
struct CounterSink {
  psb_put_counter fn;
  void *user;
  void operator()(const char *name, uint64_t value) const { fn(user, name, value); }
};

// ---- the adapter -----------------------------------------------------------------------

namespace detail {

template <class D>
concept HasCheck = requires(const psb_config &c, Refusals &r) {
  D::check(c, r);
};
template <class D>
concept HasOldCheck = requires(const psb_config &c) {
  D::check(c);
};
template <class W>
concept HasLoan = requires(W &w, size_t n) {
  { w.loan(n) } -> std::convertible_to<void *>;
};
template <class W>
concept HasWriteLoan = requires(W &w, void *p, size_t n) {
  w.write_loan(p, n);
};
template <class W>
concept HasFlush = requires(W &w) {
  w.flush();
};
template <class W>
concept HasDrain = requires(W &w, int64_t t) {
  { w.drain(t) } -> std::convertible_to<bool>;
};
template <class E>
concept HasMatched = requires(E &e) {
  { e.matched() } -> std::convertible_to<int>;
};
template <class E>
concept HasCounters = requires(E &e, CounterSink s) {
  e.counters(s);
};
template <class R>
concept HasRelease = requires(R &r) {
  r.release();
};
template <class R>
concept HasTake = requires(R &r, int64_t t, const void *&d, size_t &n) {
  { r.take(t, d, n) } -> std::convertible_to<bool>;
};
template <class R>
concept HasTryTakeAndWait = requires(R &r, int64_t t, const void *&d, size_t &n) {
  { r.try_take(d, n) } -> std::convertible_to<bool>;
  { r.wait(t) } -> std::convertible_to<bool>;
};

// What the exception being handled says. Only inside a catch handler.
inline const char *current_what() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return "out of memory";
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// Writes "<name>: <what the exception being handled says>". Only inside a catch handler.
template <class D>
void report_current(psb_error *err) noexcept {
  if (err != nullptr)
    std::snprintf(err->message, sizeof err->message, "%s: %s", D::name, current_what());
}

template <class D>
struct Adapter {
  using Context = typename D::Context;
  using Writer = typename D::Writer;
  using Reader = typename D::Reader;

  static_assert(std::is_constructible_v<Context, const psb_config &>,
                "Driver::Context needs a constructor Context(const psb_config &)");
  static_assert(std::is_constructible_v<Writer, Context &, const char *>,
                "Driver::Writer needs a constructor Writer(Context &, const char *topic)");
  static_assert(
      std::is_constructible_v<Reader, Context &, const char *, Listener>,
      "Driver::Reader needs a constructor Reader(Context &, const char *topic, Listener)");
  static_assert(
      requires(Writer & w, const void *d, size_t n) { w.write(d, n); },
      "Driver::Writer needs void write(const void *data, size_t len)");
  static_assert(HasTake<Reader> || HasTryTakeAndWait<Reader>,
                "Driver::Reader needs bool take(int64_t timeout_ns, const void *&data, size_t "
                "&len), or bool try_take(const void *&data, size_t &len) and bool "
                "wait(int64_t timeout_ns)");
  static_assert(HasLoan<Writer> == HasWriteLoan<Writer>,
                "Driver::Writer has one of loan()/write_loan() without the other");
  static_assert(HasCheck<D> || !HasOldCheck<D>,
                "Driver::check takes (const psb_config &, psb::sdk::Refusals &) since ABI 5");

  // The open writers and readers of a context, so that close() can destroy those a
  // caller left open before the context (a driver keeps no registry of its own). No
  // lock: driver.h has a context and its endpoints used by one thread at a time.
  struct Box;
  template <class E>
  struct Open {  // an endpoint, what the SDK keeps beside it, its place in its context's list
    // make(listener_errors) returns the endpoint.
    template <class Make>
    Open(Open *&head, Make &&make) : endpoint(make(listener_errors)), head_(head), next_(head) {
      if (next_ != nullptr) next_->prev_ = this;  // linked only once constructed
      head_ = this;
    }
    ~Open() {  // before the endpoint's destructor
      listener_errors.closing = true;
      (prev_ != nullptr ? prev_->next_ : head_) = next_;
      if (next_ != nullptr) next_->prev_ = prev_;
    }
    // Before the endpoint: a listener may report an error while the endpoint is built.
    ListenerErrors listener_errors{D::name};
    bool listening = false;  // a reader in listener mode
    void *loaned = nullptr;  // a writer's last loan() not yet written
    size_t loaned_len = 0;
    E endpoint;
    Open *&head_;
    Open *prev_ = nullptr, *next_;
  };
  struct Box {
    explicit Box(const psb_config &cfg) : context(cfg) {}
    ~Box() {  // readers first, newest first; the context after every endpoint
      while (readers != nullptr) delete readers;  // unlinks itself
      while (writers != nullptr) delete writers;
    }
    Context context;
    Open<Writer> *writers = nullptr;
    Open<Reader> *readers = nullptr;
  };

  // The handles are the SDK's boxes around the driver's objects, under the ABI's opaque names.
  static Box &box(psb_context *c) noexcept { return *reinterpret_cast<Box *>(c); }
  static Context &ctx(psb_context *c) noexcept { return box(c).context; }
  static Open<Writer> &opened(psb_writer *w) noexcept {
    return *reinterpret_cast<Open<Writer> *>(w);
  }
  static Open<Reader> &opened(psb_reader *r) noexcept {
    return *reinterpret_cast<Open<Reader> *>(r);
  }
  static Writer &wr(psb_writer *w) noexcept { return opened(w).endpoint; }
  static Reader &rd(psb_reader *r) noexcept { return opened(r).endpoint; }

  // The driver's transports that cross hosts (when caps.crosses_hosts), or nullptr: all.
  static constexpr const char *const *host_transports() {
    if constexpr (requires { D::host_transports; })
      return D::host_transports;
    else
      return nullptr;
  }
  static psb_capabilities caps() {
    if constexpr (requires { D::capabilities(); })
      return D::capabilities();
    else
      return D::capabilities;
  }
  // What check() refuses (a throw is one more refusal, of setting "driver"), then what the
  // capabilities leave out that it did not.
  static Refusals refusals(const psb_config &cfg) {
    Refusals found;
    try {
      if constexpr (HasCheck<D>) D::check(cfg, found);
    } catch (...) {
      found.add("driver", "%s", current_what());
    }
    refuse_outside_caps(caps(), cfg, found, host_transports());
    return found;
  }
  // Hands each refusal to the node as "<name>: <reason>".
  static int check(const psb_config *cfg, psb_refuse refuse, void *user) noexcept {
    int count = 0;
    auto hand = [&](const char *setting, const char *reason) noexcept {
      char message[sizeof(psb_error::message)];
      std::snprintf(message, sizeof message, "%s: %s", D::name, reason);
      refuse(user, setting, message);
      ++count;
    };
    try {
      const Refusals found = refusals(*cfg);
      for (const Refusal &r : found.all()) hand(r.setting.c_str(), r.reason.c_str());
    } catch (...) {
      hand("driver", current_what());
    }
    return count;
  }
  // A version() that returns a std::string is asked once, by open() at the latest (never
  // on the timed path), and its text kept. One that returns const char * is the driver's
  // own and goes into the table as it is (redis' grows once a context reaches its server).
  static constexpr bool kKeepsVersion =
      !std::is_convertible_v<decltype(D::version()), const char *>;
  static const char *version() noexcept {
    try {
      static const std::string text(D::version());
      return text.c_str();
    } catch (...) {
      return "unknown (version() failed)";
    }
  }

  static psb_context *open(const psb_config *cfg, psb_error *err) noexcept {
    if constexpr (kKeepsVersion) version();
    try {
      // Outside the capabilities: refused with check()'s reasons, which say why.
      Refusals outside;
      refuse_outside_caps(caps(), *cfg, outside, host_transports());
      if (!outside.empty()) refusals(*cfg).raise();
      return reinterpret_cast<psb_context *>(new Box(*cfg));
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static void close(psb_context *c) noexcept { delete &box(c); }

  static psb_writer *create_writer(psb_context *c, const char *topic, psb_error *err) noexcept {
    try {
      return reinterpret_cast<psb_writer *>(new Open<Writer>(
          box(c).writers, [&](ListenerErrors &) { return Writer(ctx(c), topic); }));
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static void destroy_writer(psb_writer *w) noexcept { delete reinterpret_cast<Open<Writer> *>(w); }
  static psb_reader *create_reader(psb_context *c, const char *topic, psb_on_data on_data,
                                   void *user, psb_error *err) noexcept {
    try {
      auto *r = new Open<Reader>(box(c).readers, [&](ListenerErrors &errors) {
        return Reader(ctx(c), topic, Listener{on_data, user, &errors});
      });
      r->listening = on_data != nullptr;
      return reinterpret_cast<psb_reader *>(r);
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static void destroy_reader(psb_reader *r) noexcept { delete reinterpret_cast<Open<Reader> *>(r); }

  static int matched_readers(psb_writer *w) noexcept {
    try {
      return wr(w).matched();
    } catch (...) {
      return -1;  // the ABI's "cannot tell"
    }
  }
  static int matched_writers(psb_reader *r) noexcept {
    try {
      return rd(r).matched();
    } catch (...) {
      return -1;
    }
  }

  // Timed path.
  static int write(psb_writer *w, const void *data, size_t len, psb_error *err) noexcept {
    try {
      wr(w).write(data, len);
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static int take(psb_reader *r, int64_t timeout_ns, const void **data, size_t *len,
                  psb_error *err) noexcept {
    try {
      if constexpr (HasTake<Reader>)
        return rd(r).take(timeout_ns, *data, *len) ? 1 : 0;
      else
        return take_waiting(rd(r), timeout_ns, *data, *len) ? 1 : 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }

  // The SDK holds write_loan() to the ABI's rule (the last loan's sample, once, no longer
  // than loaned), so a driver's write_loan() sees only what its loan() handed out.
  static void *loan(psb_writer *w, size_t len, psb_error *err) noexcept {
    try {
      Open<Writer> &o = opened(w);
      o.loaned = o.endpoint.loan(len);
      o.loaned_len = len;
      return o.loaned;
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static int write_loan(psb_writer *w, void *sample, size_t len, psb_error *err) noexcept {
    try {
      Open<Writer> &o = opened(w);
      if (sample == nullptr || sample != o.loaned)
        fail("write_loan got a sample that loan() did not return (or that was already written)");
      o.loaned = nullptr;
      if (len > o.loaned_len)
        fail("write_loan of %zu bytes for a sample loaned for %zu", len, o.loaned_len);
      o.endpoint.write_loan(sample, len);
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static void release(psb_reader *r) noexcept {
    try {
      rd(r).release();
    } catch (...) {
    }
  }
  static int flush(psb_writer *w, psb_error *err) noexcept {
    try {
      wr(w).flush();
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static int drain(psb_writer *w, int64_t timeout_ns, psb_error *err) noexcept {
    try {
      return wr(w).drain(timeout_ns) ? 1 : 0;
    } catch (const Timeout &) {
      report_current<D>(err);
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  // Counters are a report beside the measurement; a failure leaves them out.
  static void writer_counters(psb_writer *w, psb_put_counter put, void *user) noexcept {
    try {
      wr(w).counters(CounterSink{put, user});
    } catch (...) {
    }
  }
  // The driver's, then listener_errors for a reader in listener mode.
  static void reader_counters(psb_reader *r, psb_put_counter put, void *user) noexcept {
    try {
      if constexpr (HasCounters<Reader>) rd(r).counters(CounterSink{put, user});
    } catch (...) {
    }
    const Open<Reader> &o = opened(r);
    if (o.listening) put(user, PSB_COUNTER_LISTENER_ERRORS, o.listener_errors.count.load());
  }

  static psb_driver make() {
    psb_driver t{};
    t.abi_version = PSB_ABI_VERSION;
    t.name = D::name;
    t.description = D::description;
    if constexpr (kKeepsVersion)
      t.version = &version;
    else
      t.version = &D::version;
    t.caps = caps();
    t.check = &check;
    t.open = &open;
    t.close = &close;
    t.create_writer = &create_writer;
    t.destroy_writer = &destroy_writer;
    t.create_reader = &create_reader;
    t.destroy_reader = &destroy_reader;
    if constexpr (HasMatched<Writer>) t.matched_readers = &matched_readers;
    if constexpr (HasMatched<Reader>) t.matched_writers = &matched_writers;
    t.write = &write;
    if constexpr (HasLoan<Writer>) {
      t.loan = &loan;
      t.write_loan = &write_loan;
    }
    t.take = &take;
    if constexpr (HasRelease<Reader>) t.release = &release;
    if constexpr (HasFlush<Writer>) t.flush = &flush;
    if constexpr (HasDrain<Writer>) t.drain = &drain;
    if constexpr (HasCounters<Writer>) t.writer_counters = &writer_counters;
    t.reader_counters = &reader_counters;  // listener_errors at least
    return t;
  }
};

}  // namespace detail

// The table for driver class D, built on first use. PSB_SDK_DRIVER exports it; a test may
// call it directly to look at several drivers in one program.
template <class D>
const psb_driver *driver_table() {
  static const psb_driver table = detail::Adapter<D>::make();
  return &table;
}

}  // namespace psb::sdk

// Defines the library's one exported function, psb_driver_entry(), for driver class D.
// Once per driver library, at namespace scope, after D's members are defined.
#define PSB_SDK_DRIVER(D)                                                 \
  extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) { \
    return ::psb::sdk::driver_table<D>();                                 \
  }

#endif  // PSBENCH_SDK_HPP
