// psbench driver SDK, part one: failing, refusing and reading options. Included by
// psbench/sdk.hpp; see there for the whole SDK.
//
// A driver parses its configuration once, in one function used by both check() and
// open(), and records every refusal instead of stopping at the first:
//
//   Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refusals) {
//     const psb::sdk::Options options(cfg, refusals);
//     Settings s;
//     s.depth = options.number("depth", 16, 1, 1024);   // malformed: "option:depth" refused
//     if (cfg.qos.durability != PSB_VOLATILE)
//       refusals.add("durability", "durability must be volatile: nothing is kept");
//     return s;                                         // complete, with fallbacks
//   }
//   static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }
//   Context(const psb_config &cfg) : settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {}
//
// Options reads text, flag (strict: true/false only), number (with a hint for its
// refusal), choice (one of a fixed list of names) and required values, refuse_unknown()
// refuses keys a driver does not take and given_but() one given where it does not apply.
// Beside it: run_id() (refused when empty), RunSettings (what every driver keeps of a
// config; its address() and need_peers() for a run across hosts), kHeaderSize (the node's
// message header), payload_in_range() (the "size" refusal), index_in() (a name's index in a list),
// transport_index() (cfg.transport's in caps.transports, "default" the first),
// SampleType (options type and elements of idl/psbench.idl's samples) and
// refuse_outside_caps() (what caps leave out and the driver did not refuse itself; the SDK
// runs it after every check()).
#ifndef PSBENCH_SDK_REFUSALS_HPP
#define PSBENCH_SDK_REFUSALS_HPP

#include <arpa/inet.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "psbench/driver.h"

namespace psb::sdk {

// Throw to fail any call: the SDK reports "<driver name>: <what()>" through psb_error and
// returns the ABI's failure value (NULL, -1). Thrown from check(), it is one more refusal
// of setting "driver".
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

// Throw when a sample taken is not one this run's writers send (too large, another shape):
// that sample is lost, the reader goes on with the next (Listener::drain()).
class BadSample : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline std::string vformat(const char *fmt, va_list ap) {
  char text[sizeof(psb_error::message)];
  std::vsnprintf(text, sizeof text, fmt, ap);
  return text;
}
}  // namespace detail

// Throws Error with a printf-formatted message (without the driver's name).
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string text = detail::vformat(fmt, ap);
  va_end(ap);
  throw Error(text);
}

// Throws BadSample with a printf-formatted message.
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void bad_sample(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string text = detail::vformat(fmt, ap);
  va_end(ap);
  throw BadSample(text);
}

// One refused setting: in the node's vocabulary (psb_refuse in driver.h: "reliability",
// "transport", "option:KEY", "driver", ...) and why, without the driver's name.
struct Refusal {
  std::string setting;
  std::string reason;
};

// Every refusal of one configuration, in the order found.
class Refusals {
 public:
  // Records that `setting` is refused, with a printf-formatted reason.
  __attribute__((format(printf, 3, 4))) void add(std::string_view setting, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string reason = detail::vformat(fmt, ap);
    va_end(ap);
    found_.push_back({std::string(setting), std::move(reason)});
  }
  bool empty() const noexcept { return found_.empty(); }
  size_t size() const noexcept { return found_.size(); }
  // Whether `setting` is refused already.
  bool has(std::string_view setting) const noexcept {
    for (const Refusal &r : found_)
      if (r.setting == setting) return true;
    return false;
  }
  const std::vector<Refusal> &all() const noexcept { return found_; }

  // For open(): throws Error with every reason, "; " between them, when any was found.
  void raise() const {
    if (found_.empty()) return;
    std::string all;
    for (const Refusal &r : found_) all += (all.empty() ? "" : "; ") + r.reason;
    throw Error(all);
  }

 private:
  std::vector<Refusal> found_;
};

