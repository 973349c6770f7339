// cuport stand-in for bisheng's compiler resource header __clang_cce_simt_fp8.h,
// which the devkit includes in pure-SIMT mode
// (impl/simt_api/*_impl.h, impl/utils/debug/asc_printf_simt_impl.h).
// Intentionally empty: the declarations g++ needs are in asc_simt_standin.h,
// which is force-included (-include) before any devkit header.
#pragma once
