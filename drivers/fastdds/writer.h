// A DataWriter on one topic with the sample it writes from.
#ifndef PSBENCH_FASTDDS_WRITER_H
#define PSBENCH_FASTDDS_WRITER_H

#include <memory>

#include <fastdds/dds/publisher/DataWriter.hpp>

#include "context.h"
#include "psbench/driver.h"
#include "samples.h"

namespace psbfastdds {

class Writer {
 public:
  static Writer *create(Context *ctx, const char *topic, psb_error *err);
  ~Writer();

  int write(const void *data, size_t len, psb_error *err);
  int matched_readers() const;
  // ABI drain: DataWriter::wait_for_acknowledgments: 1 once every matched reliable
  // reader acknowledged all samples (best effort: once nothing is left unsent), 0 at
  // the timeout, -1 on an error.
  int drain(int64_t timeout_ns, psb_error *err);

 private:
  explicit Writer(Context *ctx) : ctx_(ctx) {}

  Context *ctx_;
  eprosima::fastdds::dds::Topic *topic_ = nullptr;
  eprosima::fastdds::dds::DataWriter *writer_ = nullptr;
  std::unique_ptr<Sample> sample_;
};

}  // namespace psbfastdds

#endif