// Runs parse(cfg, refusals) and returns what it returns, or throws Error naming every
// refusal it recorded: the open() side of a parse that check() runs to collect them.
template <class Parse>
auto parse_or_throw(const psb_config &cfg, Parse &&parse) {
  Refusals refusals;
  auto result = std::forward<Parse>(parse)(cfg, refusals);
  refusals.raise();
  return result;
}

// The index of name in names, or -1 when it is not there (or is nullptr): an enum's
// value from its name, e.g. Transport(index_in(cfg.transport, {"tcp", "ipc"})).
inline int index_in(const char *name, std::initializer_list<std::string_view> names) noexcept {
  for (size_t i = 0; name != nullptr && i < names.size(); ++i)
    if (names.begin()[i] == name) return int(i);
  return -1;
}

// cfg.run_id; when it is missing or empty, "" and the refusal (setting "driver") "the run
// id is empty; WHY", e.g. why = "it names the topics". alnum: one outside [A-Za-z0-9]+ is
// refused too (for names the middleware restricts).
inline std::string run_id(const psb_config &cfg, Refusals &refusals, const char *why,
                          bool alnum = false) {
  if (cfg.run_id == nullptr || *cfg.run_id == '\0') {
    refusals.add("driver", "the run id is empty; %s", why);
    return {};
  }
  for (const char *c = cfg.run_id; alnum && *c != '\0'; ++c)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) {
      refusals.add("driver", "run_id '%s' must match [A-Za-z0-9]+", cfg.run_id);
      break;
    }
  return cfg.run_id;
}

// What every driver keeps of a psb_config beyond open() (whose strings live only during
// the call): a driver's Settings derives from it and calls keep() as it parses.
struct RunSettings {
  std::string run_id;
  uint32_t notify = PSB_NOTIFY_WAIT;
  psb_qos qos{};
  uint64_t max_payload = 0;                 // the run's largest message, header included
  std::string local_address;                // empty: every role on this host
  std::vector<std::string> peer_addresses;  // the run's other hosts
  // Every topic of the run (psb_config.run_topics, ABI 8), in the order every process of
  // the run was given; empty when the run did not list them.
  std::vector<std::string> run_topics;

  // topic's place in run_topics: the same in every process of the run and no other topic's,
  // so a port or id derived from it cannot collide as one hashed from the name can; -1 when
  // the run did not list its topics (derive from the name then).
  int topic_index(std::string_view topic) const noexcept {
    for (size_t i = 0; i < run_topics.size(); ++i)
      if (run_topics[i] == topic) return int(i);
    return -1;
  }

  // This host's address for the run's sockets: local_address, or 127.0.0.1 on one host.
  std::string address() const { return local_address.empty() ? "127.0.0.1" : local_address; }

  // Across hosts without peer_addresses, the refusal (setting "hosts") "WHAT the run's other
  // hosts, and none was given: give each one's address with --peer ADDRESS", e.g. what =
  // "transport tcp across hosts connects to". Call after keep().
  void need_peers(Refusals &refusals, const char *what) const {
    if (!local_address.empty() && peer_addresses.empty())
      refusals.add("hosts",
                   "%s the run's other hosts, and none was given: give each one's address "
                   "with --peer ADDRESS",
                   what);
  }

  // Copies them from cfg, refusing a run id as run_id() does.
  void keep(const psb_config &cfg, Refusals &refusals, const char *why, bool alnum = false) {
    run_id = sdk::run_id(cfg, refusals, why, alnum);
    notify = cfg.notify;
    qos = cfg.qos;
    max_payload = cfg.max_payload;
    local_address = cfg.local_address != nullptr ? cfg.local_address : "";
    peer_addresses.clear();
    for (const char *const *p = cfg.peer_addresses; p != nullptr && *p != nullptr; ++p)
      peer_addresses.emplace_back(*p);
    keep_run_topics(cfg, refusals);
    // They go into sockets and vendor XML: only dotted IPv4 (the node lets no other through;
    // a direct caller is told).
    if (local_address.empty()) return;
    auto ipv4 = [](const std::string &a) {
      in_addr parsed{};
      return inet_pton(AF_INET, a.c_str(), &parsed) == 1;
    };
    std::string bad = ipv4(local_address) ? "" : local_address;
    for (const std::string &peer : peer_addresses)
      if (bad.empty() && !ipv4(peer)) bad = peer;
    if (!bad.empty())
      refusals.add("hosts",
                   "local_address and peer_addresses must be IPv4 addresses, e.g. 198.18.0.2 "
                   "('%s' is not)",
                   bad.c_str());
  }

