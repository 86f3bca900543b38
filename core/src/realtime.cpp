#include "realtime.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace psb {

void pin_current_thread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE)
    throw RealtimeError("--cpu: CPU " + std::to_string(cpu) + " does not exist");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (rc != 0)
    throw RealtimeError("--cpu: cannot pin to CPU " + std::to_string(cpu) + ": " +
                        std::strerror(rc) + " (is it online and in this process's cpuset?)");
}

void set_current_thread_fifo(int priority) {
  sched_param p{};
  p.sched_priority = priority;
  int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
  if (rc != 0)
    throw RealtimeError("--fifo: cannot set SCHED_FIFO priority " + std::to_string(priority) +
                        ": " + std::strerror(rc) + " (needs root or RLIMIT_RTPRIO)");
}

void lock_all_memory() {
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
    throw RealtimeError(std::string("--mlockall: ") + std::strerror(errno) +
                        " (needs root or a large enough RLIMIT_MEMLOCK)");
}

DmaLatencyHold::DmaLatencyHold() {
  fd_ = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw RealtimeError(std::string("--dma-latency: cannot open /dev/cpu_dma_latency: ") +
                        std::strerror(errno));
  int32_t zero = 0;
  if (write(fd_, &zero, sizeof zero) != sizeof zero) {
    int e = errno;
    close(fd_);
    fd_ = -1;
    throw RealtimeError(std::string("--dma-latency: cannot write 0: ") + std::strerror(e));
  }
}

DmaLatencyHold::~DmaLatencyHold() {
  if (fd_ >= 0) close(fd_);  // the kernel drops the request when the file closes
}

}  // namespace psb
