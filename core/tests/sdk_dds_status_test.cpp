// psbench/sdk_dds_status.hpp: a DDS C API's matched, sample lost and sample rejected
// statuses as the driver ABI reports them, read through get functions of that API's shape
// (entity, &status -> return code) whose answers the tests choose.
#include "psbench/sdk_dds_status.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

using Entity = int;
using ReturnCode = int;
constexpr ReturnCode kError = 1;  // DDS_RETCODE_ERROR

struct MatchedStatus {
  int total_count;
  int total_count_change;
  unsigned current_count;
};
struct LostStatus {
  int total_count;
};
struct RejectedStatus {
  unsigned total_count;
};

// Entity 1 answers, any other fails.
ReturnCode get_matched(Entity e, MatchedStatus *st) {
  if (e != 1) return kError;
  *st = {7, 0, 3};
  return 0;
}
ReturnCode get_lost(Entity e, LostStatus *st) {
  if (e != 1) return kError;
  st->total_count = 5;
  return 0;
}
ReturnCode get_rejected_fails(Entity, RejectedStatus *) { return kError; }
ReturnCode get_rejected(Entity e, RejectedStatus *st) {
  if (e != 1) return kError;
  st->total_count = 2;
  return 0;
}

std::map<std::string, uint64_t> counters_of(Entity e,
                                            ReturnCode (*rejected)(Entity, RejectedStatus *)) {
  std::map<std::string, uint64_t> got;
  const psb::sdk::CounterSink put{[](void *user, const char *name, uint64_t value) {
                                    (*static_cast<std::map<std::string, uint64_t> *>(user))[name] =
                                        value;
                                  },
                                  &got};
  psb::sdk::dds::put_sample_statuses(put, e, &get_lost, rejected);
  return got;
}

TEST(SdkDdsStatus, MatchedIsTheCurrentCountOrMinusOneWhenTheMiddlewareCannotTell) {
  EXPECT_EQ(psb::sdk::dds::matched(1, &get_matched), 3);
  EXPECT_EQ(psb::sdk::dds::matched(2, &get_matched), -1);
}

TEST(SdkDdsStatus, LostAndRejectedAreTheTotalCountsEachLeftOutWhenItsGetFails) {
  EXPECT_EQ(counters_of(1, &get_rejected),
            (std::map<std::string, uint64_t>{{"sample_lost", 5}, {"sample_rejected", 2}}));
  EXPECT_EQ(counters_of(1, &get_rejected_fails),
            (std::map<std::string, uint64_t>{{"sample_lost", 5}}));
  EXPECT_TRUE(counters_of(2, &get_rejected).empty());
}

}  // namespace
