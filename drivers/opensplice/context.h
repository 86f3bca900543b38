// A driver context: one OpenSplice participant in the run's domain, with a publisher, a
// subscriber and the topics its endpoints share. OpenSplice reads its configuration from
// the environment (OSPL_URI, a file:// URI) when a process first joins a domain id, and
// keeps one domain per id in a process: the contexts of one process that use the same
// id share it (Domain below), and a second configuration for an id in use is refused.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "samples.h"
#include "sdk_info.h"  // generated: the SDK psbench built (psbench-sdk.json)
#include "settings.h"

namespace psbospl {

// Throws "<what>: <OpenSplice's return code>" (the SDK puts "opensplice: " before it).
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_rc(const char *what, DDS_ReturnCode_t rc) {
  fail("%s: DDS_RETCODE_%s", what, psb::sdk::dds::return_code_name(rc));
}
inline void check_rc(DDS_ReturnCode_t rc, const char *what) {
  if (rc != DDS_RETCODE_OK) fail_rc(what, rc);
}
template <class T>
T *checked(T *handle, const char *what) {
  if (handle == nullptr) fail("%s (OpenSplice reported why on stderr)", what);
  return handle;
}

// How many domains this process has closed (copyin_cache.cmake: the generated copy-in
// code resolves its cached database types again when this changes).
extern "C" unsigned psbench_ospl_domains_closed;  // defined in opensplice_driver.cpp

// A domain this process joined: its configuration (psbench's XML written to a file named
// after the run, removed when the last context of the domain closes; or the user's URI).
struct Domain {
  explicit Domain(const Settings &s)
      : config(configuration(s)), uri(s.transport == Transport::config ? config : write_xml(s)) {}
  ~Domain() {
    if (!file.empty()) ::unlink(file.c_str());
    ++psbench_ospl_domains_closed;  // under PerProcess's lock
  }
  // The user's URI (transport config), or psbench's XML.
  static std::string configuration(const Settings &s) {
    return s.transport == Transport::config ? s.vendor_uri : domain_xml(s);
  }
  const std::string config;
  std::string file;  // where psbench's XML is, or empty
  const std::string uri;

