// --wait-port ADDRESS:PORT SECONDS: whether something accepts TCP connections there
// within SECONDS, tried every 50 ms. psbench starts brokers on real machines and asks
// this of the node already copied there (docs/network.md): no tool of the machine's is
// needed, and it is asked on the machine itself, which psbench may not reach directly.
#pragma once

namespace psb {

int run_wait_port(int argc, const char *const *argv);  // 0 accepted, 1 not in time, 2 usage

}  // namespace psb
