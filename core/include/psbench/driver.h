/*
 * psbench driver ABI.
 *
 * A driver is a shared library that exports one C function, psb_driver_entry(),
 * returning a pointer to a static psb_driver table. Only plain C types cross
 * this boundary, so a driver may be written in C, C++ or Rust.
 *
 * Threading: the node may open several contexts in one process (intra-process
 * placement runs roles as threads, each with its own context). A context and
 * its endpoints are used by one thread at a time, except that a listener
 * callback runs on a thread owned by the driver.
 *
 * Handles: a context, a writer and a reader are opaque pointers of their own types
 * (psb_context, psb_writer, psb_reader), which the driver defines or casts to and
 * from as it likes; the node never looks inside.
 *
 * Errors: every call that can fail takes a psb_error* and writes a message a
 * user can act on, starting with the driver's name ("udp: transport 'unicast'
 * needs option peer=<IPv4 address the writer sends to>"). Calls on the timed path
 * (write, take, loan, write_loan) only format a message when they fail.
 */
#ifndef PSBENCH_DRIVER_H
#define PSBENCH_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; the node refuses other versions. ABI 5: typed
 * handles, check() reports every refusal, capabilities without loan, services and
 * cleanup_command (loan support is the presence of loan() and write_loan(); services
 * and cleanup live in the driver's manifest.toml), counters split by endpoint. ABI 6:
 * hosts (psb_config.local_address and peer_addresses, caps.crosses_hosts). ABI 7: the
 * run's readers and writers per topic (psb_config.readers, writers). ABI 8: every topic of
 * the run (psb_config.run_topics, run_topic_count). */
#define PSB_ABI_VERSION 8u
#define PSB_DRIVER_ENTRY_SYMBOL "psb_driver_entry"

/* Each family below is a bit set in psb_capabilities and a single bit in
 * psb_config. */
enum psb_reliability { PSB_BEST_EFFORT = 1u << 0, PSB_RELIABLE = 1u << 1 };
/* PSB_PERSISTENT: what was written survives a restart of the broker (it is on the
 * broker's disk), and a reader's subscription outlives its connection: one that comes
 * back gets what was written while it was away. A broker's property; a driver offering
 * it reconnects by itself. (Added in ABI version 8; older drivers never list it.) */
enum psb_durability {
  PSB_VOLATILE = 1u << 0,
  PSB_TRANSIENT_LOCAL = 1u << 1,
  PSB_PERSISTENT = 1u << 2
};
enum psb_history { PSB_KEEP_LAST = 1u << 0, PSB_KEEP_ALL = 1u << 1 };
enum psb_notify {
  PSB_NOTIFY_LISTENER = 1u << 0, /* driver thread calls psb_on_data */
  PSB_NOTIFY_WAIT = 1u << 1,     /* take() blocks up to a timeout */
  PSB_NOTIFY_POLL = 1u << 2      /* take() with timeout 0, called in a spin */
};

typedef struct psb_error {
  char message[512];
} psb_error;

typedef struct psb_option {
  const char *key;
  const char *value;
} psb_option;

/* Opaque handles: open() returns a context, create_writer() a writer, create_reader()
 * a reader. Never defined by the node. */
typedef struct psb_context psb_context;
typedef struct psb_writer psb_writer;
typedef struct psb_reader psb_reader;

typedef struct psb_capabilities {
  uint32_t reliability; /* set of psb_reliability */
  uint32_t durability;  /* set of psb_durability */
  uint32_t history;     /* set of psb_history that may be asked for explicitly */
  uint32_t notify;      /* set of psb_notify */
  /* NULL-terminated transport names; the first is what "default" means. */
  const char *const *transports;
  /* NULL-terminated option keys the driver understands; any other key is
   * refused by the node. Values are passed through untouched. */
  const char *const *option_keys;
  uint64_t max_payload; /* largest message in bytes, header included */
  /* Most readers one topic can have (e.g. 1: one port, one ring); 0 = no limit.
   * The node refuses --subscribers above it. (Added in ABI version 2.) */
  uint32_t readers_per_topic;
  /* Most writers one topic can have (e.g. 1: one ring, one bound endpoint);
   * 0 = no limit. The node refuses --publishers above it. (Added in ABI
   * version 3.) */
  uint32_t writers_per_topic;
  /* 1: some transport can carry a run whose roles are on several hosts (a config with
   * local_address set); check() refuses the transports that cannot. 0: one host only,
   * and the node refuses such a run (setting "hosts"). (ABI version 6.) */
  uint32_t crosses_hosts;
} psb_capabilities;

typedef struct psb_qos {
  uint32_t reliability;   /* one psb_reliability bit */
  uint32_t durability;    /* one psb_durability bit */
  uint32_t history;       /* one psb_history bit, or 0: not set, the driver's default */
  uint32_t history_depth; /* N of keep_last N; 0 with keep_all or when not set */
} psb_qos;

typedef struct psb_config {
  /* [A-Za-z0-9]+, unique per run: derive domain ids, ports and shared-memory
   * names from it so that concurrent or leftover runs never cross-talk. */
  const char *run_id;
  const char *transport; /* one of caps.transports (never "default") */
  uint32_t notify;       /* one psb_notify bit */
  psb_qos qos;
  uint64_t max_payload; /* largest message this run sends, header included */
  const psb_option *options;
  size_t option_count;
  uint32_t use_loan; /* 1: the node will use loan()/write_loan() (--loan) */
  /* 1: every endpoint of the run lives in this one process (roles as threads);
   * 0: peers are other processes, so a transport that only works inside one
   * process (e.g. ZeroMQ inproc) must be refused in check(). (ABI version 4.) */
  uint32_t intra_process;
  /* Where the run's hosts are (ABI version 6). local_address: this node's IPv4 address
   * on the run's network, or NULL when every role of the run is on this host (keep to
   * loopback). peer_addresses: the hosts of the processes this one exchanges messages
   * with, local_address among them when one is on this host; NULL-terminated (an empty
   * list when none); NULL when local_address is. Bind to, or select the
   * interface of, local_address; reach peers at peer_addresses (a middleware with
   * discovery needs only the interface; a broker's address comes in its option). */
  const char *local_address;
  const char *const *peer_addresses;
  /* How many readers and writers each topic of the run has in all (--subscribers,
   * --publishers; at least 1), for a driver whose limit depends on the transport (caps
   * readers_per_topic and writers_per_topic hold for every transport). (ABI version 7.) */
  uint32_t readers;
  uint32_t writers;
  /* Every topic of the run, full names psb_<run>_<suffix>, in one order that every process
   * of the run is given alike (a graph's topics in file order), so that a driver can derive
   * a topic's port or id from its index here: unlike a hash of its name, no two topics of
   * the run can get the same one. NULL with a count of 0 when the run did not list them
   * (ping/pong, one pub/sub topic, a direct caller): derive from the name then. A topic
   * this process uses is always among them. (ABI version 8.) */
  const char *const *run_topics;
  uint32_t run_topic_count;
} psb_config;

/* Listener callback: data is valid only during the call. */
typedef void (*psb_on_data)(void *user, const void *data, size_t len);

/* check() calls it once per refusal: the setting refused, in the node's vocabulary
 * (docs/node.md, "Checking a configuration"): "reliability", "durability",
 * "history", "notify", "transport", "size", "loan", "placement" (a transport that
 * needs every endpoint in one process), "hosts" (a run across hosts the driver or
 * its transport cannot carry), "option:KEY" (a missing or malformed option),
 * or "driver" (anything else, e.g. a combination of settings); and the reason, a
 * message starting with the driver's name as a psb_error's does. Both strings need
 * live only during the call. */
typedef void (*psb_refuse)(void *user, const char *setting, const char *reason);

/* Receives one of the middleware's own counters (writer_counters, reader_counters): a name in
 * [a-z0-9_]+ such as "sample_lost" or "sample_rejected", and its value. */
typedef void (*psb_put_counter)(void *user, const char *name, uint64_t value);

/* A reader counter with a meaning the node knows: errors a listener-mode reader met on the
 * middleware's delivery thread, where no call can return them (each may have cost
 * samples). A count above 0 becomes the run's warning; the first error's text is on the
 * node's stderr. The SDK reports it for every listener-mode reader. */
#define PSB_COUNTER_LISTENER_ERRORS "listener_errors"

typedef struct psb_driver {
  uint32_t abi_version; /* PSB_ABI_VERSION */
  const char *name;     /* folder name under drivers/, e.g. "udp" */
  const char *description;
  const char *(*version)(void); /* the middleware's version string */
  psb_capabilities caps;

  /* Judge a whole configuration before anything is created, and report EVERY
   * refusal through refuse(user, setting, reason), not just the first: a missing or
   * malformed option, a QoS the middleware cannot honour, an impossible combination.
   * Returns the number of refusals (0 = accepted). Opens nothing and does not look
   * at the machine (whether a daemon runs is for open() to find). The node checks the
   * capability sets itself and calls check() for every configuration, also one with
   * a QoS the sets leave out: a refusal of the same setting is then appended to the
   * node's as the reason, so check() must not assume the QoS is a declared one. */
  int (*check)(const psb_config *cfg, psb_refuse refuse, void *user);

  /* A context: a participant, a connection, a runtime. NULL on error (err names
   * what check() would refuse, or what failed). */
  psb_context *(*open)(const psb_config *cfg, psb_error *err);
  void (*close)(psb_context *ctx);

  psb_writer *(*create_writer)(psb_context *ctx, const char *topic, psb_error *err);
  void (*destroy_writer)(psb_writer *writer);
  /* on_data is non-NULL exactly when cfg->notify is PSB_NOTIFY_LISTENER. */
  psb_reader *(*create_reader)(psb_context *ctx, const char *topic, psb_on_data on_data, void *user,
                               psb_error *err);
  void (*destroy_reader)(psb_reader *reader);

  /* Matched remote endpoints, or -1 if the middleware cannot tell. May be
   * NULL (same as -1). */
  int (*matched_readers)(psb_writer *writer);
  int (*matched_writers)(psb_reader *reader);

  /* Timed path. 0 = sent, -1 = error (err filled). */
  int (*write)(psb_writer *writer, const void *data, size_t len, psb_error *err);
  /* Optional zero-copy send: loan a buffer of len bytes, fill it, hand it back with
   * write_loan. Both NULL when unsupported, both set when supported (the node refuses
   * a table with one of them at load, and offers --loan exactly when both are set).
   * write_loan takes only the sample the writer's last loan() returned, once, with a
   * len of at most the loaned one; anything else is an error (-1), not a crash. */
  void *(*loan)(psb_writer *writer, size_t len, psb_error *err);
  int (*write_loan)(psb_writer *writer, void *sample, size_t len, psb_error *err);
  /* 1 = a sample is in *data and *len, 0 = none within timeout_ns (0 = do not
   * block), -1 = error. The sample stays valid until release() or the next
   * take() on this reader. */
  int (*take)(psb_reader *reader, int64_t timeout_ns, const void **data, size_t *len,
              psb_error *err);
  /* Optional: give back the sample from take() early. May be NULL. */
  void (*release)(psb_reader *reader);

  /* Optional: send now what the writer holds back (a middleware that batches writes,
   * e.g. Cyclone's WriteBatch). The node calls it whenever it is about to wait for
   * something after a write: after every ping, echo, handshake and end marker, and after
   * every message of an open-loop publisher. Only a publisher writing back to back
   * (--rate 0) leaves it to the middleware. 0 = done, -1 = error (err filled). NULL when
   * the driver never holds writes back. */
  int (*flush)(psb_writer *writer, psb_error *err);

  /* Optional: wait until what this writer was given has left the process and, for a
   * reliable writer, been acknowledged by every matched reader (Cyclone
   * dds_wait_for_acks, Fast DDS wait_for_acknowledgments, an MQTT client's outgoing
   * queue empty, a NATS flush). The node calls it, bounded by timeout_ns, after the
   * last measured write and before the end marker, so that end markers do not overtake
   * queued data and a writer's close does not discard it. 1 = drained, 0 = not within
   * timeout_ns, -1 = error (err filled). NULL when every write leaves the process
   * before write() returns. */
  int (*drain)(psb_writer *writer, int64_t timeout_ns, psb_error *err);

  /* Optional: the middleware's own counts for a writer or a reader, each handed to
   * put() once, e.g. a DDS reader's sample_lost and sample_rejected statuses, a broker
   * client's dropped messages. Called once after the measurement, before the endpoint
   * is destroyed; recorded beside psbench's own sequence-number accounting. NULL when
   * the middleware counts nothing of the kind for that endpoint. */
  void (*writer_counters)(psb_writer *writer, psb_put_counter put, void *user);
  void (*reader_counters)(psb_reader *reader, psb_put_counter put, void *user);
} psb_driver;

typedef const psb_driver *(*psb_driver_entry_fn)(void);

/* Every driver defines exactly this one exported function:
 *   PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void);
 * (inside extern "C" in C++; in Rust, no_mangle and extern "C"). */
#define PSB_DRIVER_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
}
#endif

#endif /* PSBENCH_DRIVER_H */
