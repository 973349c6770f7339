"""Checks the generated cuport_device / cuport_build modules through their
seams: the environment mapping and the import probe. No torch is needed:
the probe answers from real, tiny packages written into a temporary
directory (cuport_probe_*), never from a stand-in torch."""

import importlib
import os
import sys
import tempfile
import unittest

ROOT = tempfile.mkdtemp(prefix="cuport_probe_", dir=os.getcwd())
sys.path.insert(0, ROOT)


def make_package(name, body=""):
    path = os.path.join(ROOT, name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "__init__.py"), "w") as handle:
        handle.write(body)
    importlib.invalidate_caches()


make_package("cuport_probe_torch")
make_package("cuport_probe_npu")
make_package(
    "cuport_probe_ext",
    "def Ext(name, sources, **kwargs):\n"
    "    return {'name': name, 'sources': sources, **kwargs}\n"
    "class Build:\n"
    "    pass\n",
)

os.environ.pop("CUPORT_DEVICE", None)
import cuport_build  # noqa: E402
import cuport_device  # noqa: E402


def probe_for(installed):
    """An import probe that answers for torch/adapters from real packages."""
    stand_ins = {"torch": "cuport_probe_torch", "torch_npu": "cuport_probe_npu"}

    def probe(name):
        if name not in installed:
            return False
        return cuport_device.importable(stand_ins.get(name, name))

    return probe


def never(_backend):
    return False


class DeviceSelection(unittest.TestCase):
    def test_generated_backends_are_probed_adapters_first(self):
        names = [b.name for b in cuport_device.BACKENDS]
        self.assertEqual(names, ["npu", "musa", "mlu", "cuda"])
        npu = cuport_device.backend_named("ascend")
        self.assertEqual((npu.adapter, npu.dist_backend), ("torch_npu", "hccl"))
        self.assertIn("float64", npu.unsupported_dtypes)
        self.assertEqual(cuport_device.backend_named("hip").name, "cuda")

    def test_nothing_installed_selects_the_cpu_and_says_why(self):
        chosen = cuport_device.select({}, probe_for(set()), never)
        self.assertIs(chosen.backend, cuport_device.CPU)
        self.assertFalse(chosen.forced)
        reasons = dict(chosen.skipped)
        self.assertEqual(reasons["npu"], "not installed: torch, torch_npu")

    def test_an_installed_adapter_with_a_device_wins(self):
        probe = probe_for({"torch", "torch_npu"})
        chosen = cuport_device.select({}, probe, lambda b: b.name == "npu")
        self.assertEqual(chosen.backend.name, "npu")

    def test_an_adapter_without_a_device_falls_through_to_cuda(self):
        probe = probe_for({"torch", "torch_npu"})
        chosen = cuport_device.select({}, probe, lambda b: b.name == "cuda")
        self.assertEqual(chosen.backend.name, "cuda")
        self.assertIn(("npu", "installed, but no device is available"), chosen.skipped)

    def test_a_failing_probe_is_recorded_not_raised(self):
        def broken(backend):
            raise ImportError("libascendcl.so: cannot open")

        chosen = cuport_device.select({}, probe_for({"torch", "torch_npu"}), broken)
        self.assertIs(chosen.backend, cuport_device.CPU)
        self.assertTrue(dict(chosen.skipped)["npu"].startswith("probe failed"))

    def test_the_environment_forces_a_backend_by_name_or_alias(self):
        probe = probe_for({"torch", "torch_npu"})
        for value in ("npu", "Ascend", " npu "):
            chosen = cuport_device.select({"CUPORT_DEVICE": value}, probe, never)
            self.assertEqual(chosen.backend.name, "npu")
            self.assertTrue(chosen.forced)
        chosen = cuport_device.select({"CUPORT_DEVICE": "cpu"}, probe_for(set()), never)
        self.assertIs(chosen.backend, cuport_device.CPU)

    def test_forcing_a_backend_that_cannot_be_imported_fails_loudly(self):
        with self.assertRaises(cuport_device.BackendUnavailable) as raised:
            cuport_device.select({"CUPORT_DEVICE": "npu"}, probe_for({"torch"}), never)
        self.assertIn("torch_npu", str(raised.exception))
        with self.assertRaises(cuport_device.BackendUnavailable) as raised:
            cuport_device.select({"CUPORT_DEVICE": "tpu"}, probe_for(set()), never)
        self.assertIn("npu, musa, mlu, cuda, cpu", str(raised.exception))

    def test_the_real_probe_finds_real_packages_only(self):
        self.assertTrue(cuport_device.importable("cuport_probe_npu"))
        self.assertFalse(cuport_device.importable("cuport_probe_absent"))
        self.assertFalse(cuport_device.importable("cuport_probe_absent.sub"))


