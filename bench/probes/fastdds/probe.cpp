// fastdds_probe: Fast DDS 2.9 alone, no psbench code. One process publishes psbench's
// Bytes type back to back for a while, another takes it and counts sequence gaps. The
// defaults mirror the fastdds driver (drivers/fastdds: transports.cpp, endpoint_qos.cpp):
// same transports on 127.0.0.1, reliable keep_all with Fast DDS's default resource
// limits, synchronous publish mode, volatile. Flags change one setting at a time.
//
//   fastdds_probe sub --domain 77 [--transport shm|udp] [...]   (start first)
//   fastdds_probe pub --domain 77 [--transport shm|udp] --duration 2 [...]
//
// pub prints: written, failed writes (write() returned false: history full for
// max_blocking_time), rate. sub prints: received, gaps (missing sequence numbers),
// out-of-order, the reader's SAMPLE_LOST/SAMPLE_REJECTED totals, and its rate between
// the first and last arrival ((received - 1) / span, on its own clock, as psbench's sub).
// pub ends with an end marker (header flag 4; three times when best effort) on which sub
// stops; else sub stops after 5 s without a sample. Both stop on their own (bounded waits).
//
// ping/pong: a closed-loop ping-pong for bench/truth, ping writing on probe_ping and
// taking from probe_pong, pong echoing each sample it takes back as it came. The wait
// is the driver's (take_next_sample, else DataReader::wait_for_unread_message, then take
// again). Ping repeats its first message until pong answers, then measures for
// --duration and prints "p50_us p99_us count" (nearest rank); a header-only message
// (--size 32) ends pong. As the driver's ping-pong defaults:
//   fastdds_probe pong --transport builtin --best-effort --keep-last 1 --size S --domain D
//   fastdds_probe ping --transport builtin --best-effort --keep-last 1 --size S --domain D
//   --duration T
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/rtps/flowcontrol/FlowControllerDescriptor.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "psbenchPubSubTypes.h"
#include "rtt.hpp"  // bench/probes/common

using namespace eprosima::fastdds::dds;
using eprosima::fastdds::rtps::FlowControllerDescriptor;
using eprosima::fastdds::rtps::SharedMemTransportDescriptor;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::Duration_t;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using Clock = std::chrono::steady_clock;
constexpr uint32_t kEndFlag = 4;  // psbench's header flag "end"

