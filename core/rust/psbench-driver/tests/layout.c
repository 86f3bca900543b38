/* Prints the layout of every struct of psbench/driver.h, one "NAME OFFSET SIZE" line per
 * struct and field, for tests/layout.rs to compare with the Rust mirrors. */
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>

#include "psbench/driver.h"

#define S(s) printf("%s %zu %zu\n", #s, alignof(s), sizeof(s))
#define F(s, f) printf("%s.%s %zu %zu\n", #s, #f, offsetof(s, f), sizeof(((s *)0)->f))

int main(void) {
  printf("PSB_ABI_VERSION %u 0\n", PSB_ABI_VERSION);
  printf("bits %u %u %u %u %u %u %u %u %u\n", PSB_BEST_EFFORT, PSB_RELIABLE, PSB_VOLATILE,
         PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, PSB_KEEP_ALL, PSB_NOTIFY_LISTENER, PSB_NOTIFY_WAIT,
         PSB_NOTIFY_POLL);
  printf("%s 0 0\n", PSB_COUNTER_LISTENER_ERRORS);
  S(psb_error);
  F(psb_error, message);
  S(psb_option);
  F(psb_option, key);
  F(psb_option, value);
  S(psb_capabilities);
  F(psb_capabilities, reliability);
  F(psb_capabilities, durability);
  F(psb_capabilities, history);
  F(psb_capabilities, notify);
  F(psb_capabilities, transports);
  F(psb_capabilities, option_keys);
  F(psb_capabilities, max_payload);
  F(psb_capabilities, readers_per_topic);
  F(psb_capabilities, writers_per_topic);
  F(psb_capabilities, crosses_hosts);
  S(psb_qos);
  F(psb_qos, reliability);
  F(psb_qos, durability);
  F(psb_qos, history);
  F(psb_qos, history_depth);
  S(psb_config);
  F(psb_config, run_id);
  F(psb_config, transport);
  F(psb_config, notify);
  F(psb_config, qos);
  F(psb_config, max_payload);
  F(psb_config, options);
  F(psb_config, option_count);
  F(psb_config, use_loan);
  F(psb_config, intra_process);
  F(psb_config, local_address);
  F(psb_config, peer_addresses);
  F(psb_config, readers);
  F(psb_config, writers);
  F(psb_config, run_topics);
  F(psb_config, run_topic_count);
  S(psb_driver);
  F(psb_driver, abi_version);
  F(psb_driver, name);
  F(psb_driver, description);
  F(psb_driver, version);
  F(psb_driver, caps);
  F(psb_driver, check);
  F(psb_driver, open);
  F(psb_driver, close);
  F(psb_driver, create_writer);
  F(psb_driver, destroy_writer);
  F(psb_driver, create_reader);
  F(psb_driver, destroy_reader);
  F(psb_driver, matched_readers);
  F(psb_driver, matched_writers);
  F(psb_driver, write);
  F(psb_driver, loan);
  F(psb_driver, write_loan);
  F(psb_driver, take);
  F(psb_driver, release);
  F(psb_driver, flush);
  F(psb_driver, drain);
  F(psb_driver, writer_counters);
  F(psb_driver, reader_counters);
  return 0;
}
