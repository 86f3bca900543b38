// A DataReader on one topic, the sample it deserializes into and the contiguous
// buffer it hands the node. In listener mode a DataReaderListener calls the node
// back from Fast DDS's receive thread.
#ifndef PSBENCH_FASTDDS_READER_H
#define PSBENCH_FASTDDS_READER_H

#include <atomic>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <memory>

#include "context.h"
#include "psbench/sdk.hpp"
#include "samples.h"

namespace psbfastdds {

class Reader {
 public:
  // Throws psb::sdk::Error if the reader cannot be made.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data);
  ~Reader();
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  // The SDK's take() tries, then waits (psb::sdk::take_waiting). try_take: true = a
  // message in data/len, false = none now; throws on an error (BadSample: not of this run).
  bool try_take(const void *&data, size_t &len);
  bool wait(int64_t timeout_ns);  // until an unread message may be there
  int matched() const;            // matched writers
  // ABI counters: the reader's SAMPLE_LOST and SAMPLE_REJECTED statuses (total counts).
  void counters(psb::sdk::CounterSink put) const;

 private:
  class Listener;

  void tear_down() noexcept;
  void on_data_available();  // listener thread

  Context &ctx_;
  eprosima::fastdds::dds::Topic *topic_ = nullptr;
  eprosima::fastdds::dds::DataReader *reader_ = nullptr;
  std::unique_ptr<Sample> sample_;
  eprosima::fastdds::dds::SampleInfo info_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_ = 0;

  std::unique_ptr<Listener> listener_;
  const psb::sdk::Listener on_data_;
  // destroy waits for a callback in progress; a later one returns at once.
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_callback_{0};
};

}  // namespace psbfastdds

#endif
