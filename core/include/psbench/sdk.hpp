// psbench driver SDK: a header-only C++20 layer that turns a small C++ driver class into
// the C ABI table of psbench/driver.h.
//
// driver.h stays the contract; this header is optional (a driver in C or Rust fills the
// table itself). What it writes once for every C++ driver: the psb_driver table and its
// extern "C" entry point, trampolines that never let an exception cross the ABI and fill
// psb_error with "<driver name>: <what>", option parsing, FNV-1a hashing, and ids
// derived from the run id.
//
//   struct Driver {
//     static constexpr const char *name = "mymw";          // the folder under drivers/
//     static constexpr const char *description = "...";
//     static const char *version();                         // the middleware's version
//     static psb_capabilities capabilities();               // caps.loan is set by the SDK
//     static void check(const psb_config &cfg);             // optional; throw to refuse
//     class Context;  // Context(const psb_config &)                             -> open/close
//     class Writer;   // Writer(Context &, const char *topic); void write(const void *, size_t)
//     class Reader;   // Reader(Context &, const char *topic, psb::sdk::Listener);
//                     // bool take(int64_t timeout_ns, const void *&data, size_t &len)
//   };
//   PSB_SDK_DRIVER(Driver)
//
// Constructors throw to refuse (psb::sdk::Error or psb::sdk::fail(); any std::exception
// is reported the same way, std::bad_alloc as "out of memory"); destructors free. Optional
// members, detected at compile time (absent: NULL in the table):
//   Writer: void *loan(size_t len); void write_loan(void *sample, size_t len);  (both or none)
//           void flush(); int matched() const;
//           bool drain(int64_t timeout_ns);  (false or throw Timeout: not within the timeout)
//           void counters(psb::sdk::CounterSink put);
//   Reader: void release(); int matched() const; void counters(psb::sdk::CounterSink put);
// Writer::matched() fills matched_readers, Reader::matched() matched_writers.
//
// Timed path: the write and take trampolines cast the handle and call the member (inlined
// when it is defined in the class); their try/catch is zero-cost unless something throws,
// and a message is formatted only then.
#ifndef PSBENCH_SDK_HPP
#define PSBENCH_SDK_HPP

#include <cerrno>
#include <concepts>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "psbench/driver.h"

// The SDK fills every member of psb_driver; a new ABI version must be taught here first.
static_assert(PSB_ABI_VERSION == 4u, "psbench/sdk.hpp is written for driver ABI version 4");

namespace psb::sdk {

// Throw to fail any call: the SDK reports "<driver name>: <what()>" through psb_error and
// returns the ABI's failure value (NULL, -1).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string &what) : std::runtime_error(what) {}
  explicit Error(const char *what) : std::runtime_error(what) {}
};

// Throw from Writer::drain() to say "not drained within the timeout" (the ABI's 0) with a
// message; returning false says the same without one.
class Timeout : public Error {
 public:
  using Error::Error;
};

// Throws Error with a printf-formatted message (without the driver's name).
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void fail(const char *fmt, ...) {
  char text[sizeof(psb_error::message)];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  throw Error(text);
}

// ---- hashing and ids derived from the run id ------------------------------------------

// FNV-1a, 32 bits: what the drivers derive domain ids and ports with.
constexpr uint32_t fnv1a32(std::string_view s) noexcept {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ uint8_t(c)) * 16777619u;
  return h;
}

