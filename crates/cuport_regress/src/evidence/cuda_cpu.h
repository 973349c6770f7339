// cuport's CPU runner for CUDA kernels (issue 27, evidence by execution).
// Written for cuport; no code from other projects. It EXECUTES a kernel so
// its outputs can be compared with an independent reference; it is not a
// reference itself.
//
// Model: the blocks of a launch run one after another; the threads of a
// block run as fibers (POSIX ucontext) on one OS thread, so `__shared__`
// can be a function-local static, atomics need no locking, and every
// barrier (`__syncthreads`, a warp or tile exchange) is exact: a fiber that
// waits yields to the next one until the whole group has arrived. Threads
// that have returned count as arrived, as on current NVIDIA hardware.
#pragma once
#include <algorithm>
#include <array>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <vector>
#include <ucontext.h>

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
typedef dim3 uint3;
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }

namespace cuport {

struct Barrier {
  int arrived = 0;
  unsigned generation = 0;
};

struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  dim3 tid;
  bool done = false;
};

struct Block {
  dim3 grid, block, index;
  std::vector<Fiber> fibers;
  ucontext_t scheduler;
  int current = 0;
  Barrier block_barrier;
  std::map<long, Barrier> groups;  // key: width * 2^20 + group index
  std::vector<std::array<unsigned char, 16>> slots;
  std::vector<unsigned char> dynamic_shared;
  std::function<void()> body;
};

inline Block& block() {
  static Block b;
  return b;
}
inline Fiber& self() { return block().fibers[block().current]; }
inline unsigned threads_per_block() {
  const Block& b = block();
  return b.block.x * b.block.y * b.block.z;
}
inline unsigned linear(const dim3& t) {
  const Block& b = block();
  return t.x + b.block.x * (t.y + b.block.y * t.z);
}
inline unsigned my_rank() { return linear(self().tid); }
inline void yield() { swapcontext(&self().context, &block().scheduler); }

// Live threads among block ranks [first, first + count).
inline int live(unsigned first, unsigned count) {
  Block& b = block();
  int n = 0;
  for (unsigned r = first; r < first + count && r < b.fibers.size(); ++r) n += !b.fibers[r].done;
  return n;
}

inline void wait(Barrier& bar, unsigned first, unsigned count) {
  unsigned generation = bar.generation;
  bar.arrived += 1;
  while (bar.generation == generation) {
    if (bar.arrived >= live(first, count)) {
      bar.arrived = 0;
      bar.generation += 1;
      break;
    }
    yield();
  }
}

inline void sync_block() { wait(block().block_barrier, 0, threads_per_block()); }

inline void sync_group(unsigned width) {
  unsigned group = my_rank() / width;
  Barrier& bar = block().groups[long(width) * (1L << 20) + group];
  wait(bar, group * width, width);
}

// Every lane of the `width`-wide group of the caller publishes `value`; each
// then reads the value of lane `source` of its group (its own when `source`
// is outside the group, as the CUDA shuffles specify).
template <class T>
T exchange(unsigned width, T value, int source) {
  static_assert(sizeof(T) <= 16, "shuffle of a type wider than 16 bytes");
  Block& b = block();
  unsigned rank = my_rank();
  std::memcpy(b.slots[rank].data(), &value, sizeof(T));
  sync_group(width);
  T result = value;
  if (source >= 0 && unsigned(source) < width) {
    unsigned from = rank / width * width + unsigned(source);
    if (from < b.fibers.size()) std::memcpy(&result, b.slots[from].data(), sizeof(T));
  }
  sync_group(width);
  return result;
}

inline unsigned lane(unsigned width) { return my_rank() % width; }

inline void trampoline() {
  block().body();
  self().done = true;
  swapcontext(&self().context, &block().scheduler);
}

// CUPORT_SCHEDULE=reverse resumes the fibers of a block last thread
// first. The evidence reruns a refuted case so: outputs that change with
// the order are a data race in the kernel.
inline bool reversed_schedule() {
  static const bool reversed = [] {
    const char* order = std::getenv("CUPORT_SCHEDULE");
    return order != nullptr && std::strcmp(order, "reverse") == 0;
  }();
  return reversed;
}

