// Builds and writes one message: payload pattern first (outside the timed interval),
// then the timestamp, then the write. Used by ping and pub.
#pragma once
#include <psbench/driver.h>

#include <string>
#include <vector>

#include "clock.hpp"
#include "message.hpp"
#include "role.hpp"

namespace psb {

class Sender {
 public:
  // flush_each: hand every message to the driver's flush (if it has one) right after
  // writing it, because the caller is about to wait; false only for a publisher writing
  // back to back, where batching is the point. Handshakes and end markers always are.
  Sender(const RoleEnv &env, psb_writer *writer, bool flush_each = true)
      : d_(env.driver),
        writer_(writer),
        size_(env.node.size),
        writer_id_(env.writer_id),
        pattern_(env.node.check_pattern),
        loan_(env.node.loan),
        flush_each_(flush_each && env.driver.flush),
        flush_control_(env.driver.flush != nullptr),
        buf_(env.node.size, 0) {}

  // intended_ns 0: closed loop, the intended time is the send time. Returns the send
  // time written into the header, or -1 when the write failed (counted in counts).
  int64_t send(uint64_t seq, uint32_t flags, int64_t intended_ns, RoleCounts &counts) {
    uint8_t *buf = buf_.data();
    psb_error err;
    if (loan_) {
      buf = static_cast<uint8_t *>(d_.loan(writer_, size_, &err));
      if (!buf) return write_failed(err, counts);
    }
    if (pattern_) fill_pattern(buf, size_, seq);
    int64_t t = now_ns();
    write_header(buf, MessageHeader{seq, t, intended_ns ? intended_ns : t, writer_id_,
                                    flags | (pattern_ ? kFlagPattern : 0u)});
    int rc = loan_ ? d_.write_loan(writer_, buf, size_, &err) : d_.write(writer_, buf, size_, &err);
    if (rc == 0 && (flush_each_ || (flush_control_ && (flags & (kFlagHandshake | kFlagEnd)))))
      rc = d_.flush(writer_, &err);
    if (rc != 0) return write_failed(err, counts);
    return t;
  }

  const std::string &first_error() const { return first_error_; }

 private:
  int64_t write_failed(const psb_error &err, RoleCounts &counts) {
    if (counts.write_errors++ == 0) first_error_ = err.message;
    return -1;
  }

  const psb_driver &d_;
  psb_writer *writer_;
  size_t size_;
  uint32_t writer_id_;
  bool pattern_, loan_, flush_each_, flush_control_;
  std::vector<uint8_t> buf_;
  std::string first_error_;
};

// Sends the end marker a few times, 1, 5 and 20 ms apart, so a best-effort peer that is
// still busy with the last messages sees one. The pause comes first: sent right behind
// the last message, an end marker would take its place in a keep_last 1 reader history
// before the reader took it. Not counted: once the peer has seen the first, the later
// ones may find no reader.
inline void send_end_markers(Sender &s, uint64_t measured_sent) {
  RoleCounts scratch;
  for (long pause_ms : {1, 5, 20}) {
    timespec ts{0, pause_ms * 1'000'000};
    nanosleep(&ts, nullptr);
    s.send(measured_sent, kFlagEnd, 0, scratch);
  }
}

}  // namespace psb
