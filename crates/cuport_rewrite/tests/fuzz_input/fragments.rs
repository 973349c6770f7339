//! Snippets assembled from fragments of real-looking code: kernels and their
//! launches, runtime and library calls, preprocessor branches, PyTorch device
//! code, CMake and pyproject.toml build files, cudarc. Fragments may open
//! what no later fragment closes; unbalanced input is part of the point.
//!
//! Holes: `$N` a CUDA name from the rule tables, `$K` a kernel name, `$E` an
//! expression, `$A` an argument list.
use cuport_model::Language;
use proptest::prelude::*;

use super::{any_language, cuda_names, Source};

const C_FAMILY: &[&str] = &[
    "#include <cuda_runtime.h>\n",
    "#include <cublas_v2.h>\n#include <cuda_fp16.h>\n",
    "#include \"helpers.h\"\n",
    "__global__ void $K(float* x, int n) {\n",
    "template <typename T, int B>\n__global__ void __launch_bounds__(256) $K(T* __restrict__ x) {\n",
    "__device__ __forceinline__ float helper(float v) { return __expf(v); }\n",
    "extern \"C\" __global__ void $K(",
    "  int i = threadIdx.x + blockIdx.x * blockDim.x;\n",
    "  if (i < n) x[i] = $E;\n",
    "  __syncthreads();\n",
    "  v += __shfl_down_sync(0xffffffff, v, 16);\n",
    "  extern __shared__ float smem[];\n",
    "  __shared__ float tile[32][33];\n",
    "  atomicAdd(&x[0], v);\n",
    "  $K<<<$E, $E>>>($A);\n",
    "  $K<float, 256><<<grid, block, smem, stream>>>($A);\n",
    "  $K<<<dim3(1,\n      2), 256,\n#if A\n 0\n#endif\n  >>>($A);\n",
    "  $K <<< g, b >>> ($A)",
    "  $N($A);\n",
    "  CUDA_CHECK($N($A));\n",
    "  cudaError_t err = $N($A);\n",
    "  $N",
    "(",
    ")",
    "$A",
    "#define LAUNCH(k) k<<<1, 1>>>()\n",
    "#define CALL(x) \\\n  $N(x)\n",
    "#define CUDA_CHECK(c) do { cudaError_t e_ = (c); } while (0)\n",
    "#if __CUDA_ARCH__ >= 800\n",
    "#ifdef __CUDACC__\n",
    "#if defined(_WIN32)\n",
    "#elif CUDART_VERSION >= 11000\n",
    "#else\n",
    "#endif\n",
    "// $N in a comment\n",
    "/* $N($A) */",
    "const char* s = \"$N(\";\n",
    "auto src = R\"raw($K<<<1, 1>>>())raw\";\n",
    "int $N = 0;\n",
    "void $N(int) {}\n",
    "namespace cg = cooperative_groups;\n",
    "  auto t = cg::tiled_partition<32>(cg::this_thread_block());\n",
    "cudaStream_t stream; cudaEvent_t start;\n",
    "thrust::device_vector<float> d(n);\n",
    "// cuport: ignore\n",
    "// cuport: off\n",
    "// cuport: on\n",
    "int main() {\n",
    "{\n",
    "}\n",
    ";\n",
];

const PYTHON: &[&str] = &[
    "import torch\n",
    "import torch.distributed as dist\n",
    "from torch.cuda import amp\n",
    "from torch.utils.cpp_extension import load_inline, CUDAExtension\n",
    "x = x.cuda()\n",
    "x = x.to(\"cuda:0\", non_blocking=True)\n",
    "device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n",
    "torch.cuda.synchronize()\n",
    "torch.cuda.$N\n",
    "$N($A)\n",
    "with torch.autocast(device_type=\"cuda\"):\n    y = m(x)\n",
    "scaler = torch.cuda.amp.GradScaler()\n",
    "def f(x):\n",
    "    return x.cuda(non_blocking=True)\n",
    "if x.is_cuda:\n    pass\n",
    "class M(torch.nn.Module):\n",
    "    ",
    "\"\"\"Uses torch.cuda.amp and .cuda().\"\"\"\n",
    "# torch.cuda.empty_cache()\n",
    "s = '''\n__global__ void k(float* x) { x[0] = 1; }\n'''\n",
    "load_inline(name=\"e\", cpp_sources=[\"\"], cuda_sources=[\"__global__ void k(){}\"])\n",
    "os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\"\n",
    "dist.init_process_group(backend=\"nccl\")\n",
    "torch.backends.cudnn.benchmark = True\n",
    "torch.load(p, map_location=\"cuda:0\")\n",
    "print(f\"on {torch.cuda.get_device_name()}\")\n",
    "x = torch.randn(4, device=\"cuda\")\n",
    "# cuport: ignore\n",
    "(",
    ")",
    "\\\n",
];

const CMAKE: &[&str] = &[
    "cmake_minimum_required(VERSION 3.18)\n",
    "project(demo LANGUAGES CXX CUDA)\n",
    "find_package(CUDAToolkit REQUIRED)\n",
    "find_package(CUDA)\n",
    "enable_language(CUDA)\n",
    "set(CMAKE_CUDA_ARCHITECTURES 80 90)\n",
    "set(CMAKE_CUDA_STANDARD 17)\n",
    "set(CMAKE_CUDA_FLAGS \"${CMAKE_CUDA_FLAGS} --expt-relaxed-constexpr -Xcompiler -Wall\")\n",
    "target_link_libraries(app PRIVATE CUDA::cudart CUDA::cublas)\n",
    "if(USE_CUDA)\n",
    "endif()\n",
    "set_target_properties(app PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n",
    "add_executable(app main.cu util.cpp)\n",
    "cuda_add_executable(app main.cu)\n",
    "# CUDA::cudart $N\n",
    "[[ bracket $N ]]",
    "\"",
    "(",
    ")",
];