// FNV-1a, 64 bits: for names that must be shortened without colliding.
constexpr uint64_t fnv1a64(std::string_view s) noexcept {
  uint64_t h = 14695981039346656037ull;
  for (char c : s) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

// first + FNV-1a-32(key) % count: an id in [first, first + count) that is the same in
// every process of a run and differs between runs, e.g. a DDS domain id
// id_in_range(cfg.run_id, 1, 200) (cyclonedds, fastdds) or a port base + hash % span
// (udp, over the topic name). count must not be 0.
constexpr uint32_t id_in_range(std::string_view key, uint32_t first, uint32_t count) noexcept {
  return first + fnv1a32(key) % count;
}

// ---- options ---------------------------------------------------------------------------

// A view over cfg.options (valid while cfg is). The node has already refused any key not
// in caps.option_keys; these calls refuse malformed values with an Error naming the key.
class Options {
 public:
  explicit Options(const psb_config &cfg) noexcept : cfg_(cfg) {}

  // The value given for key, or nullptr when it was not given (the first, if repeated).
  const char *find(std::string_view key) const noexcept {
    for (size_t i = 0; i < cfg_.option_count; ++i)
      if (cfg_.options[i].key != nullptr && key == cfg_.options[i].key) return cfg_.options[i].value;
    return nullptr;
  }
  bool has(std::string_view key) const noexcept { return find(key) != nullptr; }

  std::string text(std::string_view key, std::string_view fallback) const {
    const char *v = find(key);
    return v ? std::string(v) : std::string(fallback);
  }

  // The value, or Error "option KEY[=FORM] is missing[; ADVICE]".
  const char *required(std::string_view key, std::string_view form = {},
                       std::string_view advice = {}) const {
    if (const char *v = find(key)) return v;
    std::string m = "option " + std::string(key);
    if (!form.empty()) m += "=" + std::string(form);
    m += " is missing";
    if (!advice.empty()) m += "; " + std::string(advice);
    throw Error(m);
  }

  // true/1 or false/0; anything else: Error "option KEY='VALUE': use true or false".
  bool flag(std::string_view key, bool fallback) const {
    const char *v = find(key);
    if (v == nullptr) return fallback;
    if (std::strcmp(v, "true") == 0 || std::strcmp(v, "1") == 0) return true;
    if (std::strcmp(v, "false") == 0 || std::strcmp(v, "0") == 0) return false;
    throw Error("option " + std::string(key) + "='" + v + "': use true or false");
  }

  // A decimal whole number in [min, max]; anything else: Error
  // "option KEY='VALUE': use a whole number from MIN to MAX".
  int64_t number(std::string_view key, int64_t fallback, int64_t min, int64_t max) const {
    const char *v = find(key);
    if (v == nullptr) return fallback;
    char *end = nullptr;
    errno = 0;
    const bool starts_well = (*v >= '0' && *v <= '9') || (*v == '-' && v[1] >= '0' && v[1] <= '9');
    const long long n = starts_well ? std::strtoll(v, &end, 10) : 0;
    if (!starts_well || errno != 0 || *end != '\0' || n < min || n > max)
      throw Error("option " + std::string(key) + "='" + v + "': use a whole number from " +
                  std::to_string(min) + " to " + std::to_string(max));
    return n;
  }

 private:
  const psb_config &cfg_;
};

// ---- what endpoints are handed ---------------------------------------------------------

// The node's listener callback (notify listener), empty otherwise. Call it from the
// middleware's delivery thread; the data need be valid only during the call.
struct Listener {
  psb_on_data fn = nullptr;
  void *user = nullptr;
  explicit operator bool() const noexcept { return fn != nullptr; }
  void operator()(const void *data, size_t len) const { fn(user, data, len); }
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
concept HasCheck = requires(const psb_config &c) { D::check(c); };
template <class W>
concept HasLoan = requires(W &w, size_t n) {
  { w.loan(n) } -> std::convertible_to<void *>;
};
template <class W>
concept HasWriteLoan = requires(W &w, void *p, size_t n) { w.write_loan(p, n); };
template <class W>
concept HasFlush = requires(W &w) { w.flush(); };
template <class W>
concept HasDrain = requires(W &w, int64_t t) {
  { w.drain(t) } -> std::convertible_to<bool>;
};
template <class E>
concept HasMatched = requires(E &e) {
  { e.matched() } -> std::convertible_to<int>;
};
template <class E>
concept HasCounters = requires(E &e, CounterSink s) { e.counters(s); };
template <class R>
concept HasRelease = requires(R &r) { r.release(); };

// Writes "<name>: <what the exception being handled says>". Only inside a catch handler.
template <class D>
void report_current(psb_error *err) noexcept {
  if (err == nullptr) return;
  const char *what = "unknown error";
  try {
    throw;
  } catch (const std::bad_alloc &) {
    what = "out of memory";
  } catch (const std::exception &e) {
    what = e.what();
  } catch (...) {
  }
  std::snprintf(err->message, sizeof err->message, "%s: %s", D::name, what);
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
  static_assert(std::is_constructible_v<Reader, Context &, const char *, Listener>,
                "Driver::Reader needs a constructor Reader(Context &, const char *topic, Listener)");
  static_assert(requires(Writer &w, const void *d, size_t n) { w.write(d, n); },
                "Driver::Writer needs void write(const void *data, size_t len)");
  static_assert(requires(Reader &r, int64_t t, const void *&d, size_t &n) {
                  { r.take(t, d, n) } -> std::convertible_to<bool>;
                }, "Driver::Reader needs bool take(int64_t timeout_ns, const void *&data, size_t &len)");
  static_assert(HasLoan<Writer> == HasWriteLoan<Writer>,
                "Driver::Writer has one of loan()/write_loan() without the other");

  static int check(const psb_config *cfg, psb_error *err) noexcept {
    try {
      if constexpr (HasCheck<D>) D::check(*cfg);
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static void *open(const psb_config *cfg, psb_error *err) noexcept {
    try {
      return new Context(*cfg);
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static void close(void *ctx) noexcept { delete static_cast<Context *>(ctx); }

  static void *create_writer(void *ctx, const char *topic, psb_error *err) noexcept {
    try {
      return new Writer(*static_cast<Context *>(ctx), topic);
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static void destroy_writer(void *w) noexcept { delete static_cast<Writer *>(w); }
  static void *create_reader(void *ctx, const char *topic, psb_on_data on_data, void *user,
                             psb_error *err) noexcept {
    try {
      return new Reader(*static_cast<Context *>(ctx), topic, Listener{on_data, user});
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static void destroy_reader(void *r) noexcept { delete static_cast<Reader *>(r); }

  template <class E>
  static int matched(void *e) noexcept {
    try {
      return static_cast<E *>(e)->matched();
    } catch (...) {
      return -1;  // the ABI's "cannot tell"
    }
  }

  // Timed path.
  static int write(void *w, const void *data, size_t len, psb_error *err) noexcept {
    try {
      static_cast<Writer *>(w)->write(data, len);
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static int take(void *r, int64_t timeout_ns, const void **data, size_t *len,
                  psb_error *err) noexcept {
    try {
      return static_cast<Reader *>(r)->take(timeout_ns, *data, *len) ? 1 : 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }

  static void *loan(void *w, size_t len, psb_error *err) noexcept {
    try {
      return static_cast<Writer *>(w)->loan(len);
    } catch (...) {
      report_current<D>(err);
      return nullptr;
    }
  }
  static int write_loan(void *w, void *sample, size_t len, psb_error *err) noexcept {
    try {
      static_cast<Writer *>(w)->write_loan(sample, len);
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static void release(void *r) noexcept {
    try {
      static_cast<Reader *>(r)->release();
    } catch (...) {
    }
  }
  static int flush(void *w, psb_error *err) noexcept {
    try {
      static_cast<Writer *>(w)->flush();
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static int drain(void *w, int64_t timeout_ns, psb_error *err) noexcept {
    try {
      return static_cast<Writer *>(w)->drain(timeout_ns) ? 1 : 0;
    } catch (const Timeout &) {
      report_current<D>(err);
      return 0;
    } catch (...) {
      report_current<D>(err);
      return -1;
    }
  }
  static void counters(void *e, int is_reader, psb_put_counter put, void *user) noexcept {
    const CounterSink sink{put, user};
    try {
      if (is_reader) {
        if constexpr (HasCounters<Reader>) static_cast<Reader *>(e)->counters(sink);
      } else {
        if constexpr (HasCounters<Writer>) static_cast<Writer *>(e)->counters(sink);
      }
    } catch (...) {
      // Counters are a report beside the measurement; a failure leaves them out.
    }
  }

  static psb_driver make() {
    psb_driver t{};
    t.abi_version = PSB_ABI_VERSION;
    t.name = D::name;
    t.description = D::description;
    t.version = &D::version;
    t.caps = D::capabilities();
    t.caps.loan = HasLoan<Writer> ? 1u : 0u;
    t.check = &check;
    t.open = &open;
    t.close = &close;
    t.create_writer = &create_writer;
    t.destroy_writer = &destroy_writer;
    t.create_reader = &create_reader;
    t.destroy_reader = &destroy_reader;
    if constexpr (HasMatched<Writer>) t.matched_readers = &matched<Writer>;
    if constexpr (HasMatched<Reader>) t.matched_writers = &matched<Reader>;
    t.write = &write;
    if constexpr (HasLoan<Writer>) {
      t.loan = &loan;
      t.write_loan = &write_loan;
    }
    t.take = &take;
    if constexpr (HasRelease<Reader>) t.release = &release;
    if constexpr (HasFlush<Writer>) t.flush = &flush;
    if constexpr (HasDrain<Writer>) t.drain = &drain;
    if constexpr (HasCounters<Writer> || HasCounters<Reader>) t.counters = &counters;
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
#define PSB_SDK_DRIVER(D)                                                \
  extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) { \
    return ::psb::sdk::driver_table<D>();                                \
  }

#endif  // PSBENCH_SDK_HPP