 private:
  // A list with a hole or a topic twice would give two topics one index (the node lets
  // neither through; a direct caller is told).
  void keep_run_topics(const psb_config &cfg, Refusals &refusals) {
    run_topics.clear();
    for (uint32_t i = 0; cfg.run_topics != nullptr && i < cfg.run_topic_count; ++i) {
      const char *topic = cfg.run_topics[i];
      if (topic == nullptr || *topic == '\0' || topic_index(topic) >= 0) {
        refusals.add("driver", "run_topics[%u] is %s: every topic of the run once, by name", i,
                     topic == nullptr ? "NULL"
                     : *topic == '\0' ? "empty"
                                      : "listed twice");
        run_topics.clear();
        return;
      }
      run_topics.emplace_back(topic);
    }
  }
};

// The node's message header, the first bytes of every message (max_payload includes it).
constexpr size_t kHeaderSize = 32;

// Whether cfg.max_payload is in [min, max]; if not, the refusal (setting "size")
// "max_payload N is not supported; supported: MIN to MAX bytes (header included)".
inline bool payload_in_range(const psb_config &cfg, Refusals &refusals, uint64_t min,
                             uint64_t max) {
  if (cfg.max_payload >= min && cfg.max_payload <= max) return true;
  refusals.add("size",
               "max_payload %llu is not supported; supported: %llu to %llu bytes (header included)",
               static_cast<unsigned long long>(cfg.max_payload),
               static_cast<unsigned long long>(min), static_cast<unsigned long long>(max));
  return false;
}

// The same over a nullptr-terminated list, such as caps.transports.
inline int index_in(const char *name, const char *const *names) noexcept {
  for (int i = 0; name != nullptr && names[i] != nullptr; ++i)
    if (std::strcmp(names[i], name) == 0) return i;
  return -1;
}

// The transport cfg names, as its index in names (a nullptr-terminated list such as
// caps.transports): 0, the first, for NULL and "default", and for one not among names (which
// refuse_outside_caps refuses), so that parsing goes on with the default. E.g.
// Transport(transport_index(cfg, kTransportNames)).
inline int transport_index(const psb_config &cfg, const char *const *names) noexcept {
  const int i = index_in(cfg.transport, names);
  return i < 0 ? 0 : i;
}

// The names of a NULL-terminated list joined by sep ("udp|shm"; with " or " the last two
// are joined by it and the others by ", ").
inline std::string listed(const char *const *names, const char *sep) {
  std::string text;
  const bool prose = std::strcmp(sep, " or ") == 0;
  for (const char *const *n = names; *n != nullptr; ++n)
    text += (n == names ? "" : prose && n[1] != nullptr ? ", " : sep) + std::string(*n);
  return text;
}

