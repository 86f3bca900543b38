// A DataWriter on one topic with the sample it writes from.
#ifndef PSBENCH_FASTDDS_WRITER_H
#define PSBENCH_FASTDDS_WRITER_H

#include <fastdds/dds/publisher/DataWriter.hpp>
#include <memory>

#include "context.h"
#include "samples.h"

namespace psbfastdds {

class Writer {
 public:
  // Throws psb::sdk::Error if the writer cannot be made.
  Writer(Context &ctx, const char *topic);
  ~Writer();
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  void write(const void *data, size_t len);
  int matched() const;  // matched readers
  // ABI drain: DataWriter::wait_for_acknowledgments: true once every matched reliable
  // reader acknowledged all samples (best effort: once nothing is left unsent), false
  // at the timeout; throws on an error.
  bool drain(int64_t timeout_ns);

 private:
  void tear_down() noexcept;

  Context &ctx_;
  eprosima::fastdds::dds::Topic *topic_ = nullptr;
  eprosima::fastdds::dds::DataWriter *writer_ = nullptr;
  std::unique_ptr<Sample> sample_;
};

}  // namespace psbfastdds

#endif
