"""Builds torch_fl's native code with CMake + Ninja against the installed torch.

    pip install --no-build-isolation -e .

Build isolation must stay off: an isolated build environment would install
another (multi-GB CUDA) torch. FLAGOS_WITH_CANN=1 builds against a real CANN
install (ASCEND_HOME_PATH) instead of the simulator.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_DIR = ROOT / "build" / "cmake"


class CMakeBuild(build_ext):
    """Runs the CMake build; its outputs land in torch_fl/ and torch_fl/lib/."""

    def run(self):
        import torch.utils

        with_cann = os.environ.get("FLAGOS_WITH_CANN", "0") == "1"
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(BUILD_DIR), "-G", "Ninja",
            f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DFLAGOS_WITH_CANN={'ON' if with_cann else 'OFF'}",
        ]
        subprocess.check_call(configure)
        jobs = os.environ.get("MAX_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(BUILD_DIR), "--", f"-j{jobs}"])
        for ext in self.extensions:
            built = next((ROOT / "torch_fl").glob("_C.*.so"))
            target = Path(self.get_ext_fullpath(ext.name))
            if built.resolve() != target.resolve():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(built, target)
                shutil.copytree(ROOT / "torch_fl" / "lib", target.parent / "lib", dirs_exist_ok=True)


setup(
    name="torch_fl",
    version="0.1.0",
    description="Ascend NPUs as the PyTorch device flagos, with device-correct ACLNN kernels",
    packages=["torch_fl"],
    package_data={"torch_fl": ["lib/*.so"]},
    ext_modules=[Extension("torch_fl._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.10",
    install_requires=["torch==2.13.0"],
)
