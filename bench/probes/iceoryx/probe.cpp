// Bare iceoryx 2.0 ping-pong through RouDi: ping publishes on ("psbench_probe", TAG, "ping")
// with an UntypedPublisher and takes the echo on ("psbench_probe", TAG, "pong") with an
// UntypedSubscriber; pong the reverse. As the iceoryx driver's defaults (best_effort,
// volatile, history unset, notify wait): DISCARD_OLDEST_DATA on both sides, queue
// capacity 256, no publisher history, a WaitSet<1> on the subscriber's HAS_DATA state,
// the subscriber subscribed only after it is attached; a write loans a chunk of exactly
// SIZE bytes, copies the message in and publishes it; a take holds the chunk itself
// until the next round (pong echoes by copying the taken chunk into a new loan). Ping
// repeats its first message until pong answers, then sends SIZE-byte messages
// closed-loop for SECONDS and prints "p50_us p99_us count" (nearest rank).
// Usage: iceoryx_probe ping|pong TAG SIZE SECONDS   (RouDi must be running)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/mepoo/chunk_header.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "rtt.hpp"  // bench/probes/common

using clk = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "iceoryx_probe: %s\n", what);
  std::exit(1);
}

iox::capro::ServiceDescription service(const std::string &tag, const char *event) {
  using Id = iox::capro::IdString_t;
  return {Id(iox::cxx::TruncateToCapacity, "psbench_probe"),
          Id(iox::cxx::TruncateToCapacity, tag.c_str()), Id(iox::cxx::TruncateToCapacity, event)};
}

size_t payload_size(const void *payload) {
  return iox::mepoo::ChunkHeader::fromUserPayload(payload)->userPayloadSize();
}

void write(iox::popo::UntypedPublisher &pub, const void *data, size_t len) {
  auto loaned = pub.loan(static_cast<uint32_t>(len));
  if (loaned.has_error())
    die("loaning a chunk failed (is RouDi's mempool for this size exhausted or missing?)");
  std::memcpy(loaned.value(), data, len);
  pub.publish(loaned.value());
}

// The next sample (the driver's take in wait mode: try, then wait on the WaitSet and try
// again); nullptr when `timeout` passes without one.
const void *take(iox::popo::UntypedSubscriber &sub, iox::popo::WaitSet<1> &ws,
                 std::chrono::milliseconds timeout) {
  const auto end = clk::now() + timeout;
  for (;;) {
    auto taken = sub.take();
    if (!taken.has_error()) return taken.value();
    if (taken.get_error() != iox::popo::ChunkReceiveResult::NO_CHUNK_AVAILABLE)
      die("the subscriber holds too many chunks");
    const auto left =
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - clk::now()).count();
    if (left <= 0) return nullptr;
    ws.timedWait(iox::units::Duration::fromNanoseconds(static_cast<uint64_t>(left)));
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: iceoryx_probe ping|pong TAG SIZE SECONDS\n");
    return 2;
  }
  const bool ping = std::strcmp(argv[1], "ping") == 0;
  const std::string tag = argv[2];
  const size_t size = std::strtoul(argv[3], nullptr, 10);
  const double seconds = std::strtod(argv[4], nullptr);
  if (size < 2) die("SIZE must be at least 2 bytes (1 byte is the end marker)");

  iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kWarn,
                                                           iox::log::LogLevelOutput::kHideLogLevel);
  const std::string name = std::string("iceoryx_probe_") + argv[1] + "_" + std::to_string(getpid());
  iox::runtime::PoshRuntime::initRuntime(
      iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name.c_str()));
  {
    iox::popo::PublisherOptions po;
    po.historyCapacity = 0;
    po.offerOnCreate = true;
    po.subscriberTooSlowPolicy = iox::popo::ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA;
    iox::popo::UntypedPublisher pub(service(tag, ping ? "ping" : "pong"), po);
    iox::popo::SubscriberOptions so;
    so.queueCapacity = 256;
    so.historyRequest = 0;
    so.subscribeOnCreate = false;
    so.queueFullPolicy = iox::popo::QueueFullPolicy::DISCARD_OLDEST_DATA;
    iox::popo::UntypedSubscriber sub(service(tag, ping ? "pong" : "ping"), so);
    iox::popo::WaitSet<1> ws;
    if (ws.attachState(sub, iox::popo::SubscriberState::HAS_DATA).has_error())
      die("attaching to the WaitSet failed");
    sub.subscribe();

    std::vector<char> msg(size, 'x');
    if (!ping) {
      for (int idle = 0;
           ;) {  // echo until the 1-byte end marker; give up after 10 minutes without a sample
        const void *in = take(sub, ws, std::chrono::milliseconds(1000));
        if (in == nullptr) {
          if (++idle == 600) die("no message from ping for 10 minutes");
          continue;
        }
        idle = 0;
        const size_t len = payload_size(in);
        if (len == 1) {
          sub.release(in);
          break;
        }
        write(pub, in, len);
        sub.release(in);
      }
    } else {
      for (int tries = 0;; ++tries) {  // until RouDi has connected both ways (at most 50 x 200 ms)
        if (tries == 50) die("no echo from pong within 10 s");
        write(pub, msg.data(), size);
        if (const void *in = take(sub, ws, std::chrono::milliseconds(200))) {
          sub.release(in);
          break;
        }
      }
      // Late echoes of the repeated first message would pair with the wrong round: drain them.
      while (const void *in = take(sub, ws, std::chrono::milliseconds(200))) sub.release(in);
      std::vector<long long> rtt;
      const auto end = clk::now() + std::chrono::duration<double>(seconds);
      while (clk::now() < end) {
        const auto t0 = clk::now();
        write(pub, msg.data(), size);
        const void *in = take(sub, ws, std::chrono::milliseconds(10000));
        if (in == nullptr) die("no echo within 10 s");
        rtt.push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
        sub.release(in);
      }
      write(pub, "", 1);
      probe::print_rtt_line(rtt);  // common/rtt.hpp
      std::fflush(stdout);
    }
    ws.detachState(sub, iox::popo::SubscriberState::HAS_DATA);
  }
  return 0;
}