class DeviceModule(unittest.TestCase):
    def test_without_an_accelerator_the_cuda_spelling_is_kept(self):
        self.assertEqual(cuport_device.device_type, "cpu")
        self.assertEqual(cuport_device.accelerator, "cuda")
        self.assertEqual(cuport_device.amp_device_type, "cuda")
        self.assertEqual(cuport_device.dist_backend, "gloo")
        self.assertIsNone(cuport_device.adapter)

    def test_helpers_exist(self):
        for name in ("is_available", "device_count", "synchronize", "empty_cache",
                     "memory_allocated", "max_memory_allocated", "manual_seed_all",
                     "set_device", "current_device", "module", "device", "get"):
            self.assertTrue(callable(getattr(cuport_device, name)), name)

    def test_import_fails_loudly_when_forced_to_a_missing_backend(self):
        os.environ["CUPORT_DEVICE"] = "mlu"
        try:
            sys.modules.pop("cuport_device", None)
            with self.assertRaises(RuntimeError) as raised:
                importlib.import_module("cuport_device")
            self.assertIn("torch_mlu", str(raised.exception))
        finally:
            os.environ.pop("CUPORT_DEVICE", None)
            sys.modules.pop("cuport_device", None)
            importlib.import_module("cuport_device")


def build_backend(**overrides):
    facts = dict(name="npu", aliases=("ascend",), adapter="torch_npu",
                 extension="cuport_probe_ext.Ext", build_ext="cuport_probe_ext.Build",
                 macro="CUPORT_BACKEND_ASCEND")
    facts.update(overrides)
    return cuport_build.BuildBackend(**facts)


class Build(unittest.TestCase):
    def test_build_facts_come_from_the_tables(self):
        npu = cuport_build.backend_named("ascend")
        self.assertEqual(npu.extension, "torch_npu.utils.cpp_extension.NpuExtension")
        self.assertEqual(npu.build_ext, "torch.utils.cpp_extension.BuildExtension")
        musa = cuport_build.backend_named("musa")
        self.assertEqual(musa.extension, "torch_musa.utils.musa_extension.MUSAExtension")
        self.assertEqual(cuport_build.backend_named("mlu").unconfirmed, ("build_ext",))

    def test_installed_adapters_choose_the_build_without_a_device(self):
        probe = probe_for({"torch", "torch_npu"})
        self.assertEqual(cuport_build.select({}, probe).name, "npu")
        self.assertEqual(cuport_build.select({}, probe_for({"torch"})).name, "cuda")
        with self.assertRaises(cuport_build.BuildBackendError):
            cuport_build.select({"CUPORT_DEVICE": "musa"}, probe)

    def test_extension_defines_the_backend_macro(self):
        ext = cuport_build.extension("m._C", ["a.cpp"], backend=build_backend(),
                                     define_macros=[("X", "1")])
        self.assertEqual(ext["define_macros"], [("X", "1"), ("CUPORT_BACKEND_ASCEND", None)])
        self.assertEqual(cuport_build.build_ext_class(build_backend()).__name__, "Build")

    def test_device_sources_a_backend_cannot_compile_are_refused(self):
        with self.assertRaises(cuport_build.BuildBackendError) as raised:
            cuport_build.extension("m", ["a.cpp", "k.cu"], backend=build_backend())
        self.assertIn("k.cu", str(raised.exception))
        ext = cuport_build.extension("m", ["a.cpp", "k.cu"], backend=build_backend(),
                                     per_backend={"npu": {"sources": ["a.cpp", "k_ascend.cpp"]}})
        self.assertEqual(ext["sources"], ["a.cpp", "k_ascend.cpp"])

    def test_flags_for_another_compiler_are_refused(self):
        musa = build_backend(name="musa", device_suffixes=(".mu",), compiler_key="mcc")
        args = {"cxx": ["-O3"], "nvcc": ["--use_fast_math"]}
        with self.assertRaises(cuport_build.BuildBackendError) as raised:
            cuport_build.extension("m", ["k.mu"], backend=musa, extra_compile_args=args)
        self.assertIn("nvcc", str(raised.exception))
        ext = cuport_build.extension("m", ["k.mu"], backend=musa, extra_compile_args={"mcc": []})
        self.assertEqual(ext["extra_compile_args"], {"mcc": []})


if __name__ == "__main__":
    unittest.main()
