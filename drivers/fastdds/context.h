// A driver context (one per role): a DomainParticipant with one Publisher, one
// Subscriber and the registered psbench type, plus the topics made in it. The SDK keeps
// the endpoints and destroys those the caller left open before the context.
#ifndef PSBENCH_FASTDDS_CONTEXT_H
#define PSBENCH_FASTDDS_CONTEXT_H

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <map>
#include <string>

#include "settings.h"

namespace psbfastdds {

class Context {
 public:
  // Validates cfg and creates the participant; throws psb::sdk::Error if refused.
  explicit Context(const psb_config &cfg);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const Settings &settings() const { return settings_; }
  eprosima::fastdds::dds::Publisher *publisher() const { return publisher_; }
  eprosima::fastdds::dds::Subscriber *subscriber() const { return subscriber_; }

  // Topics are shared by the endpoints of one context (a writer and a reader of
  // one topic in one participant) and deleted with the last of them.
  // Throws psb::sdk::Error if the topic cannot be created.
  eprosima::fastdds::dds::Topic *acquire_topic(const char *name);
  void release_topic(eprosima::fastdds::dds::Topic *topic);

 private:
  void tear_down() noexcept;

  const Settings settings_;
  eprosima::fastdds::dds::DomainParticipant *participant_ = nullptr;
  eprosima::fastdds::dds::Publisher *publisher_ = nullptr;
  eprosima::fastdds::dds::Subscriber *subscriber_ = nullptr;
  eprosima::fastdds::dds::TypeSupport type_;
  std::map<std::string, std::pair<eprosima::fastdds::dds::Topic *, int>> topics_;
};

}  // namespace psbfastdds

#endif