const MAKE: &[&str] = &[
    "CUDA_PATH ?= /usr/local/cuda-12.4\n",
    "NVCC := $(CUDA_PATH)/bin/nvcc -ccbin $(HOST_COMPILER)\n",
    "NVCCFLAGS = -O3 --use_fast_math -lineinfo -t=0 --expt-relaxed-constexpr -Xcompiler -Wall\n",
    "$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode arch=compute_$(sm),code=sm_$(sm)))\n",
    "FLAGS += -arch=sm_$N -arch sm_80 --generate-code arch=compute_$N,code=[compute_$N,sm_$N]\n",
    "LDFLAGS := -L$(CUDA_HOME)/lib64 -L/usr/local/cuda/lib64 -lcublas -lcudart $N\n",
    "%.o: %.cu\n\t$(NVCC) $(NVCCFLAGS) -c $< -o $@\n",
    "\t$(CXX) -arch x86_64 -G -c $< \\\n",
    "# nvcc -G $N\n",
    "\"#\" nvcc",
    "-ccbin",
    "-arch=",
    "$(",
    ")",
];

const PYPROJECT: &[&str] = &[
    "[build-system]\n",
    "requires = [\"setuptools\", \"torch\"]\n",
    "[project]\n",
    "dependencies = [\"torch>=2.0\", \"cupy-cuda12x\", \"nvidia-cudnn-cu12\"]\n",
    "[tool.setuptools]\n",
    "[project.optional-dependencies]\ncuda = [\"triton\"]\n",
    "name = \"$N\"\n",
    "\"\"\"\n",
    "'''",
    "# cuda\n",
];

const RUST: &[&str] = &[
    "use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};\n",
    "use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};\n",
    "fn main() -> Result<(), Box<dyn std::error::Error>> {\n",
    "let ctx = CudaContext::new(0)?;\n",
    "let stream = ctx.default_stream();\n",
    "let ptx = cudarc::nvrtc::compile_ptx(SRC)?;\n",
    "const SRC: &str = r#\"extern \"C\" __global__ void $K(float* x) { x[0] = 1; }\"#;\n",
    "let blas = CudaBlas::new(stream.clone())?;\n",
    "let cfg = LaunchConfig::for_num_elems(n);\n",
    "unsafe { stream.launch_builder(&f).arg(&x).launch(cfg) }?;\n",
    "// $N\n",
    "\"$N\"",
    "}\n",
];

const EXPRESSIONS: &[&str] = &[
    "n",
    "256",
    "(n + 255) / 256",
    "dim3(16, 16)",
    "warpSize",
    "x[i] * 2.0f",
    "0",
];

const ARGUMENTS: &[&str] = &[
    "",
    "x, n",
    "&p, n * sizeof(float)",
    "d, h, bytes, cudaMemcpyHostToDevice",
    "stream",
    "handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &a, A, m, B, k, &b, C, m",
    "f(a, b), (c)",
];

const SEPARATORS: &[&str] = &["", "\n", " ", "\r\n", "\t", "\n\n    "];

/// The fragment table a language is mostly built from.
fn table(language: Language) -> &'static [&'static str] {
    match language {
        Language::Cuda | Language::Cpp => C_FAMILY,
        Language::Python => PYTHON,
        Language::Cmake => CMAKE,
        Language::PyprojectToml => PYPROJECT,
        Language::Rust => RUST,
        Language::Makefile => MAKE,
    }
}

/// One step of a snippet: a fragment (one in eight from another language's
/// table), the values for its holes, and what separates it from the next.
type Step = (u8, usize, usize, usize, u8);

pub(super) fn snippet() -> impl Strategy<Value = Source> {
    let step = (
        any::<u8>(),
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
        any::<u8>(),
    );
    (any_language(), proptest::collection::vec(step, 0..40)).prop_map(|(language, steps)| {
        let mut text = String::new();
        for step in &steps {
            render_step(language, step, &mut text);
        }
        Source {
            language,
            bytes: text.into_bytes(),
        }
    })
}

fn render_step(language: Language, step: &Step, text: &mut String) {
    let &(foreign, fragment, hole, name, separator) = step;
    let table = if foreign % 8 == 0 {
        let all = [C_FAMILY, PYTHON, CMAKE, PYPROJECT, RUST];
        all[usize::from(foreign / 8) % all.len()]
    } else {
        table(language)
    };
    let names = cuda_names();
    let filled = table[fragment % table.len()]
        .replace("$N", &names[name % names.len()])
        .replace("$K", ["k", "reduce_sum", "kernel2"][hole % 3])
        .replace("$E", EXPRESSIONS[hole % EXPRESSIONS.len()])
        .replace("$A", ARGUMENTS[hole % ARGUMENTS.len()]);
    text.push_str(&filled);
    text.push_str(SEPARATORS[usize::from(separator) % SEPARATORS.len()]);
}
