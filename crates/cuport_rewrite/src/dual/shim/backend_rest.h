/* Host compilers of backends whose kernels need a port do not know CUDA's
 * function qualifiers; __host__ __device__ helpers then compile as plain
 * host functions. */
#if !CUPORT_CUDA_KERNELS
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
/* Constant and managed memory become host data; copies into them and
 * device use are reported. */
#ifndef __constant__
#define __constant__
#endif
#ifndef __managed__
#define __managed__
#endif
#endif

/* A name with no automatic equivalent on the selected backend is declared
 * unavailable: unused it costs nothing, used it fails to compile with the
 * rule's guidance as the message. */
#if defined(__has_attribute)
#if __has_attribute(unavailable)
#define CUPORT_UNAVAILABLE_ATTR(message) __attribute__((unavailable(message)))
#endif
#endif
#ifndef CUPORT_UNAVAILABLE_ATTR
/* Older compilers: a warning here, and the link fails on the undefined name. */
#define CUPORT_UNAVAILABLE_ATTR(message) __attribute__((deprecated(message)))
#endif
#ifdef __cplusplus
#define CUPORT_ANY_ARGUMENTS ...
#else
#define CUPORT_ANY_ARGUMENTS
#endif
#define CUPORT_UNAVAILABLE_FUNCTION(name, message) \
  int name(CUPORT_ANY_ARGUMENTS) CUPORT_UNAVAILABLE_ATTR(message)
#define CUPORT_UNAVAILABLE_TYPE(name, message) \
  typedef struct cuport_unavailable_##name name CUPORT_UNAVAILABLE_ATTR(message)
#define CUPORT_UNAVAILABLE_VALUE(name, message) \
  extern const int name CUPORT_UNAVAILABLE_ATTR(message)
/* CUPORT_DEFAULT_ARG(d, x) is x and CUPORT_DEFAULT_ARG(d, ) is d: the value
 * CUDA declares for a trailing argument the target's declaration makes
 * required. __VA_OPT__ is C++20; GCC and Clang accept it in older modes. */
#define CUPORT_DEFAULT_ARG(d, ...) CUPORT_DEFAULT_ARG_I(__VA_ARGS__ __VA_OPT__(,) d, ~)
#define CUPORT_DEFAULT_ARG_I(x, ...) x

/* Kernel launches are written CUPORT_KERNEL_LAUNCH((kernel), (grid, block,
 * shared, stream), args...) when a selected backend needs a kernel port: the
 * CUDA launch where kernels compile, else a stop with the kernel's name. The
 * build goes on so the rest of the port can be tested; define
 * CUPORT_STRICT_KERNELS to make every such launch a compile error instead. */
#define CUPORT_STRIP(...) __VA_ARGS__
#if CUPORT_CUDA_KERNELS
#define CUPORT_KERNEL_LAUNCH(kernel, config, ...) \
  CUPORT_STRIP kernel<<<CUPORT_STRIP config>>>(__VA_ARGS__)
#else
#include <stdio.h>
#include <stdlib.h>
#ifdef CUPORT_STRICT_KERNELS
CUPORT_UNAVAILABLE_FUNCTION(cuport_kernel_not_ported,
                            "this CUDA kernel launch is not ported to the selected backend; see the cuport diagnostic for the kernel");
#define CUPORT_KERNEL_LAUNCH(kernel, config, ...) cuport_kernel_not_ported(#kernel)
#else
#define CUPORT_KERNEL_LAUNCH(kernel, config, ...)                           \
  (fprintf(stderr,                                                          \
           "cuport: kernel %s is not ported to this backend (%s:%d)\n",     \
           #kernel, __FILE__, __LINE__),                                    \
   abort())
#endif
#ifdef __cplusplus
/* Launch configurations are still computed in host code. */
struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
      : x(x_), y(y_), z(z_) {}
};
#endif
#endif

/* A launch of a kernel that a [[kernel]] rule maps to vendor operators is
 * written CUPORT_OPERATOR_LAUNCH(function, (stream), (kernel), (grid, block,
 * shared, stream), args...): the generated function, which runs the
 * operators on the stream, where the backend has them; elsewhere the launch
 * above. */
/* A rule with launch values (sizes the kernel only gets through its grid)
 * is written CUPORT_OPERATOR_LAUNCH_VALUES(function, (stream), (kernel),
 * (config), (values...), args...): the function also takes the values after
 * the kernel's arguments; the kernel launch does not. */
#if CUPORT_KERNEL_OPERATORS
#include "cuport_kernel_ops.h"
#define CUPORT_OPERATOR_LAUNCH(function, stream, kernel, config, ...) \
  function(CUPORT_STRIP stream, __VA_ARGS__)
#define CUPORT_OPERATOR_LAUNCH_VALUES(function, stream, kernel, config, values, ...) \
  function(CUPORT_STRIP stream, __VA_ARGS__, CUPORT_STRIP values)
#else
#define CUPORT_OPERATOR_LAUNCH(function, stream, kernel, config, ...) \
  CUPORT_KERNEL_LAUNCH(kernel, config, __VA_ARGS__)
#define CUPORT_OPERATOR_LAUNCH_VALUES(function, stream, kernel, config, values, ...) \
  CUPORT_KERNEL_LAUNCH(kernel, config, __VA_ARGS__)
#endif

#endif /* CUPORT_BACKEND_H */
