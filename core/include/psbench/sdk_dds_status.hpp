// A DDS entity's communication statuses as the driver ABI reports them, for the drivers on a
// DDS C API (cyclonedds, opensplice), whose get_<status>_status(entity, &status) calls
// return a DDS return code: matched() for Writer::matched() and Reader::matched() (the
// publication's or subscription's matched status), put_sample_statuses() for a Reader's
// counters() (its sample lost and sample rejected statuses); and put_sample_statuses() for
// a DataReader of a DDS C++ API (fastdds, opendds), reader.get_<status>_status(status).
#ifndef PSBENCH_SDK_DDS_STATUS_HPP
#define PSBENCH_SDK_DDS_STATUS_HPP

#include <cstdint>
#include <type_traits>

#include "psbench/sdk.hpp"

namespace psb::sdk::dds {

// RETCODE_OK is 0 in every DDS language mapping.
template <class Rc>
constexpr bool status_ok(Rc rc) noexcept {
  return rc == Rc{0};
}

// The entity's matched status's current_count (a writer's matched readers, a reader's
// matched writers), or -1, the ABI's "cannot tell", when get fails.
template <class Entity, class Status, class Rc>
int matched(std::type_identity_t<Entity> entity, Rc (*get)(Entity, Status *)) {
  Status st{};
  return status_ok(get(entity, &st)) ? static_cast<int>(st.current_count) : -1;
}

// A reader's counters sample_lost and sample_rejected: the total counts of its SAMPLE_LOST
// and SAMPLE_REJECTED statuses, each left out when its get fails.
template <class Entity, class Lost, class Rejected, class Rc>
void put_sample_statuses(CounterSink put, std::type_identity_t<Entity> reader,
                         Rc (*get_lost)(Entity, Lost *), Rc (*get_rejected)(Entity, Rejected *)) {
  Lost lost{};
  if (status_ok(get_lost(reader, &lost))) put("sample_lost", uint64_t(lost.total_count));
  Rejected rejected{};
  if (status_ok(get_rejected(reader, &rejected)))
    put("sample_rejected", uint64_t(rejected.total_count));
}

// The same counters from a DataReader of a DDS C++ API, classic (OpenDDS) or modern (Fast
// DDS) alike: Lost and Rejected are its SampleLostStatus and SampleRejectedStatus.
template <class Lost, class Rejected, class DataReader>
void put_sample_statuses(CounterSink put, DataReader &reader) {
  Lost lost{};
  if (status_ok(reader.get_sample_lost_status(lost)))
    put("sample_lost", uint64_t(lost.total_count));
  Rejected rejected{};
  if (status_ok(reader.get_sample_rejected_status(rejected)))
    put("sample_rejected", uint64_t(rejected.total_count));
}

}  // namespace psb::sdk::dds

#endif  // PSBENCH_SDK_DDS_STATUS_HPP