// Refuses what caps leave out, each setting only when nothing refused it yet (call it after
// the driver's own rules, whose reasons say why): a reliability, durability, history or
// notify outside its set or not one psb_* value, history keep_last with a depth of 0, and
// a transport not in caps.transports (NULL and "default" pass: the first), a run across
// hosts (local_address set) without caps.crosses_hosts, or (host_transports given: the
// driver's transports that cross hosts) on a transport that does not. Each as the node
// words it: "reliability 'reliable' is not supported; this driver supports best_effort".
// The node refuses these itself; a direct caller of check() is told as well. The SDK calls
// it for every driver: check() leaves out what is only a capability.
inline void refuse_outside_caps(const psb_capabilities &caps, const psb_config &cfg,
                                Refusals &refusals, const char *const *host_transports = nullptr) {
  struct Named {
    uint32_t bit;
    const char *name;
  };
  auto in_set = [&](const char *setting, uint32_t wanted, uint32_t allowed,
                    std::initializer_list<Named> names) {
    std::string name = std::to_string(wanted), supported;
    bool known = false;
    for (const Named &n : names) {
      if (n.bit == wanted) name = n.name, known = true;
      if (allowed & n.bit) supported += (supported.empty() ? "" : "|") + std::string(n.name);
    }
    if ((known && (allowed & wanted)) || refusals.has(setting)) return;
    refusals.add(setting, "%s '%s' is not supported; this driver supports %s", setting,
                 name.c_str(), supported.empty() ? "(none)" : supported.c_str());
  };
  const psb_qos &q = cfg.qos;
  in_set("reliability", q.reliability, caps.reliability,
         {{PSB_BEST_EFFORT, "best_effort"}, {PSB_RELIABLE, "reliable"}});
  in_set("durability", q.durability, caps.durability,
         {{PSB_VOLATILE, "volatile"},
          {PSB_TRANSIENT_LOCAL, "transient_local"},
          {PSB_PERSISTENT, "persistent"}});
  if (q.history != 0)
    in_set("history", q.history, caps.history,
           {{PSB_KEEP_LAST, "keep_last"}, {PSB_KEEP_ALL, "keep_all"}});
  if (q.history == PSB_KEEP_LAST && q.history_depth == 0 && !refusals.has("history"))
    refusals.add("history", "history keep_last needs a depth of at least 1 (keep_last:N)");
  in_set("notify", cfg.notify, caps.notify,
         {{PSB_NOTIFY_LISTENER, "listener"}, {PSB_NOTIFY_WAIT, "wait"}, {PSB_NOTIFY_POLL, "poll"}});
  const char *const none[] = {nullptr};
  const char *const *transports = caps.transports != nullptr ? caps.transports : none;
  if (cfg.transport != nullptr && std::strcmp(cfg.transport, "default") != 0 &&
      index_in(cfg.transport, transports) < 0 && !refusals.has("transport")) {
    const std::string supported = listed(transports, "|");
    refusals.add("transport", "transport '%s' is not supported; this driver supports %s",
                 cfg.transport, supported.empty() ? "(none)" : supported.c_str());
  }
  if (cfg.local_address != nullptr && !caps.crosses_hosts && !refusals.has("hosts"))
    refusals.add("hosts", "a run across hosts is not supported; this driver runs on one host");
  if (cfg.local_address != nullptr && caps.crosses_hosts && host_transports != nullptr &&
      !refusals.has("hosts")) {
    const char *chosen = cfg.transport == nullptr || std::strcmp(cfg.transport, "default") == 0
                             ? transports[0]
                             : cfg.transport;
    if (index_in(chosen, transports) >= 0 && index_in(chosen, host_transports) < 0)
      refusals.add("hosts", "transport %s does not cross hosts; across hosts use --transport %s",
                   chosen, listed(host_transports, " or ").c_str());
  }
}

// A view over cfg.options (valid while cfg is). The node has already refused any key not
// in caps.option_keys. A malformed or missing value is recorded in the Refusals given, as
// setting "option:KEY", and the lookup returns its fallback, so parsing goes on and
// finds every other problem too.
class Options {
 public:
  Options(const psb_config &cfg, Refusals &refusals) noexcept : cfg_(cfg), refusals_(refusals) {}

  // The value given for key, or nullptr when it was not given (the first, if repeated).
  const char *find(std::string_view key) const noexcept {
    for (size_t i = 0; i < cfg_.option_count; ++i)
      if (cfg_.options[i].key != nullptr && key == cfg_.options[i].key)
        return cfg_.options[i].value;
    return nullptr;
  }
  bool has(std::string_view key) const noexcept { return find(key) != nullptr; }

  std::string text(std::string_view key, std::string_view fallback) const {
    const char *v = find(key);
    return v ? std::string(v) : std::string(fallback);
  }

