#include "config.hpp"

#include <arpa/inet.h>
#include <psbench/driver.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <random>
#include <string_view>

#include "named.hpp"

namespace psb {
namespace {

constexpr Named<uint32_t> kReliability[] = {{"best_effort", PSB_BEST_EFFORT},
                                            {"reliable", PSB_RELIABLE}};
constexpr Named<uint32_t> kDurability[] = {{"volatile", PSB_VOLATILE},
                                           {"transient_local", PSB_TRANSIENT_LOCAL},
                                           {"persistent", PSB_PERSISTENT}};
constexpr Named<uint32_t> kHistory[] = {{"keep_last", PSB_KEEP_LAST}, {"keep_all", PSB_KEEP_ALL}};
constexpr Named<uint32_t> kNotify[] = {
    {"listener", PSB_NOTIFY_LISTENER}, {"wait", PSB_NOTIFY_WAIT}, {"poll", PSB_NOTIFY_POLL}};
constexpr Named<Role> kRoles[] = {{"ping", Role::ping},   {"pong", Role::pong},
                                  {"pub", Role::pub},     {"sub", Role::sub},
                                  {"relay", Role::relay}, {"module", Role::module}};
constexpr Named<SendWait> kSendWait[] = {
    {"hybrid", SendWait::hybrid}, {"sleep", SendWait::sleep}, {"spin", SendWait::spin}};
constexpr Named<PinMode> kPinMode[] = {
    {"role", PinMode::role}, {"process", PinMode::process}, {"none", PinMode::none}};

uint64_t parse_u64(std::string_view arg, std::string_view v) {
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size())
    throw UsageError(std::string(arg) + ": '" + std::string(v) + "' is not a whole number");
  return out;
}

uint32_t parse_u32(std::string_view arg, std::string_view v) {
  uint64_t out = parse_u64(arg, v);
  if (out > 0xFFFFFFFFu)
    throw UsageError(std::string(arg) + ": '" + std::string(v) + "' is too large");
  return uint32_t(out);
}

// An IPv4 address in dotted form (what a host of the run has on its network).
std::string ipv4(std::string_view arg, std::string_view v) {
  in_addr parsed{};
  const std::string text(v);
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1)
    throw UsageError(std::string(arg) + ": '" + text + "' is not an IPv4 address, e.g. 198.18.0.2");
  return text;
}

double parse_seconds(std::string_view arg, std::string_view v) {
  double out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || !std::isfinite(out) || out < 0)
    throw UsageError(std::string(arg) + ": '" + std::string(v) + "' is not a non-negative number");
  return out;
}

Role parse_role(std::string_view v) { return parse_named(kRoles, "--role", v); }

std::vector<Role> parse_roles(std::string_view v) {
  std::vector<Role> roles;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string_view::npos) comma = v.size();
    roles.push_back(parse_role(v.substr(start, comma - start)));
    start = comma + 1;
  }
  for (size_t i = 0; i < roles.size(); ++i)
    for (size_t j = i + 1; j < roles.size(); ++j)
      if (roles[i] == roles[j]) throw UsageError("--role: a role is listed twice");
  return roles;
}

// drop=SEQ, dup=SEQ, reorder=SEQ or delay=SEQ:MICROSECONDS.
Injection parse_injection(std::string_view v) {
  const std::string fix = "; use drop=SEQ, dup=SEQ, reorder=SEQ or delay=SEQ:MICROSECONDS";
  size_t eq = v.find('=');
  if (eq == std::string_view::npos)
    throw UsageError("--inject: '" + std::string(v) + "' has no '='" + fix);
  std::string_view kind = v.substr(0, eq), rest = v.substr(eq + 1);
  Injection in{Injection::drop, 0};
  if (kind == "drop")
    in.kind = Injection::drop;
  else if (kind == "dup")
    in.kind = Injection::dup;
  else if (kind == "reorder")
    in.kind = Injection::reorder;
  else if (kind == "delay")
    in.kind = Injection::delay;
  else
    throw UsageError("--inject: '" + std::string(kind) + "' is not a fault" + fix);
  size_t colon = rest.find(':');
  if ((colon != std::string_view::npos) != (in.kind == Injection::delay))
    throw UsageError("--inject: '" + std::string(v) + "'" + fix);
  in.seq = parse_u64("--inject", rest.substr(0, colon));
  if (colon != std::string_view::npos)
    in.delay_ns = int64_t(parse_u64("--inject", rest.substr(colon + 1))) * 1000;
  return in;
}

