/* The fixed-time driver of the simulated NCCL (libnccl.so.2 under build/lib/c3sim), for tests:
 * communicators made while no simulated node runs launch their kernels through the fixed-time
 * GPU driver (c3/sim/gpu/fixed_time.h) with fixed durations. The NCCL API itself is the real
 * nccl.h; this is its one test hook. */
#ifndef C3_SIM_NCCL_FIXED_TIME_H
#define C3_SIM_NCCL_FIXED_TIME_H

#include "c3/sim/gpu/fixed_time.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernels the fixed-time driver has launched so far in this process (one per call outside a
 * group, one per stream at the outermost ncclGroupEnd). */
C3FAKE_API int c3fake_nccl_launch_count(void);

#ifdef __cplusplus
}
#endif

#endif /* C3_SIM_NCCL_FIXED_TIME_H */