namespace {

struct Args {
  std::string role;
  std::string transport = "shm";
  bool reliable = true;
  int keep_last = 0;         // 0: keep_all
  int max_per_instance = 0;  // 0: Fast DDS's default (400)
  double duration_s = 2;
  size_t size = 64;  // psbench message size: 32-byte header + payload
  int domain = 77;
  bool async = false;  // ASYNCHRONOUS_PUBLISH_MODE
  int fc_bytes = 0;    // with async: a FIFO flow controller of N bytes per period
  int fc_period_ms = 1;
  int hb_ms = 0;                      // reliable writer heartbeat period; 0: default (3 s)
  int nack_ms = -1;                   // reliable writer nack response delay; -1: default (5 ms)
  uint32_t udp_buffer = 1024 * 1024;  // UDP socket buffers; 0: Fast DDS's default (the OS's)
  uint32_t shm_segment = 512 * 1024;  // shared-memory segment (Fast DDS's default)
  double wait_s = 20;                 // sub: give up after this long without a writer/sample
};

void usage() {
  std::fprintf(
      stderr,
      "usage: fastdds_probe pub|sub|ping|pong [--transport shm|udp|builtin] [--best-effort] "
      "[--keep-last N] [--max-per-instance N] [--duration S] [--size B] [--domain D] "
      "[--async] [--flow-bytes N --flow-period-ms MS] [--heartbeat-ms MS] "
      "[--nack-ms MS] [--udp-buffer BYTES] [--shm-segment BYTES]\n");
  std::exit(2);
}

Args parse(int argc, char **argv) {
  Args a;
  if (argc < 2) usage();
  a.role = argv[1];
  if (a.role != "pub" && a.role != "sub" && a.role != "ping" && a.role != "pong") usage();
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> const char * {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (k == "--transport")
      a.transport = val();
    else if (k == "--best-effort")
      a.reliable = false;
    else if (k == "--keep-last")
      a.keep_last = std::atoi(val());
    else if (k == "--max-per-instance")
      a.max_per_instance = std::atoi(val());
    else if (k == "--duration")
      a.duration_s = std::atof(val());
    else if (k == "--size")
      a.size = std::strtoul(val(), nullptr, 10);
    else if (k == "--domain")
      a.domain = std::atoi(val());
    else if (k == "--async")
      a.async = true;
    else if (k == "--flow-bytes")
      a.fc_bytes = std::atoi(val());
    else if (k == "--flow-period-ms")
      a.fc_period_ms = std::atoi(val());
    else if (k == "--heartbeat-ms")
      a.hb_ms = std::atoi(val());
    else if (k == "--nack-ms")
      a.nack_ms = std::atoi(val());
    else if (k == "--udp-buffer")
      a.udp_buffer = uint32_t(std::strtoul(val(), nullptr, 10));
    else if (k == "--shm-segment")
      a.shm_segment = uint32_t(std::strtoul(val(), nullptr, 10));
    else
      usage();
  }
  if (a.transport != "shm" && a.transport != "udp" && a.transport != "builtin") usage();
  if (a.size < 32 || a.size > (64u << 20)) usage();
  return a;
}

Locator_t loopback() {
  Locator_t loc;
  IPLocator::setIPv4(loc, "127.0.0.1");
  loc.port = 0;
  return loc;
}

// The driver's transports.cpp, shm, udp and builtin cases.
DomainParticipantQos participant_qos(const Args &a) {
  DomainParticipantQos qos;
  qos.transport().use_builtin_transports = false;
  if (a.transport == "builtin") {  // shared memory and UDP confined to lo
    auto shm = std::make_shared<SharedMemTransportDescriptor>();
    shm->segment_size(std::max<uint32_t>(a.shm_segment, uint32_t(2 * a.size + 256 * 1024)));
    qos.transport().user_transports.push_back(shm);
    auto udp = std::make_shared<UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.emplace_back("127.0.0.1");
    // The driver's sizes: receive max(1 MiB, 2 messages), send the system's below that.
    udp->receiveBufferSize = std::max<uint32_t>(a.udp_buffer, uint32_t(2 * a.size));
    udp->sendBufferSize = 2 * a.size > 1024 * 1024 ? uint32_t(2 * a.size) : 0;
    qos.transport().user_transports.push_back(udp);
  } else if (a.transport == "shm") {
    auto shm = std::make_shared<SharedMemTransportDescriptor>();
    shm->segment_size(a.shm_segment);
    qos.transport().user_transports.push_back(shm);
  } else {
    auto udp = std::make_shared<UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.emplace_back("127.0.0.1");
    udp->sendBufferSize = udp->receiveBufferSize = a.udp_buffer;
    udp->maxInitialPeersRange = 32;
    qos.transport().user_transports.push_back(udp);
    qos.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(loopback());
    qos.wire_protocol().builtin.initialPeersList.push_back(loopback());
    qos.wire_protocol().default_unicast_locator_list.push_back(loopback());
  }
  if (a.async && a.fc_bytes > 0) {
    auto fc = std::make_shared<FlowControllerDescriptor>();
    fc->name = "probe_fc";
    fc->max_bytes_per_period = a.fc_bytes;
    fc->period_ms = uint64_t(a.fc_period_ms);
    qos.flow_controllers().push_back(fc);
  }
  return qos;
}

// The driver's endpoint_qos.cpp.
template <class Qos>
void common_qos(const Args &a, Qos &q) {
  q.reliability().kind = a.reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
  q.durability().kind = VOLATILE_DURABILITY_QOS;
  if (a.keep_last > 0) {
    q.history().kind = KEEP_LAST_HISTORY_QOS;
    q.history().depth = a.keep_last;
  } else {
    q.history().kind = KEEP_ALL_HISTORY_QOS;
  }
  if (a.max_per_instance > 0) {
    q.resource_limits().max_instances = 1;
    q.resource_limits().max_samples_per_instance = a.max_per_instance;
    q.resource_limits().max_samples = a.max_per_instance;
  }
}

struct Entities {
  DomainParticipant *p = nullptr;
  Topic *topic = nullptr;
  TypeSupport type{new psbench::BytesPubSubType()};
  ~Entities() {
    if (p == nullptr) return;
    p->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(p);
  }
};

bool open(const Args &a, Entities &e) {
  e.p = DomainParticipantFactory::get_instance()->create_participant(a.domain, participant_qos(a));
  if (e.p == nullptr) return false;
  e.type.register_type(e.p);
  e.topic = e.p->create_topic("probe_bytes", e.type.get_type_name(), TOPIC_QOS_DEFAULT);
  return e.topic != nullptr;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int run_pub(const Args &a) {
  Entities e;
  if (!open(a, e)) return 1;
  Publisher *pub = e.p->create_publisher(PUBLISHER_QOS_DEFAULT);
  DataWriterQos wq = DataWriterQos();
  common_qos(a, wq);
  if (a.async) {
    wq.publish_mode().kind = ASYNCHRONOUS_PUBLISH_MODE;
    if (a.fc_bytes > 0) wq.publish_mode().flow_controller_name = "probe_fc";
  }
  if (a.hb_ms > 0)
    wq.reliable_writer_qos().times.heartbeatPeriod = Duration_t(0, uint32_t(a.hb_ms) * 1'000'000u);
  if (a.nack_ms >= 0)
    wq.reliable_writer_qos().times.nackResponseDelay =
        Duration_t(0, uint32_t(a.nack_ms) * 1'000'000u);
  DataWriter *w = pub->create_datawriter(e.topic, wq);
  if (w == nullptr) return 1;

  const auto t_match = Clock::now();
  PublicationMatchedStatus m;
  while (w->get_publication_matched_status(m), m.current_count < 1) {
    if (seconds_since(t_match) > 20) {
      std::fprintf(stderr, "pub: no reader within 20 s\n");
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // both sides matched

  psbench::Bytes s;
  s.payload().assign(a.size - 32, 0x5a);
  uint64_t seq = 0, failed = 0;
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::duration<double>(a.duration_s);
  while (Clock::now() < end) {
    s.header().seq(seq++);  // like psbench's node: a failed write still uses its number
    if (!w->write(&s)) ++failed;
  }
  const double elapsed = seconds_since(t0);
  s.header().flags(kEndFlag);  // the end marker (psbench's flag 4), not counted by sub
  for (int i = 0; i < (a.reliable ? 1 : 3); ++i) w->write(&s);
  const auto t_ack = Clock::now();
  const ReturnCode_t acked = w->wait_for_acknowledgments(Duration_t(10, 0));
  std::printf("pub: written %llu, failed writes %llu, %.0f writes/s, acked %s after %.3f s\n",
              (unsigned long long)seq, (unsigned long long)failed, double(seq) / elapsed,
              acked == ReturnCode_t::RETCODE_OK ? "yes" : "no", seconds_since(t_ack));
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // let the last heartbeat exchange end
  return 0;
}

int run_sub(const Args &a) {
  Entities e;
  if (!open(a, e)) return 1;
  Subscriber *sub = e.p->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
  DataReaderQos rq = DataReaderQos();
  common_qos(a, rq);
  DataReader *r = sub->create_datareader(e.topic, rq);
  if (r == nullptr) return 1;

  psbench::Bytes s;
  SampleInfo info;
  uint64_t received = 0, gaps = 0, gap_events = 0, out_of_order = 0, expected = 0;
  uint64_t first_gaps[8] = {};
  Clock::time_point first{}, last{};
  auto idle_since = Clock::now();
  const double idle_limit = a.wait_s;
  for (;;) {
    if (r->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
      if (!info.valid_data) continue;
      if (s.header().flags() & kEndFlag) break;
      const uint64_t seq = s.header().seq();
      last = idle_since = Clock::now();
      if (received++ == 0) first = last;
      if (seq > expected) {
        if (gap_events < 8) first_gaps[gap_events] = expected;
        ++gap_events;
        gaps += seq - expected;
      } else if (seq < expected) {
        ++out_of_order;
        continue;
      }
      expected = seq + 1;
      continue;
    }
    // After the first sample, 5 s of silence (longer than the 3 s heartbeat) ends the run; before
    // it, wait_s.
    const double idle = seconds_since(idle_since);
    if (idle > (received > 0 ? 5.0 : idle_limit)) break;
    r->wait_for_unread_message(Duration_t(0, 100'000'000));
  }
  SampleLostStatus lost;
  SampleRejectedStatus rejected;
  r->get_sample_lost_status(lost);
  r->get_sample_rejected_status(rejected);
  const double span = std::chrono::duration<double>(last - first).count();
  std::printf(
      "sub: received %llu, last seq %llu, missing %llu in %llu gaps, out of order %llu, "
      "sample_lost %d, sample_rejected %d, %.0f samples/s\n",
      (unsigned long long)received, (unsigned long long)(expected ? expected - 1 : 0),
      (unsigned long long)gaps, (unsigned long long)gap_events, (unsigned long long)out_of_order,
      lost.total_count, rejected.total_count,
      span > 0 ? double(received - 1) / span : 0.0);  // n arrivals, n - 1 intervals
  for (uint64_t i = 0; i < gap_events && i < 8; ++i)
    std::printf("sub: gap at seq %llu\n", (unsigned long long)first_gaps[i]);
  return 0;
}

// The next valid sample into s, as the driver's take() in wait mode; false after `limit`.
bool take_within(DataReader *r, psbench::Bytes &s, std::chrono::nanoseconds limit) {
  SampleInfo info;
  const auto end = Clock::now() + limit;
  for (;;) {
    while (r->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK)
      if (info.valid_data) return true;
    const auto left =
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - Clock::now()).count();
    if (left <= 0) return false;
    const int64_t wait = std::min<int64_t>(left, 1'000'000'000);
    r->wait_for_unread_message(
        Duration_t(int32_t(wait / 1'000'000'000), uint32_t(wait % 1'000'000'000)));
  }
}

int run_pingpong(const Args &a) {
  const bool ping = a.role == "ping";
  Entities e;
  if (!open(a, e)) return 1;
  Topic *out = e.p->create_topic(ping ? "probe_ping" : "probe_pong", e.type.get_type_name(),
                                 TOPIC_QOS_DEFAULT);
  Topic *in = e.p->create_topic(ping ? "probe_pong" : "probe_ping", e.type.get_type_name(),
                                TOPIC_QOS_DEFAULT);
  if (out == nullptr || in == nullptr) return 1;
  DataWriterQos wq = DataWriterQos();
  common_qos(a, wq);
  DataReaderQos rq = DataReaderQos();
  common_qos(a, rq);
  DataWriter *w = e.p->create_publisher(PUBLISHER_QOS_DEFAULT)->create_datawriter(out, wq);
  DataReader *r = e.p->create_subscriber(SUBSCRIBER_QOS_DEFAULT)->create_datareader(in, rq);
  if (w == nullptr || r == nullptr) return 1;

  psbench::Bytes s, got;
  s.payload().assign(a.size - 32, 0x5a);
  using namespace std::chrono_literals;
  if (!ping) {
    for (int idle = 0;
         ;) {  // echo until a header-only message; give up after 10 minutes without one
      if (!take_within(r, got, 1s)) {
        if (++idle == 600) {
          std::fprintf(stderr, "pong: no message from ping for 10 minutes\n");
          return 1;
        }
        continue;
      }
      idle = 0;
      if (got.payload().empty()) return 0;
      w->write(&got);
    }
  }
  for (int tries = 0;; ++tries) {  // until discovery has matched both ways (at most 100 x 200 ms)
    if (tries == 100) {
      std::fprintf(stderr, "ping: no echo from pong within 20 s\n");
      return 1;
    }
    w->write(&s);
    if (take_within(r, got, 200ms)) break;
  }
  // Late echoes of the repeated first message would pair with the wrong round: drain them.
  while (take_within(r, got, 200ms)) {
  }
  std::vector<long long> rtt;
  const auto end = Clock::now() + std::chrono::duration<double>(a.duration_s);
  while (Clock::now() < end) {
    const auto t0 = Clock::now();
    w->write(&s);
    if (!take_within(r, got, 10s)) {
      std::fprintf(stderr, "ping: no echo within 10 s\n");
      return 1;
    }
    rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  }
  s.payload().clear();
  for (int i = 0; i < 3; ++i) w->write(&s);  // best effort: the end marker three times
  probe::print_rtt_line(rtt);                // common/rtt.hpp
  std::fflush(stdout);
  std::this_thread::sleep_for(100ms);  // the end marker leaves before the participant goes
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const Args a = parse(argc, argv);
  if (a.role == "ping" || a.role == "pong") return run_pingpong(a);
  return a.role == "pub" ? run_pub(a) : run_sub(a);
}
