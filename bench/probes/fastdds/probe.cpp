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
// the first and last arrival. Both stop on their own (bounded waits).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/rtps/flowcontrol/FlowControllerDescriptor.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include "psbenchPubSubTypes.h"

using namespace eprosima::fastdds::dds;
using eprosima::fastdds::rtps::FlowControllerDescriptor;
using eprosima::fastdds::rtps::SharedMemTransportDescriptor;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::Duration_t;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string role;
  std::string transport = "shm";
  bool reliable = true;
  int keep_last = 0;         // 0: keep_all
  int max_per_instance = 0;  // 0: Fast DDS's default (400)
  double duration_s = 2;
  size_t size = 64;          // psbench message size: 32-byte header + payload
  int domain = 77;
  bool async = false;        // ASYNCHRONOUS_PUBLISH_MODE
  int fc_bytes = 0;          // with async: a FIFO flow controller of N bytes per period
  int fc_period_ms = 1;
  int hb_ms = 0;             // reliable writer heartbeat period; 0: default (3 s)
  int nack_ms = -1;          // reliable writer nack response delay; -1: default (5 ms)
  uint32_t udp_buffer = 1024 * 1024;  // UDP socket buffers; 0: Fast DDS's default (the OS's)
  uint32_t shm_segment = 512 * 1024;  // shared-memory segment (Fast DDS's default)
  double wait_s = 20;        // sub: give up after this long without a writer/sample
};

void usage() {
  std::fprintf(stderr,
               "usage: fastdds_probe pub|sub [--transport shm|udp] [--best-effort] "
               "[--keep-last N] [--max-per-instance N] [--duration S] [--size B] [--domain D] "
               "[--async] [--flow-bytes N --flow-period-ms MS] [--heartbeat-ms MS] "
               "[--nack-ms MS] [--udp-buffer BYTES] [--shm-segment BYTES]\n");
  std::exit(2);
}

Args parse(int argc, char **argv) {
  Args a;
  if (argc < 2) usage();
  a.role = argv[1];
  if (a.role != "pub" && a.role != "sub") usage();
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> const char * {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (k == "--transport") a.transport = val();
    else if (k == "--best-effort") a.reliable = false;
    else if (k == "--keep-last") a.keep_last = std::atoi(val());
    else if (k == "--max-per-instance") a.max_per_instance = std::atoi(val());
    else if (k == "--duration") a.duration_s = std::atof(val());
    else if (k == "--size") a.size = std::strtoul(val(), nullptr, 10);
    else if (k == "--domain") a.domain = std::atoi(val());
    else if (k == "--async") a.async = true;
    else if (k == "--flow-bytes") a.fc_bytes = std::atoi(val());
    else if (k == "--flow-period-ms") a.fc_period_ms = std::atoi(val());
    else if (k == "--heartbeat-ms") a.hb_ms = std::atoi(val());
    else if (k == "--nack-ms") a.nack_ms = std::atoi(val());
    else if (k == "--udp-buffer") a.udp_buffer = uint32_t(std::strtoul(val(), nullptr, 10));
    else if (k == "--shm-segment") a.shm_segment = uint32_t(std::strtoul(val(), nullptr, 10));
    else usage();
  }
  if (a.transport != "shm" && a.transport != "udp") usage();
  if (a.size < 32) usage();
  return a;
}

Locator_t loopback() {
  Locator_t loc;
  IPLocator::setIPv4(loc, "127.0.0.1");
  loc.port = 0;
  return loc;
}

// The driver's transports.cpp, shm and udp cases.
DomainParticipantQos participant_qos(const Args &a) {
  DomainParticipantQos qos;
  qos.transport().use_builtin_transports = false;
  if (a.transport == "shm") {
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
    wq.reliable_writer_qos().times.nackResponseDelay = Duration_t(0, uint32_t(a.nack_ms) * 1'000'000u);
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
    // After the first sample, 5 s of silence (longer than the 3 s heartbeat) ends the run; before it, wait_s.
    const double idle = seconds_since(idle_since);
    if (idle > (received > 0 ? 5.0 : idle_limit)) break;
    r->wait_for_unread_message(Duration_t(0, 100'000'000));
  }
  SampleLostStatus lost;
  SampleRejectedStatus rejected;
  r->get_sample_lost_status(lost);
  r->get_sample_rejected_status(rejected);
  const double span = std::chrono::duration<double>(last - first).count();
  std::printf("sub: received %llu, last seq %llu, missing %llu in %llu gaps, out of order %llu, "
              "sample_lost %d, sample_rejected %d, %.0f samples/s\n",
              (unsigned long long)received, (unsigned long long)(expected ? expected - 1 : 0),
              (unsigned long long)gaps, (unsigned long long)gap_events,
              (unsigned long long)out_of_order, lost.total_count, rejected.total_count,
              span > 0 ? double(received) / span : 0.0);
  for (uint64_t i = 0; i < gap_events && i < 8; ++i)
    std::printf("sub: gap at seq %llu\n", (unsigned long long)first_gaps[i]);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const Args a = parse(argc, argv);
  return a.role == "pub" ? run_pub(a) : run_sub(a);
}