 private:
  std::string write_xml(const Settings &s) {
    const char *tmp = std::getenv("TMPDIR");
    file = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/psbench_" + s.run_id +
           "_ospl" + std::to_string(s.domain_id) + "_" + std::to_string(::getpid()) + ".xml";
    std::ofstream out(file);
    out << config << '\n';
    if (!out.flush()) fail("cannot write the OpenSplice configuration %s", file.c_str());
    return "file://" + file;
  }
};
using DomainLease = psb::sdk::dds::DomainLease<Domain>;

// Creates a participant of domain s.domain_id (the user's configuration's own id for
// transport config), joining the domain with this context's configuration when the
// process has not yet: OpenSplice takes it from OSPL_URI at that moment.
inline DDS_DomainParticipant join(const Settings &s, DomainLease &domain) {
  static std::mutex environment;
#ifdef PSBENCH_OSPL_FEDERATED
  // OpenSplice 5 names a domain by its configuration's URI: one per daemon port here.
  const uint32_t id = s.transport == Transport::config ? 0 : uint32_t(s.daemon_port);
#else
  const uint32_t id = s.transport == Transport::config ? DDS_DOMAIN_ID_DEFAULT : s.domain_id;
#endif
  domain = psb::sdk::dds::join_domain<Domain>(id, Domain::configuration(s),
                                              [&] { return std::make_unique<Domain>(s); });
  const std::lock_guard<std::mutex> lock(environment);
  // Changed only when it differs: OpenSplice's threads of a domain already open may read
  // the environment meanwhile (the contexts of one run share one domain and one value).
  auto set = [](const char *name, const char *value, bool overwrite) {
    const char *now = std::getenv(name);
    if (now == nullptr || (overwrite && std::strcmp(now, value) != 0)) ::setenv(name, value, 1);
  };
  // OpenSplice checks a configuration against $OSPL_HOME/etc/ospl_metaconfig.xml: this
  // driver's OpenSplice, whatever another installation's OSPL_HOME says.
  set("OSPL_HOME", PSBENCH_OSPL_HOME, true);
  // OpenSplice's reports go to its log files in the working directory unless told
  // otherwise: to stderr, which psbench keeps (a user's own choice stays).
#ifdef PSBENCH_OSPL_FEDERATED
  // OpenSplice 5 has no report verbosity: its information reports go to /dev/null (it
  // joins OSPL_LOGPATH, "." by default, and the file's name).
  if (std::getenv("OSPL_INFOFILE") == nullptr && std::getenv("OSPL_LOGPATH") == nullptr) {
    set("OSPL_LOGPATH", "/", false);
    set("OSPL_INFOFILE", "dev/null", false);
  }
#else
  set("OSPL_INFOFILE", "<stderr>", false);
#endif
  set("OSPL_ERRORFILE", "<stderr>", false);
#ifdef PSBENCH_OSPL_FEDERATED
  // OpenSplice 5's domain id is the configuration's URI: no OSPL_URI needed.
  DDS_DomainParticipant p = DDS_DomainParticipantFactory_create_participant(
      DDS_DomainParticipantFactory_get_instance(), const_cast<char *>(domain->uri.c_str()),
      DDS_PARTICIPANT_QOS_DEFAULT, nullptr, DDS_STATUS_MASK_NONE);
  if (p == nullptr && s.transport == Transport::shm)
    fail(
        "cannot join the domain of the spliced daemon on port %d: is it running? (psbench "
        "starts it for transport shm; OpenSplice reported on stderr)",
        s.daemon_port);
#else
  set("OSPL_URI", domain->uri.c_str(), true);
  DDS_DomainParticipant p = DDS_DomainParticipantFactory_create_participant(
      DDS_DomainParticipantFactory_get_instance(), id, DDS_PARTICIPANT_QOS_DEFAULT, nullptr,
      DDS_STATUS_MASK_NONE);
#endif
  if (p == nullptr)
    fail("cannot create a participant in domain %u (OpenSplice reported why on stderr)", id);
  return p;
}

// DDSI2's default WriterLingerDuration: how long it keeps a deleted reliable writer for
// readers that have not acknowledged everything yet.
constexpr std::chrono::milliseconds kWriterLinger{1000};

// The readers of each topic in this process (all its contexts): a writer whose topic has
// none here has only readers in other processes, which it waits for at close (writer.h).
class LocalReaders {
 public:
  static LocalReaders &instance() {
    static auto &readers = *new LocalReaders;  // kept past exit
    return readers;
  }
  void add(const std::string &topic, int n) {
    const std::lock_guard<std::mutex> lock(mutex_);
    count_[topic] += n;
  }
  // A reader's registration, for as long as it lives.
  struct Registration {
    explicit Registration(std::string t) : topic(std::move(t)) { instance().add(topic, 1); }
    ~Registration() { instance().add(topic, -1); }
    Registration(const Registration &) = delete;
    Registration &operator=(const Registration &) = delete;
    const std::string topic;
  };
  bool any(const std::string &topic) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto found = count_.find(topic);
    return found != count_.end() && found->second > 0;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, int> count_;
};

// How long a reliable write may block for room in the writer's history (OpenSplice's
// default is 100 ms, short for a 4 MiB sample on a busy machine).
constexpr DDS_Duration_t kMaxBlockingTime = {1, 0};

// psbench's QoS onto an OpenSplice topic, reader or writer QoS (the same fields).
template <class Qos>
void apply_qos(Qos &q, const Settings &s) {
  q.reliability.kind = s.qos.reliability == PSB_RELIABLE ? DDS_RELIABLE_RELIABILITY_QOS
                                                         : DDS_BEST_EFFORT_RELIABILITY_QOS;
  q.reliability.max_blocking_time = kMaxBlockingTime;
  q.durability.kind = s.qos.durability == PSB_TRANSIENT_LOCAL ? DDS_TRANSIENT_LOCAL_DURABILITY_QOS
                                                              : DDS_VOLATILE_DURABILITY_QOS;
  if (const auto h = psb::sdk::dds::history(s.qos)) {  // else OpenSplice's, keep_last 1
    q.history.kind = h->keep_all ? DDS_KEEP_ALL_HISTORY_QOS : DDS_KEEP_LAST_HISTORY_QOS;
    q.history.depth = h->depth;
  }
}

// An OpenSplice object from a __alloc function, DDS_free'd with its owner.
template <class T>
using Allocated = std::unique_ptr<T, decltype(&DDS_free)>;
template <class T>
Allocated<T> allocated(T *p) {
  return Allocated<T>(checked(p, "out of memory"), &DDS_free);
}

class Context {
 public:
  explicit Context(const psb_config &cfg)
      : settings(psb::sdk::parse_or_throw(cfg, parse_settings)),
        participant(join(settings, domain_)) {
    try {
      publisher =
          checked(DDS_DomainParticipant_create_publisher(participant, DDS_PUBLISHER_QOS_DEFAULT,
                                                         nullptr, DDS_STATUS_MASK_NONE),
                  "cannot create a publisher");
      subscriber =
          checked(DDS_DomainParticipant_create_subscriber(participant, DDS_SUBSCRIBER_QOS_DEFAULT,
                                                          nullptr, DDS_STATUS_MASK_NONE),
                  "cannot create a subscriber");
      register_type();
    } catch (...) {
      close();
      throw;
    }
  }
  ~Context() { close(); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  // The topic of this name (one per name in the participant, shared by its endpoints).
  DDS_Topic topic(const char *name) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto found = topics_.find(name);
    if (found != topics_.end()) return found->second;
    auto q = allocated(DDS_TopicQos__alloc());
    check_rc(DDS_DomainParticipant_get_default_topic_qos(participant, q.get()), "topic QoS");
    apply_qos(*q, settings);
    // What a transient_local writer keeps for late joiners in other processes is the
    // topic's durability_service.history (default keep_last 1), not the writer's history
    // (DDSI2 6.9; spliced's shared memory in 5.5.1 alike): make them the same, so
    // keep_last:N gives a late joiner the last N, keep_all all (6.9 refuses
    // transient_local with keep_all: settings.h).
    if (settings.qos.history != 0) {
      q->durability_service.history_kind = q->history.kind;
      q->durability_service.history_depth = q->history.depth;
    }
    DDS_Topic t =
        checked(DDS_DomainParticipant_create_topic(participant, name, type_name_.get(), q.get(),
                                                   nullptr, DDS_STATUS_MASK_NONE),
                "cannot create topic");
    topics_.emplace(name, t);
    return t;
  }

