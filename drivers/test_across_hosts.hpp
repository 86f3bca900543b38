// For a driver's GoogleTest: a run across hosts (ABI 6) with this host's lo, 127.0.0.1,
// as the local address and the only peer, so that one process can show that the
// middleware takes the configuration the driver makes of it and delivers over it. Real
// crossings (two emulated hosts) are tests/test_cross_hosts_*.py's.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "driver_under_test.hpp"
#include "test_config.hpp"
#include "test_received.hpp"

namespace psb_test {

// c (its transport and strings set) across hosts on lo: check() accepts it, and a writer
// and a reader on topic, each in a context of its own, match and deliver 64 bytes intact.
inline void expect_delivery_across_hosts_on_loopback(psb_config &c, const std::string &topic) {
  static const char *const peers[] = {"127.0.0.1", nullptr};
  c.local_address = "127.0.0.1";
  c.peer_addresses = peers;
  const psb_driver &d = driver_under_test();
  psb_error err{};
  ASSERT_EQ(check(d, &c, &err), 0) << err.message;
  Owned o;
  psb_context *a = o.open(&c), *b = o.open(&c);
  ASSERT_TRUE(a && b) << o.err.message;
  psb_writer *w = o.writer(a, topic);
  psb_reader *r = o.reader(b, topic);
  ASSERT_TRUE(w && r) << o.err.message;
  ASSERT_TRUE(wait_until([&] { return d.matched_readers(w) >= 1 && d.matched_writers(r) >= 1; }));
  std::vector<uint8_t> m(64);
  for (size_t i = 0; i < m.size(); ++i) m[i] = uint8_t(i * 13 + 3);
  std::fill(m.begin() + 28, m.begin() + 32, 0);  // the header's flags: an ordinary message
  ASSERT_EQ(d.write(w, m.data(), m.size(), &o.err), 0) << o.err.message;
  EXPECT_EQ(take_one(r, 1'000'000'000), m);
}

// The same for a test's config that owns its strings (get(), c, run_id, transport).
template <class Config>
void expect_delivery_across_hosts_on_loopback(Config &cfg) {
  SCOPED_TRACE(cfg.transport);
  cfg.get();
  expect_delivery_across_hosts_on_loopback(cfg.c, "psb_" + cfg.run_id + "_hosts");
}

}  // namespace psb_test
