// hiredis 0.14's sds.h declares its functions without extern "C" (hiredis.h includes it
// outside its own extern "C" block): included first here, with C linkage, so that
// sdsMakeRoomFor and friends link. Include this instead of <hiredis.h>.
#ifndef PSBENCH_REDIS_HIREDIS_C_H
#define PSBENCH_REDIS_HIREDIS_C_H

extern "C" {
#include <sds.h>
}
#include <hiredis.h>

#endif
