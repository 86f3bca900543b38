// psbench's QoS (psb_qos) mapped to Fast DDS DataWriterQos / DataReaderQos.
#ifndef PSBENCH_FASTDDS_ENDPOINT_QOS_H
#define PSBENCH_FASTDDS_ENDPOINT_QOS_H

#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>

#include "settings.h"

namespace psbfastdds {

// base: Fast DDS's defaults, or the vendor XML's default profile with transport config.
eprosima::fastdds::dds::DataWriterQos writer_qos(const Settings &s,
                                                 eprosima::fastdds::dds::DataWriterQos base);
eprosima::fastdds::dds::DataReaderQos reader_qos(const Settings &s,
                                                 eprosima::fastdds::dds::DataReaderQos base);

}  // namespace psbfastdds

#endif
