// A DataReader on one topic, the sample it deserializes into and the contiguous
// buffer it hands the node. In listener mode a DataReaderListener calls the node
// back from Fast DDS's receive thread.
#ifndef PSBENCH_FASTDDS_READER_H
#define PSBENCH_FASTDDS_READER_H

#include <atomic>
#include <memory>

#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>

#include "context.h"
#include "psbench/driver.h"
#include "samples.h"

namespace psbfastdds {

class Reader {
 public:
  static Reader *create(Context *ctx, const char *topic, psb_on_data on_data, void *user,
                        psb_error *err);
  ~Reader();

  // 1 = a message in *data/*len, 0 = none within timeout_ns (0: do not block;
  // negative: no limit), -1 = error.
  int take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err);
  int matched_writers() const;
  // ABI counters: the reader's SAMPLE_LOST and SAMPLE_REJECTED statuses (total counts).
  void counters(psb_put_counter put, void *user) const;

 private:
  class Listener;
  explicit Reader(Context *ctx);

  // Takes the next valid sample into buffer_: 1, 0 (none), -1 (take failed) or
  // kRejected (a sample was taken but is not what this reader expects); err set.
  static constexpr int kRejected = -2;
  int take_one(psb_error *err);
  void on_data_available();  // listener thread

  Context *ctx_;
  eprosima::fastdds::dds::Topic *topic_ = nullptr;
  eprosima::fastdds::dds::DataReader *reader_ = nullptr;
  std::unique_ptr<Sample> sample_;
  eprosima::fastdds::dds::SampleInfo info_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_ = 0;
  size_t len_ = 0;

  std::unique_ptr<Listener> listener_;
  psb_on_data on_data_ = nullptr;
  void *user_ = nullptr;
  // destroy waits for a callback in progress; a later one returns at once.
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_callback_{0};
};

}  // namespace psbfastdds

#endif
