// __match_any_sync and __match_all_sync for HIP before 7.0, which declares
// them (and the mask-less __match_any and __match_all) only with
// -DHIP_ENABLE_WARP_SYNC_BUILTINS (6.2 to 6.4) or not at all (before 6.2).
// Written by cuport in place of those calls (CUDA's mask is dropped: every
// active lane of the wavefront takes part, 64 on wave64 GPUs); compiled with
// Debian's hipcc 5.2.3 and sid's 6.4.3.
#pragma once
#include <hip/hip_runtime.h>

// The lanes whose `value` equals this lane's: each round, the lowest lane
// still looking broadcasts its value, and the lanes holding it take the
// ballot of their own branch as the answer.
template <typename T>
__device__ inline unsigned long long cuport_match_any_sync(T value) {
    unsigned long long lanes = 0;
    bool found = false;
    while (__any(!found)) {
        if (!found) {
            const int leader = __ffsll(static_cast<unsigned long long int>(__ballot(1))) - 1;
            const T chosen = __shfl(value, leader);
            if (chosen == value) {
                lanes = __ballot(1);
                found = true;
            }
        }
    }
    return lanes;
}

// The active lanes when they all hold the same `value` (and `*pred` true),
// else 0 (and `*pred` false).
template <typename T>
__device__ inline unsigned long long cuport_match_all_sync(T value, int* pred) {
    const int leader = __ffsll(static_cast<unsigned long long int>(__ballot(1))) - 1;
    const bool same = __all(__shfl(value, leader) == value);
    *pred = same;
    return same ? static_cast<unsigned long long>(__ballot(1)) : 0ull;
}
