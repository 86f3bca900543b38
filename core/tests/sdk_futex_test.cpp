// psbench/sdk_futex.hpp: futex waits and wake-ups, and the announce-then-sleep handshake
// (the node's arrival signal, shm's ring), within a process and across a fork.
#include "psbench/sdk_futex.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

namespace {

using psb::sdk::FutexScope;

// Whether process pid sleeps (state S in /proc/PID/stat): the child below only sleeps in
// its futex wait, which a wake-up must then reach (a changed word alone would not do).
bool sleeping(pid_t pid) {
  char path[64], line[256] = "";
  std::snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
  FILE *f = std::fopen(path, "r");
  if (f == nullptr) return false;
  const bool read = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  const char *end = std::strrchr(line, ')');  // after the command name, which may hold spaces
  return read && end != nullptr && end[1] == ' ' && end[2] == 'S';
}

TEST(SdkFutex, WaitReturnsAtOnceWhenTheWordDiffers) {
  std::atomic<uint32_t> word{1};
  psb::sdk::futex_wait(&word, 0, -1);  // no limit: only the differing value ends it
  EXPECT_EQ(word.load(), 1u);
}

TEST(SdkFutex, WaitEndsAtItsTimeoutWithTheWordUnchanged) {
  std::atomic<uint32_t> word{0};
  psb::sdk::futex_wait(&word, 0, 1'000'000);
  EXPECT_EQ(word.load(), 0u);
}

TEST(SdkFutex, SleepOnDoesNotSleepWhenStaySaysNoAndClearsItsAnnouncement) {
  std::atomic<uint32_t> word{7}, waiting{0};
  uint32_t seen = 0;
  psb::sdk::sleep_on(&word, &waiting, -1, [&](uint32_t v) {
    seen = v;
    EXPECT_EQ(waiting.load(), 1u) << "announced before the word is read";
    return false;
  });
  EXPECT_EQ(seen, 7u);
  EXPECT_EQ(waiting.load(), 0u);
}

TEST(SdkFutex, WakeIfWaitingClearsTheAnnouncementAndLeavesAQuietWordAlone) {
  std::atomic<uint32_t> word{0}, waiting{1};
  psb::sdk::wake_if_waiting(&word, &waiting);  // nobody sleeps yet: the wake-up finds none
  EXPECT_EQ(waiting.load(), 0u);
  psb::sdk::wake_if_waiting(&word, &waiting);
  EXPECT_EQ(waiting.load(), 0u);
  EXPECT_EQ(word.load(), 0u);
}

TEST(SdkFutex, WakeIfWaitingWakesAThreadThatSleepsWithoutALimit) {
  std::atomic<uint32_t> word{0}, waiting{0};
  uint32_t woke_to = 0;
  std::thread sleeper([&] {
    while (word.load() == 0)
      psb::sdk::sleep_on(&word, &waiting, -1, [](uint32_t v) { return v == 0; });
    woke_to = word.load();
  });
  while (waiting.load() == 0) std::this_thread::yield();  // it announced its sleep
  word.store(5, std::memory_order_seq_cst);
  psb::sdk::wake_if_waiting(&word, &waiting);
  sleeper.join();  // a lost wake-up would hang here (the test's timeout reports it)
  EXPECT_EQ(woke_to, 5u);
  EXPECT_EQ(waiting.load(), 0u);
}

// Shared scope: the words in a MAP_SHARED mapping, the sleeper a forked child. A private
// futex would not reach it; its alarm ends it (and the test fails) instead of leaving it.
TEST(SdkFutex, SharedScopeWakesAnotherProcess) {
  struct Words {
    std::atomic<uint32_t> word, waiting;
  };
  void *m = mmap(nullptr, sizeof(Words), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto *w = new (m) Words{{0}, {0}};
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);
    while (w->word.load() == 0)
      psb::sdk::sleep_on(
          &w->word, &w->waiting, -1, [](uint32_t v) { return v == 0; }, FutexScope::shared);
    _exit(w->word.load() == 3 ? 0 : 1);
  }
  while (w->waiting.load() == 0 || !sleeping(child)) std::this_thread::yield();
  w->word.store(3, std::memory_order_seq_cst);
  psb::sdk::wake_if_waiting(&w->word, &w->waiting, FutexScope::shared);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "the child was not woken (status " << status << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  munmap(m, sizeof(Words));
}

}  // namespace
