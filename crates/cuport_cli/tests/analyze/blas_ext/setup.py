from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="blas_ext",
    ext_modules=[
        CUDAExtension(
            "blas_ext._C",
            ["gemm.cu"],
            libraries=["cublas", "cublasLt"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
