// psbench driver SDK: what a broker client does around its own socket, written once
// (redis, rabbitmq and mqtt each had a copy): the monotonic clock in ns, a message kept
// for later (format), a readiness wait that a listener's stop ends at once (StopFd,
// wait_readable, pause_until), all of a message on a socket without SIGPIPE (send_all),
// and the pace of reconnection attempts to a broker that went away (RetryPacer).
// Optional, like the rest of the SDK; nothing here allocates on the timed path.
#ifndef PSBENCH_SDK_CONNECTION_HPP
#define PSBENCH_SDK_CONNECTION_HPP

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psb::sdk {

// CLOCK_MONOTONIC in nanoseconds: deadlines that a changed wall clock cannot move.
inline int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// printf into a string of at most a psb_error's length: a message kept to be thrown later
// (a broken connection's, reported by every call after it).
__attribute__((format(printf, 1, 2))) inline std::string format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string text = detail::vformat(fmt, ap);
  va_end(ap);
  return text;
}

// An eventfd that ends a listener thread's wait at once (wait_readable, pause_until): the
// reader's destructor signal()s it, then joins the thread. Throws Error if none can be made.
class StopFd {
 public:
  StopFd() : fd_(eventfd(0, EFD_CLOEXEC)) {
    if (fd_ < 0) fail("eventfd for the listener: %s", std::strerror(errno));
  }
  StopFd(const StopFd &) = delete;
  StopFd &operator=(const StopFd &) = delete;
  ~StopFd() { ::close(fd_); }
  int fd() const noexcept { return fd_; }
  void signal() const noexcept {
    const uint64_t one = 1;
    (void)!::write(fd_, &one, sizeof one);
  }

 private:
  int fd_;
};

// Waits until fd is readable, or stop_fd (if >= 0) is, or timeout_ns passes (negative: no
// limit). 1 = fd readable (or hung up: the read that follows says which), 0 = timeout or a
// signal, 2 = stop_fd, -1 = error (errno).
inline int wait_readable(int fd, int stop_fd, int64_t timeout_ns) noexcept {
  pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  timespec ts{}, *tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
    tsp = &ts;
  }
  const int n = ppoll(fds, stop_fd >= 0 ? 2 : 1, tsp, nullptr);
  if (n < 0) return errno == EINTR ? 0 : -1;
  if (n == 0) return 0;
  if (stop_fd >= 0 && fds[1].revents != 0) return 2;
  return 1;
}

// Sleeps until until_ns (now_ns()'s clock), or until stop_fd (if >= 0) is signalled.
// false = stopped or interrupted by a signal.
inline bool pause_until(int64_t until_ns, int stop_fd) noexcept {
  const int64_t left = until_ns - now_ns();
  if (left <= 0) return true;
  timespec ts{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
  pollfd fd{stop_fd, POLLIN, 0};
  return ppoll(stop_fd >= 0 ? &fd : nullptr, stop_fd >= 0 ? 1 : 0, &ts, nullptr) == 0;
}

// Writes all of iov (advancing it) with MSG_NOSIGNAL, so a closed connection is an error and
// never a SIGPIPE, retrying after signals. SO_SNDTIMEO bounds one sendmsg(); a peer that
// takes a little now and then must not stretch the whole write past give_up_ns either.
// 0 = sent, otherwise the errno (EAGAIN: the time ran out before all of it was taken).
inline int send_all(int fd, iovec *iov, int iovcnt, int64_t give_up_ns) noexcept {
  while (iovcnt > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(iovcnt);
    const ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EWOULDBLOCK ? EAGAIN : errno;
    }
    auto left = static_cast<size_t>(n);
    while (iovcnt > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --iovcnt;
    }
    if (iovcnt > 0) {
      iov->iov_base = static_cast<char *>(iov->iov_base) + left;
      iov->iov_len -= left;
      if (now_ns() >= give_up_ns) return EAGAIN;
    }
  }
  return 0;
}

// How often an endpoint whose broker went away tries to connect again: at most one attempt
// per interval, never a busy loop (a waiting reader sleeps until the next one is due). The
// first attempt after a loss is due at once.
class RetryPacer {
 public:
  explicit RetryPacer(int64_t interval_ns = 100'000'000) noexcept : interval_ns_(interval_ns) {}
  bool due() const noexcept { return now_ns() >= next_ns_; }
  // Records an attempt now: the next is due one interval later.
  void attempted() noexcept { next_ns_ = now_ns() + interval_ns_; }
  // The connection was lost: an attempt is due at once.
  void lost() noexcept { next_ns_ = now_ns(); }
  int64_t next_ns() const noexcept { return next_ns_; }
  int64_t interval_ns() const noexcept { return interval_ns_; }
  // Sleeps until an attempt is due, or timeout_ns, whichever comes first.
  void sleep_until_due(int64_t timeout_ns) const noexcept {
    const int64_t ns = std::min(timeout_ns, next_ns_ - now_ns());
    if (ns <= 0) return;
    const timespec ts{static_cast<time_t>(ns / 1'000'000'000),
                      static_cast<long>(ns % 1'000'000'000)};
    nanosleep(&ts, nullptr);
  }

 private:
  int64_t interval_ns_;
  int64_t next_ns_ = 0;
};

}  // namespace psb::sdk

#endif  // PSBENCH_SDK_CONNECTION_HPP