  // Refuses each option whose key is not in keys (nullptr-terminated, as caps.option_keys):
  // "unknown option 'KEY'; valid options: A, B", or "...; this driver takes no options".
  // The node refuses these itself; this tells a direct caller as well.
  void refuse_unknown(const char *const *keys) const {
    std::string valid;
    for (const char *const *k = keys; *k != nullptr; ++k)
      valid += (valid.empty() ? "" : ", ") + std::string(*k);
    valid = valid.empty() ? "this driver takes no options" : "valid options: " + valid;
    for (size_t i = 0; i < cfg_.option_count; ++i) {
      const char *key = cfg_.options[i].key != nullptr ? cfg_.options[i].key : "(null)";
      bool known = false;
      for (const char *const *k = keys; *k != nullptr && !known; ++k)
        known = std::strcmp(*k, key) == 0;
      if (!known)
        refusals_.add("option:" + std::string(key), "unknown option '%s'; %s", key, valid.c_str());
    }
  }

  // Whether key was given where it does not apply (not_here): then also the refusal
  // "option KEY REASON", reason printf-formatted, e.g. "applies to transport tcp only".
  __attribute__((format(printf, 4, 5))) bool given_but(std::string_view key, bool not_here,
                                                       const char *fmt, ...) const {
    if (!not_here || !has(key)) return false;
    va_list ap;
    va_start(ap, fmt);
    const std::string reason = detail::vformat(fmt, ap);
    va_end(ap);
    refuse(key, "option " + std::string(key) + " " + reason);
    return true;
  }

  // The value, or nullptr with the refusal "option KEY[=FORM] is missing[; ADVICE]".
  const char *required(std::string_view key, std::string_view form = {},
                       std::string_view advice = {}) const {
    if (const char *v = find(key)) return v;
    std::string m = "option " + std::string(key);
    if (!form.empty()) m += "=" + std::string(form);
    m += " is missing";
    if (!advice.empty()) m += "; " + std::string(advice);
    refuse(key, m);
    return nullptr;
  }

  // true/1 or false/0; anything else: refused, "option KEY='VALUE': use true or false".
  // strict: true or false only; anything else: "option KEY='VALUE': use KEY=true or
  // KEY=false".
  bool flag(std::string_view key, bool fallback, bool strict = false) const {
    const char *v = find(key);
    if (v == nullptr) return fallback;
    if (std::strcmp(v, "true") == 0 || (!strict && std::strcmp(v, "1") == 0)) return true;
    if (std::strcmp(v, "false") == 0 || (!strict && std::strcmp(v, "0") == 0)) return false;
    const std::string k(key);
    refuse(key, "option " + k + "='" + v + "': use " +
                    (strict ? k + "=true or " + k + "=false" : "true or false"));
    return fallback;
  }

  // A decimal whole number in [min, max]; anything else: refused,
  // "option KEY='VALUE': use a whole number from MIN to MAX", or with a hint given,
  // "option KEY='VALUE': use HINT" (e.g. "a number of messages from 0 to 99 (0 = no limit)").
  int64_t number(std::string_view key, int64_t fallback, int64_t min, int64_t max,
                 std::string_view hint = {}) const {
    const char *v = find(key);
    if (v == nullptr) return fallback;
    char *end = nullptr;
    errno = 0;
    const bool starts_well = (*v >= '0' && *v <= '9') || (*v == '-' && v[1] >= '0' && v[1] <= '9');
    const long long n = starts_well ? std::strtoll(v, &end, 10) : 0;
    if (starts_well && errno == 0 && *end == '\0' && n >= min && n <= max) return n;
    const std::string use =
        hint.empty() ? "a whole number from " + std::to_string(min) + " to " + std::to_string(max)
                     : std::string(hint);
    refuse(key, "option " + std::string(key) + "='" + v + "': use " + use);
    return fallback;
  }