// Runs every thread of the current block to completion.
inline void run_block(size_t stack_bytes) {
  Block& b = block();
  unsigned n = threads_per_block();
  b.fibers.resize(n);
  b.slots.resize(n);
  b.block_barrier = Barrier();
  b.groups.clear();
  for (unsigned r = 0; r < n; ++r) {
    Fiber& f = b.fibers[r];
    f.done = false;
    f.tid = dim3(r % b.block.x, r / b.block.x % b.block.y, r / (b.block.x * b.block.y));
    f.stack.resize(stack_bytes);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.data();
    f.context.uc_stack.ss_size = f.stack.size();
    f.context.uc_link = nullptr;
    makecontext(&f.context, trampoline, 0);
  }
  for (bool pending = true; pending;) {
    pending = false;
    for (unsigned i = 0; i < n; ++i) {
      unsigned r = reversed_schedule() ? n - 1 - i : i;
      if (b.fibers[r].done) continue;
      b.current = int(r);
      swapcontext(&b.scheduler, &b.fibers[r].context);
      pending = pending || !b.fibers[r].done;
    }
  }
}

inline void launch(dim3 grid, dim3 threads, size_t shared, std::function<void()> body) {
  Block& b = block();
  b.grid = grid;
  b.block = threads;
  b.body = std::move(body);
  b.dynamic_shared.assign(shared + 16, 0);
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        b.index = dim3(x, y, z);
        run_block(128 * 1024);
      }
}

inline void* dynamic_shared() { return block().dynamic_shared.data(); }

}  // namespace cuport

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __noinline__
#define __align__(n) alignas(n)
#define __launch_bounds__(...)

#define threadIdx (cuport::self().tid)
#define blockIdx (cuport::block().index)
#define blockDim (cuport::block().block)
#define gridDim (cuport::block().grid)
#define warpSize 32

inline void __syncthreads() { cuport::sync_block(); }
inline void __syncwarp(unsigned = 0xffffffffu) { cuport::sync_group(32); }
inline void __threadfence() {}
inline void __threadfence_block() {}
template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldcs(const T* p) { return *p; }
template <class T> void __stcs(T* p, T v) { *p = v; }
template <class T> void __stcg(T* p, T v) { *p = v; }

template <class T> T __shfl_sync(unsigned, T v, int src, int width = 32) {
  return cuport::exchange(unsigned(width), v, src);
}
template <class T> T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
  return cuport::exchange(unsigned(width), v, int(cuport::lane(unsigned(width)) ^ unsigned(mask)));
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  return cuport::exchange(unsigned(width), v, int(cuport::lane(unsigned(width)) + delta));
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  return cuport::exchange(unsigned(width), v, int(cuport::lane(unsigned(width))) - int(delta));
}

// One OS thread runs every fiber, so read-modify-write needs no lock.
template <class T> T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <class T> T atomicMax(T* p, T v) { T old = *p; *p = std::max(old, v); return old; }
template <class T> T atomicMin(T* p, T v) { T old = *p; *p = std::min(old, v); return old; }
template <class T> T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }

using std::max;
using std::min;
inline int max(int a, unsigned b) { return std::max(a, int(b)); }
inline int min(int a, unsigned b) { return std::min(a, int(b)); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __saturatef(float x) { return std::min(1.0f, std::max(0.0f, x)); }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }

namespace cooperative_groups {
struct thread_block {
  void sync() const { cuport::sync_block(); }
  unsigned thread_rank() const { return cuport::my_rank(); }
  unsigned size() const { return cuport::threads_per_block(); }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return blockIdx; }
  dim3 thread_index() const { return threadIdx; }
  dim3 group_dim() const { return blockDim; }
};
inline thread_block this_thread_block() { return {}; }

template <unsigned N>
struct thread_block_tile {
  unsigned thread_rank() const { return cuport::lane(N); }
  unsigned size() const { return N; }
  unsigned num_threads() const { return N; }
  unsigned meta_group_rank() const { return cuport::my_rank() / N; }
  unsigned meta_group_size() const { return (cuport::threads_per_block() + N - 1) / N; }
  void sync() const { cuport::sync_group(N); }
  template <class T> T shfl(T v, int src) const { return cuport::exchange(N, v, src); }
  template <class T> T shfl_xor(T v, unsigned m) const {
    return cuport::exchange(N, v, int(thread_rank() ^ m));
  }
  template <class T> T shfl_down(T v, unsigned d) const {
    return cuport::exchange(N, v, int(thread_rank() + d));
  }
  template <class T> T shfl_up(T v, unsigned d) const {
    return cuport::exchange(N, v, int(thread_rank()) - int(d));
  }
};
template <unsigned N, class Parent>
thread_block_tile<N> tiled_partition(const Parent&) { return {}; }

template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct greater { T operator()(T a, T b) const { return a > b ? a : b; } };
template <class T> struct less { T operator()(T a, T b) const { return a < b ? a : b; } };

// A butterfly over the tile: every lane ends with the same combination.
template <unsigned N, class T, class Op>
T reduce(const thread_block_tile<N>& tile, T value, Op op) {
  for (unsigned m = N / 2; m > 0; m /= 2) value = op(value, tile.shfl_xor(value, m));
  return value;
}
}  // namespace cooperative_groups
