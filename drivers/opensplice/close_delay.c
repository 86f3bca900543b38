// A fault for tests/test_driver_opensplice.py, preloaded into a node (LD_PRELOAD): the
// in-process spliced thread, closing its domain after it left the participant list, is
// held 300 ms there, once per thread, which widens the window in which the application
// can take u_domainClose's global mutex first (fixups/close-waits-for-spliced.patch).
// OpenSplice's own calls cannot be wrapped (they bind inside libddskernel), but its
// mutexes are glibc's: the wrapper holds the thread at its first lock inside
// u_domainClose, found by name in its stack. Never built into a driver.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

typedef int (*lock_fn)(pthread_mutex_t *);

static int called_from(const char *function) {
  void *frames[4];
  const int n = backtrace(frames, 4);
  for (int i = 1; i < n; i++) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_sname && strcmp(info.dli_sname, function) == 0)
      return 1;
  }
  return 0;
}

int pthread_mutex_lock(pthread_mutex_t *mutex) {
  static lock_fn real;
  static __thread int held, inside;  // inside: backtrace() may lock too
  if (!real) real = (lock_fn)dlsym(RTLD_NEXT, "pthread_mutex_lock");
  if (!held && !inside) {
    char name[16] = "";
    prctl(PR_GET_NAME, name);
    if (strcmp(name, "spliced") == 0) {
      inside = 1;
      if (called_from("u_domainClose")) {
        static const char said[] = "close_delay: spliced held 300 ms in u_domainClose\n";
        held = 1;
        (void)!write(2, said, sizeof said - 1);
        const struct timespec wait = {0, 300000000};
        nanosleep(&wait, NULL);
      }
      inside = 0;
    }
  }
  return real(mutex);
}