// SUFFIX,SUFFIX,...: every topic of the run, each [A-Za-z0-9_]+ and once.
std::vector<std::string> parse_run_topics(std::string_view v) {
  std::vector<std::string> topics;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string_view::npos) comma = v.size();
    std::string topic(v.substr(start, comma - start));
    bool ok = !topic.empty();
    for (char ch : topic) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ok)
      throw UsageError("--run-topics: '" + topic +
                       "' is not a topic name of letters, digits and '_'; give "
                       "SUFFIX,SUFFIX,... e.g. scan,pose");
    if (std::find(topics.begin(), topics.end(), topic) != topics.end())
      throw UsageError("--run-topics: '" + topic + "' is listed twice; list each topic once");
    topics.push_back(std::move(topic));
    start = comma + 1;
  }
  return topics;
}

// A driver gives each listed topic its own port or id by its index in the list, so a
// topic of this node missing from it would have none.
void check_run_topics(const NodeConfig &c) {
  if (c.run_topics.empty()) return;
  for (const std::string &topic : c.own_topics())
    if (std::find(c.run_topics.begin(), c.run_topics.end(), topic) == c.run_topics.end())
      throw UsageError("--run-topics: topic '" + topic +
                       "' of this node is not among them; list every topic of the run, the "
                       "same list for every node");
}

std::string random_run_id() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 10; ++i) id += kAlphabet[rd() % (sizeof(kAlphabet) - 1)];
  return id;
}

