/* Pre-included (g++ -include) when corpus_check.py --mode hip-cpu and
 * tests/hip_cpu.rs build a HIP port against AMD's HIP-CPU runtime.
 *
 * ROCm's <hip/hip_runtime.h> chain defines include-guard macros that ported
 * code tests as feature macros (cuport maps CUDA's guards to them, e.g.
 * `#ifdef __DRIVER_TYPES_H__` -> `#ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H`, the
 * idiom of cuda-samples' helper_cuda.h). HIP-CPU guards its headers with
 * `#pragma once` and defines none of them, so such blocks would vanish. The
 * names are those of ROCm's headers: hip/hip_runtime.h, hip/hip_runtime_api.h,
 * hip/driver_types.h, hip/hip_vector_types.h (all included by hip_runtime.h).
 * Nothing else is defined here: libraries (hipBLAS, ...) are not part of
 * HIP-CPU, and their guards stay undefined as for a program that does not
 * use them. */
#ifndef CUPORT_HIP_CPU_PRELUDE_H
#define CUPORT_HIP_CPU_PRELUDE_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_API_H
#define HIP_INCLUDE_HIP_DRIVER_TYPES_H
#define HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H
#endif