  const Settings settings;
  bool linger = false;  // set by a reliable writer's destructor

 private:
  DomainLease domain_;  // before the participant: it goes after it

 public:
  DDS_DomainParticipant participant;
  DDS_Publisher publisher = nullptr;
  DDS_Subscriber subscriber = nullptr;

 private:
  void register_type() {
    DDS_TypeSupport ts =
        settings.complex ? psbench_ComplexTypeSupport__alloc() : psbench_BytesTypeSupport__alloc();
    auto owned = allocated(ts);
    type_name_.reset(settings.complex ? psbench_ComplexTypeSupport_get_type_name(ts)
                                      : psbench_BytesTypeSupport_get_type_name(ts));
    check_rc(settings.complex
                 ? psbench_ComplexTypeSupport_register_type(ts, participant, type_name_.get())
                 : psbench_BytesTypeSupport_register_type(ts, participant, type_name_.get()),
             "cannot register the type");
  }
  // Deletes the participant with everything in it (the endpoints are gone by now). A
  // context that had a reliable writer first gives DDSI2 its writer linger (1 s,
  // OpenSplice's WriterLingerDuration) to deliver what it still holds: closing the
  // domain stops DDSI2 at once, and OpenSplice cannot say when it is done.
  void close() {
    if (participant == nullptr) return;
#ifndef PSBENCH_OSPL_FEDERATED  // federated: spliced's services hold what was written
    if (linger) std::this_thread::sleep_for(kWriterLinger);
#endif
    DDS_DomainParticipant_delete_contained_entities(participant);
    DDS_DomainParticipantFactory_delete_participant(DDS_DomainParticipantFactory_get_instance(),
                                                    participant);
    participant = nullptr;
  }

  std::mutex mutex_;
  std::map<std::string, DDS_Topic> topics_;
  Allocated<char> type_name_{nullptr, &DDS_free};
};

}  // namespace psbospl