void validate(NodeConfig &c) {
  if (c.driver_path.empty()) throw UsageError("--driver: required (path to libpsbench-<name>.so)");
  if (c.describe || c.check_stdin) return;
  if (c.roles.empty())
    throw UsageError(
        "--role: required (ping, pong, pub, sub, relay, module, or two joined by a comma)");
  if (c.out_dir.empty() && !c.check) throw UsageError("--out: required (directory for results)");
  for (char ch : c.run_id)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      throw UsageError("--run-id: use letters and digits only");
  if (c.run_id.empty()) c.run_id = random_run_id();
  validate_module(c, c.size_given);
  if (c.pin == PinMode::none && !c.cpu.empty())
    throw UsageError("--pin none: --cpu pins a role; leave --cpu out, or use --pin role|process");
  if (c.pin == PinMode::process && c.cpu.empty())
    throw UsageError(
        "--pin process: confines the node to the CPUs --cpu gives; give --cpu ROLE=CPU");
  if (c.size < 32 || c.size > (4u << 20))
    throw UsageError("--size: " + std::to_string(c.size) +
                     " is out of range; use 32 (header only) to 4194304 bytes");
  if (c.count && c.duration_s) throw UsageError("--count and --duration: give one, not both");
  if (!c.count && !c.duration_s) c.count = 10000;
  if (c.count && *c.count == 0) throw UsageError("--count: must be at least 1");
  if (c.duration_s && *c.duration_s <= 0) throw UsageError("--duration: must be more than 0");
  if (c.intra_process() && c.roles.size() != 2)
    throw UsageError("--role: intra-process placement takes two roles, e.g. ping,pong");
  if (!c.peers.empty() && c.address.empty())
    throw UsageError("--peer: give this node's own --address too");
  if (c.intra_process() && !c.address.empty())
    throw UsageError("--address: roles in one process are on one host; leave it out");
  if (c.history == PSB_KEEP_LAST && c.history_depth == 0)
    throw UsageError("--history: keep_last needs a depth of at least 1, e.g. keep_last:16");
  for (char ch : c.name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_')
      throw UsageError("--name: use letters, digits, '-' and '_' only");
  if (!c.name.empty() && c.roles.size() != 1)
    throw UsageError("--name: names the files of one role; give one --role");
  if (c.subscribers == 0) throw UsageError("--subscribers: must be at least 1");
  if (c.publishers == 0) throw UsageError("--publishers: must be at least 1");
  if (c.writer_id >= c.publishers)
    throw UsageError("--writer-id: " + std::to_string(c.writer_id) +
                     " is not a writer of this run; with --publishers " +
                     std::to_string(c.publishers) + " use 0.." + std::to_string(c.publishers - 1) +
                     " (give every node of the run the same --publishers)");
  if (c.writer_id != 0 && !c.runs(Role::pub))
    throw UsageError(
        "--writer-id: only pub writes data messages; give it to a node running --role pub");
  if (c.topic.empty())
    throw UsageError("--topic: give a name of letters, digits and '_', e.g. data2");
  for (char ch : c.topic)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_')
      throw UsageError("--topic: '" + c.topic +
                       "' has a character other than letters, digits and '_'");
  if (c.topic_given && !c.runs(Role::pub) && !c.runs(Role::sub) && !c.runs(Role::relay))
    throw UsageError(
        "--topic: names the data topic of pub, sub and relay; ping and pong use "
        "psb_<run>_ping/_pong");
  if (c.runs(Role::relay) && c.echo_every)
    throw UsageError(
        "--echo-every: not with --role relay; the relay forwards every message to the sub, "
        "which records the one-way latency over both hops");
  if (c.echo_given && c.echo_every == 0)
    throw UsageError("--echo-every: must be at least 1 (1 echoes every measured message)");
  if (c.echo_every && !c.runs(Role::pub) && !c.runs(Role::sub))
    throw UsageError(
        "--echo-every: latency under load is for pub (times the echoes) and the one sub "
        "that echoes; for ping/pong every message is echoed anyway");
  if (c.reply_size && (c.reply_size < 32 || c.reply_size > (4u << 20)))
    throw UsageError("--reply-size: " + std::to_string(c.reply_size) +
                     " is out of range; use 32 (header only) to 4194304 bytes");
  if (c.reply_size && !c.runs(Role::ping) && !c.runs(Role::pong))
    throw UsageError(
        "--reply-size: the length of pong's echo; give it to ping and pong "
        "(the same value to both)");
  if (c.latency_from_send && !c.runs(Role::sub))
    throw UsageError(
        "--latency-from: the sub's one-way latency; ping's round trip starts at its "
        "send anyway (closed loop) or at its schedule (open loop)");
  if (c.fifo_priority < 0 || c.fifo_priority > 99)
    throw UsageError("--fifo: priority must be 1..99");
  if (c.late_join && (c.roles.size() != 1 || c.roles[0] != Role::sub))
    throw UsageError(
        "--late-join: a subscriber that joins while publishing goes on; give it to a node "
        "running only --role sub");
  if (c.late_join && c.echo_every)
    throw UsageError(
        "--late-join: a late joiner does not echo; give --echo-every to the first sub");
  if (!c.injections.empty() && !c.runs(Role::pub))
    throw UsageError(
        "--inject: faults are injected by pub into its own stream; give it to --role pub");
  std::sort(c.injections.begin(), c.injections.end(),
            [](const Injection &a, const Injection &b) { return a.seq < b.seq; });
  for (size_t i = 1; i < c.injections.size(); ++i) {
    const Injection &a = c.injections[i - 1], &b = c.injections[i];
    if (a.seq == b.seq || (a.kind == Injection::reorder && b.seq == a.seq + 1))
      throw UsageError(
          "--inject: seq " + std::to_string(b.seq) +
          " already has a fault (or is the message a reorder moves its predecessor behind); "
          "give each message one fault");
  }
  check_run_topics(c);
  for (auto &[role, cpu] : c.cpu) {
    bool ours = false;
    for (Role r : c.roles) ours |= (r == role);
    if (!ours)
      throw UsageError(std::string("--cpu: role '") + role_name(role) +
                       "' is not run by this node");
  }
}

}  // namespace