  // Which of names the value is (its index), or fallback when the key was not given;
  // anything else: refused, "option KEY='VALUE' is not known; use KEY=A (default),
  // KEY=B or KEY=C" (the fallback's name marked default).
  size_t choice(std::string_view key, std::initializer_list<std::string_view> names,
                size_t fallback = 0) const {
    const char *v = find(key);
    if (v == nullptr) return fallback;
    const int i = index_in(v, names);
    if (i >= 0) return size_t(i);
    std::string m = "option " + std::string(key) + "='" + v + "' is not known; use ";
    for (size_t n = 0; n < names.size(); ++n) {
      m += n == 0 ? "" : n + 1 == names.size() ? " or " : ", ";
      m += std::string(key) + "=" + std::string(names.begin()[n]) +
           (n == fallback ? " (default)" : "");
    }
    refuse(key, m);
    return fallback;
  }

 private:
  void refuse(std::string_view key, const std::string &reason) const {
    refusals_.add("option:" + std::string(key), "%s", reason.c_str());
  }

  const psb_config &cfg_;
  Refusals &refusals_;
};

// The sample type of a driver whose samples are idl/psbench.idl's types (cyclonedds; fastdds
// words its own): bytes (the header and the payload), or complex (the header and `elements`
// Outer of 4 Inner each). A driver's Settings derives from it and calls read() as it parses.
struct SampleType {
  static constexpr uint32_t kDefaultElements = 16;  // complex without elements=N
  bool complex = false;                             // option type: bytes or complex
  uint32_t elements = kDefaultElements;             // option elements: complex only

  // Reads options type and elements (1 to max_elements), refusing elements given without
  // type=complex, and a complex run's size other than 32 (elements size it).
  void read(const psb_config &cfg, Refusals &refusals, uint32_t max_elements) {
    const Options options(cfg, refusals);
    complex = options.choice("type", {"bytes", "complex"}) == 1;
    options.given_but("elements", !complex,
                      "applies to type=complex only; add --option type=complex");
    elements = uint32_t(options.number("elements", kDefaultElements, 1, max_elements));
    if (complex && cfg.max_payload != kHeaderSize)
      refusals.add("size", "type complex is sized by option elements=N; use --size 32");
  }
};

// A broker's address as option broker=HOST:PORT gives it ([IPv6]:PORT too): text as
// given (for messages), host without brackets, port 1-65535.
struct BrokerAddress {
  std::string text;
  std::string host;
  int port = 0;
};

// Parses option broker's value (the port: 1 to 5 digits, 1 to 65535); on a malformed one,
// refuses option:broker with an example on the middleware's usual port and returns false
// (out untouched). redis, mqtt, rabbitmq and nats read their broker with it.
inline bool broker_address(const char *text, int example_port, Refusals &refuse,
                           BrokerAddress &out) {
  const std::string b(text ? text : "");
  const size_t colon = b.rfind(':');
  const std::string digits = colon == std::string::npos ? "" : b.substr(colon + 1);
  const bool numeric = !digits.empty() && digits.size() <= 5 &&
                       digits.find_first_not_of("0123456789") == std::string::npos;
  const long port = numeric ? std::stol(digits) : 0;
  bool ok = numeric && colon > 0 && port >= 1 && port <= 65535;
  std::string host = ok ? b.substr(0, colon) : std::string();
  if (ok && host.front() == '[') {
    ok = host.size() > 2 && host.back() == ']';
    host = ok ? host.substr(1, host.size() - 2) : host;
  } else if (ok) {
    ok = host.find(':') == std::string::npos;  // a bare IPv6 literal needs brackets
  }
  if (!ok) {
    refuse.add("option:broker",
               "option broker='%s' is not HOST:PORT (e.g. 127.0.0.1:%d, or [::1]:%d; port 1 to "
               "65535)",
               b.c_str(), example_port, example_port);
    return false;
  }
  out = BrokerAddress{b, host, int(port)};
  return true;
}

}  // namespace psb::sdk

#endif  // PSBENCH_SDK_REFUSALS_HPP
