// psbench-node: loads one driver, runs one or two roles, writes samples and summaries.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "check_mode.hpp"
#include "clock_echo.hpp"
#include "config.hpp"
#include "driver_loader.hpp"
#include "realtime.hpp"
#include "refusals.hpp"
#include "role.hpp"
#include "start_gate.hpp"
#include "summary.hpp"
#include "thread_facts.hpp"
#include "wait_port.hpp"

namespace {

using namespace psb;

int fail(int code, const std::string &msg) {
  std::fprintf(stderr, "psbench-node: %s\n", msg.c_str());
  return code;
}

void on_stop_signal(int) { g_interrupted.store(true); }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;  // no SA_RESTART: a blocked read returns and sees the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

// Last resort when a driver call never returns: leave at --timeout plus a grace period.
void start_watchdog(double timeout_s) {
  std::thread([timeout_s] {
    std::this_thread::sleep_for(std::chrono::duration<double>(timeout_s + 10));
    static const char msg[] =
        "psbench-node: still running 10 s past --timeout; a driver call hangs\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(3);
  }).detach();
}

// The cross-process barrier: say READY, wait for GO.
bool stdio_barrier() {
  std::printf("READY\n");
  std::fflush(stdout);
  char line[64];
  if (!std::fgets(line, sizeof line, stdin)) return false;
  return std::strncmp(line, "GO", 2) == 0;
}

int exit_code_of(const std::vector<RoleResult> &results) {
  int code = 0;
  for (auto &r : results) {
    if (r.exit_code == 1) return 1;
    if (r.exit_code == 3) code = 3;
    if (r.ended_by == "interrupted" && code == 0) code = 130;
  }
  return code;
}

}  // namespace

int main(int argc, char **argv) {
  const int64_t started_ns = now_ns();
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check-stdin") == 0) return run_check_stdin();
    if (std::strcmp(argv[i], "--clock-echo") == 0) return run_clock_echo();
    if (std::strcmp(argv[i], "--wait-port") == 0) return run_wait_port(argc, argv);
    if (std::strcmp(argv[i], "--check") == 0) return run_check(argc, argv);
  }
  NodeConfig node;
  try {
    node = parse_args(argc, argv);
  } catch (const UsageError &e) {
    return fail(2, e.what());
  }
  std::unique_ptr<LoadedDriver> driver;
  try {
    driver = std::make_unique<LoadedDriver>(node.driver_path);
  } catch (const RefusedError &e) {
    return fail(2, e.what());
  }
  if (node.describe) {
    std::printf("%s\n", describe_json(*driver).c_str());
    return 0;
  }
  DriverConfig dcfg(node, driver->table().caps);
  try {
    refuse_unsupported(*driver, node, dcfg.get());
  } catch (const RefusedError &e) {
    return fail(2, e.what());
  }
  std::error_code ec;
  std::filesystem::create_directories(node.out_dir, ec);
  if (ec) return fail(2, "--out: cannot create " + node.out_dir + ": " + ec.message());

  install_signal_handlers();
  ProcessFacts facts;
  facts.started_ns = started_ns;
  facts.placement = node.intra_process() ? "intra-process" : "inter-process";
  std::optional<DmaLatencyHold> dma;
  try {
    if (node.mlockall) lock_all_memory();
    facts.mlockall = node.mlockall;
    if (node.dma_latency) dma.emplace();
    facts.dma_latency = node.dma_latency;
    if (node.pin == PinMode::process) {
      // Before any role opens its driver: every thread started from here on inherits it.
      std::vector<int> cpus;
      for (const auto &[role, cpu] : node.cpu) cpus.push_back(cpu);
      confine_process(cpus);
    }
  } catch (const RealtimeError &e) {
    return fail(2, e.what());
  }

  const int64_t deadline = now_ns() + seconds_to_ns(node.timeout_s);
  start_watchdog(node.timeout_s);
  StartGate gate(int(node.roles.size()));
  std::vector<RoleResult> results(node.roles.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < node.roles.size(); ++i) {
    threads.emplace_back([&, i] {
      const uint32_t writer_id = node.roles[i] == Role::pub ? node.writer_id : uint32_t(i + 1);
      RoleEnv env{driver->table(), node, dcfg.get(), gate, deadline, writer_id};
      results[i] = run_role(node.roles[i], env);
    });
  }
  bool go = gate.wait_all_arrived();
  bool barrier_broken = false;
  if (go && node.barrier == BarrierKind::stdio) {
    go = stdio_barrier();
    barrier_broken = !go;
  }
  gate.release(go);
  for (auto &t : threads) t.join();

  facts.usage = process_usage();
  int code = exit_code_of(results);
  for (auto &r : results) {
    if (barrier_broken && r.error.empty()) {
      r.error = g_interrupted ? "interrupted before the start" : "barrier: no GO line on stdin";
      r.exit_code = 1;
      code = 1;
    }
    if (!r.error.empty()) fail(0, std::string(role_name(r.role)) + ": " + r.error);
    if (!r.warning.empty()) fail(0, std::string(role_name(r.role)) + ": warning: " + r.warning);
    try {
      write_role_outputs(node, *driver, dcfg, facts, r);
    } catch (const std::exception &e) {
      code = fail(1, e.what());
    }
  }
  return code;
}