bool NodeConfig::runs(Role r) const {
  return std::find(roles.begin(), roles.end(), r) != roles.end();
}

std::vector<std::string> NodeConfig::own_topics() const {
  std::vector<std::string> out;
  auto add = [&](const std::string &t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  for (Role r : roles) {
    if (r == Role::ping || r == Role::pong) {
      add("ping");
      add("pong");
    } else if (r == Role::module) {
      for (auto &in : module.inputs) add(in.topic);
      for (auto &out_topic : module.outputs) add(out_topic.topic);
    } else {
      add(topic);
      if (r == Role::relay) add(topic + "_relay");
      if (echo_every) add(topic + "_echo");
    }
  }
  return out;
}

uint64_t NodeConfig::warmup_for(Role r) const {
  if (warmup) return *warmup;
  if (r != Role::ping && r != Role::pub) return 0;
  if (closed_loop()) return 1000;
  return std::clamp<uint64_t>(uint64_t(std::ceil(rate_hz)), 1, 1000);
}

uint64_t NodeConfig::sample_capacity() const {
  if (count) return max_samples_given ? std::min(*count, max_samples) : *count;
  if (rate_hz > 0) return std::min<uint64_t>(max_samples, uint64_t(*duration_s * rate_hz) + 1);
  return max_samples;
}

NodeConfig parse_args(int argc, const char *const *argv) {
  NodeConfig c;
  c.reliability = PSB_BEST_EFFORT;
  c.durability = PSB_VOLATILE;
  c.notify = PSB_NOTIFY_WAIT;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw UsageError(std::string(arg) + ": needs a value");
      return argv[++i];
    };
    if (arg == "--driver")
      c.driver_path = value();
    else if (arg == "--describe")
      c.describe = true;
    else if (arg == "--check")
      c.check = true;
    else if (arg == "--json")
      c.json = true;
    else if (arg == "--check-stdin")
      c.check_stdin = true;
    else if (arg == "--role")
      c.roles = parse_roles(value());
    else if (arg == "--out")
      c.out_dir = value();
    else if (arg == "--name")
      c.name = value();
    else if (arg == "--run-id")
      c.run_id = value();
    else if (arg == "--size") {
      c.size = parse_u64(arg, value());
      c.size_given = true;
    } else if (parse_module_arg(arg, value, c.module)) {
    } else if (arg == "--count")
      c.count = parse_u64(arg, value());
    else if (arg == "--duration")
      c.duration_s = parse_seconds(arg, value());
    else if (arg == "--warmup")
      c.warmup = parse_u64(arg, value());
    else if (arg == "--rate")
      c.rate_hz = parse_seconds(arg, value());
    else if (arg == "--spin-send")
      c.send_wait = SendWait::spin;
    else if (arg == "--send-wait")
      c.send_wait = parse_named(kSendWait, arg, value());
    else if (arg == "--send-spin-us")
      c.send_spin_ns = int64_t(parse_seconds(arg, value()) * 1e3);
    else if (arg == "--drain-timeout")
      c.drain_timeout_s = parse_seconds(arg, value());
    else if (arg == "--inject")
      c.injections.push_back(parse_injection(value()));
    else if (arg == "--reliability")
      c.reliability = parse_named(kReliability, arg, value());
    else if (arg == "--durability")
      c.durability = parse_named(kDurability, arg, value());
    else if (arg == "--history") {
      std::string_view v = value();
      size_t colon = v.find(':');
      c.history = parse_named(kHistory, arg, v.substr(0, colon));
      if (colon != std::string_view::npos) {
        if (c.history == PSB_KEEP_ALL) throw UsageError("--history: keep_all takes no depth");
        c.history_depth = uint32_t(parse_u64(arg, v.substr(colon + 1)));
      }
    } else if (arg == "--notify")
      c.notify = parse_named(kNotify, arg, value());
    else if (arg == "--transport")
      c.transport = value();
    else if (arg == "--option") {
      std::string_view v = value();
      size_t eq = v.find('=');
      if (eq == std::string_view::npos || eq == 0)
        throw UsageError("--option: '" + std::string(v) + "' is not KEY=VALUE");
      c.options.emplace_back(std::string(v.substr(0, eq)), std::string(v.substr(eq + 1)));
    } else if (arg == "--loan")
      c.loan = true;
    else if (arg == "--address")
      c.address = ipv4(arg, value());
    else if (arg == "--peer")
      c.peers.push_back(ipv4(arg, value()));
    else if (arg == "--subscribers")
      c.subscribers = parse_u32(arg, value());
    else if (arg == "--publishers")
      c.publishers = parse_u32(arg, value());
    else if (arg == "--writer-id")
      c.writer_id = parse_u32(arg, value());
    else if (arg == "--run-topics")
      c.run_topics = parse_run_topics(value());
    else if (arg == "--topic") {
      c.topic = value();
      c.topic_given = true;
    } else if (arg == "--echo-every") {
      c.echo_every = parse_u64(arg, value());
      c.echo_given = true;
    } else if (arg == "--check-pattern")
      c.check_pattern = true;
    else if (arg == "--late-join")
      c.late_join = true;
    else if (arg == "--reply-size") {
      c.reply_size = parse_u64(arg, value());
      if (c.reply_size == 0)
        throw UsageError("--reply-size: 0 is out of range; use 32 (header only) to 4194304 bytes");
    } else if (arg == "--latency-from") {
      std::string_view v = value();
      if (v == "intended")
        c.latency_from_send = false;
      else if (v == "send")
        c.latency_from_send = true;
      else
        throw UsageError("--latency-from: '" + std::string(v) + "' is not one of intended|send");
    } else if (arg == "--cpu") {
      std::string_view v = value();
      size_t eq = v.find('=');
      if (eq == std::string_view::npos)
        throw UsageError("--cpu: '" + std::string(v) + "' is not ROLE=CPU");
      c.cpu[parse_role(v.substr(0, eq))] = int(parse_u64(arg, v.substr(eq + 1)));
    } else if (arg == "--pin") {
      c.pin = parse_named(kPinMode, arg, value());
    } else if (arg == "--fifo")
      c.fifo_priority = int(parse_u64(arg, value()));
    else if (arg == "--mlockall")
      c.mlockall = true;
    else if (arg == "--dma-latency")
      c.dma_latency = true;
    else if (arg == "--barrier") {
      std::string_view v = value();
      if (v == "none")
        c.barrier = BarrierKind::none;
      else if (v == "stdio")
        c.barrier = BarrierKind::stdio;
      else
        throw UsageError("--barrier: '" + std::string(v) + "' is not one of none|stdio");
    } else if (arg == "--sample-timeout")
      c.sample_timeout_s = parse_seconds(arg, value());
    else if (arg == "--match-timeout")
      c.match_timeout_s = parse_seconds(arg, value());
    else if (arg == "--idle-timeout")
      c.idle_timeout_s = parse_seconds(arg, value());
    else if (arg == "--timeout")
      c.timeout_s = parse_seconds(arg, value());
    else if (arg == "--max-samples") {
      c.max_samples = parse_u64(arg, value());
      c.max_samples_given = true;
    } else if (arg == "--progress")
      c.progress_s = parse_seconds(arg, value());
    else if (arg == "--window-lines")
      c.window_lines = true;
    else if (arg == "--help" || arg == "-h")
      throw UsageError(usage_text());
    else
      throw UsageError("unknown argument '" + std::string(arg) + "'; see --help");
  }
  validate(c);
  return c;
}

const char *usage_text() {
  return "usage: psbench-node --driver PATH (--describe | --role ROLE[,ROLE] --out DIR [options])\n"
         "       psbench-node --driver PATH --role ROLE[,ROLE] [options] --check [--json]\n"
         "       psbench-node --check-stdin   (NUL-separated argument lists, one JSON line each)\n"
         "  --run-id ID  --name NAME  --size BYTES  --count N | --duration S  --warmup N\n"
         "  --rate HZ  --send-wait hybrid|sleep|spin  --send-spin-us US  --spin-send (= spin)\n"
         "  --reliability R  --durability D  --history H\n"
         "  --notify listener|wait|poll  --transport NAME  --option KEY=VALUE  --loan\n"
         "  --subscribers N    pub: matched readers to wait for (default 1)\n"
         "  --publishers M     writers of the data topic; sub keeps one store each (default 1)\n"
         "  --writer-id K      pub: its id among the M writers, 0..M-1 (default 0)\n"
         "  --topic NAME       data topic psb_<run>_NAME, [A-Za-z0-9_]+ (default data)\n"
         "  --run-topics A,B,.. every topic of the run (suffixes), the same list in every\n"
         "                     node: a driver gives each its own port by its place in it\n"
         "  --echo-every N     sub echoes every Nth message of writer 0; pub times the echoes\n"
         "  --reply-size BYTES ping/pong: pong echoes only the first BYTES (>= 32) of each\n"
         "                     message, an acknowledgement; give ping the same value\n"
         "  --latency-from intended|send  sub: one-way latency from the pub's schedule\n"
         "                     (default) or from the moment its write began\n"
         "  --role relay       takes psb_<run>_<topic>, writes each message byte for byte on\n"
         "                     psb_<run>_<topic>_relay, ends on the end marker (forwarded);\n"
         "                     the recording sub takes --topic <topic>_relay\n"
         "  --role module      one module of an application graph (docs/graphs.md):\n"
         "    --module NAME  --module-id K  --sources S  --source-index J (a source)\n"
         "    --period NS  --on timer|any|all  --work NS  --work-max NS\n"
         "    --input TOPIC:WRITERS (repeat)  --output TOPIC:SIZE:READERS (repeat)\n"
         "    --size BYTES   the run's largest message, the same for every module\n"
         "  --late-join        sub: joins while publishing goes on; records the history it got\n"
         "  --address IPV4     this node's address on the run's network (roles on several\n"
         "                     hosts); --peer IPV4, once per host this node talks to (its own\n"
         "                     too when a peer process is on it)\n"
         "  --check-pattern  --cpu ROLE=CPU  --fifo PRIO  --mlockall  --dma-latency\n"
         "  --pin role|process|none  what --cpu and --fifo apply to: the role thread once its\n"
         "                     endpoints are open (role, default), and every other thread\n"
         "                     of the node confined to the roles' CPUs (process), or none\n"
         "  --barrier none|stdio  --sample-timeout S  --match-timeout S  --idle-timeout S\n"
         "  --timeout S  --max-samples N  --drain-timeout S\n"
         "  --progress S       ping, sub: a PROGRESS line on stdout every S seconds (0: none)\n"
         "  --window-lines     ping, pub: 'WINDOW begin' and 'WINDOW end' on stdout around\n"
         "                     the measurement window\n"
         "  --inject drop=SEQ|dup=SEQ|reorder=SEQ|delay=SEQ:US  pub: test hook, a fault in its "
         "stream\n"
         "options are described in docs/node.md";
}

const char *role_name(Role r) { return name_of(kRoles, r); }
const char *reliability_name(uint32_t bit) { return name_of(kReliability, bit); }
const char *durability_name(uint32_t bit) { return name_of(kDurability, bit); }
const char *history_name(uint32_t bit) { return bit ? name_of(kHistory, bit) : "driver_default"; }
const char *notify_name(uint32_t bit) { return name_of(kNotify, bit); }
const char *pin_mode_name(PinMode p) { return name_of(kPinMode, p); }
const char *send_wait_name(SendWait w) { return name_of(kSendWait, w); }

}  // namespace psb
