"""Builds torch_fl's native code with CMake + Ninja against the installed torch.

    pip install --no-build-isolation -e .

Build isolation must stay off: an isolated build environment would install
another (multi-GB CUDA) torch. FLAGOS_WITH_CANN=1 builds against a real CANN
install (ASCEND_HOME_PATH) instead of the simulator.
"""

import importlib.util
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_DIR = ROOT / "build" / "cmake"


def cmake_configure_command(source: Path = ROOT, build: Path = BUILD_DIR) -> list[str]:
    """The CMake configure step of the build (benchmarks/new_op.py times it too).

    Everything CMake needs from Python is passed here, read without importing
    torch (2.5 s) and without CMake's FindPython (1.4 s of interpreter runs):
    both would run before the first compile of a clean build.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None:
        raise SystemExit("torch_fl builds against the installed torch==2.13.0: "
                         "run `pip install -r requirements.txt` first")
    torch_dir = spec.submodule_search_locations[0]
    with_cann = os.environ.get("FLAGOS_WITH_CANN", "0") == "1"
    return [
        "cmake", "-S", str(source), "-B", str(build), "-G", "Ninja",
        f"-DCMAKE_PREFIX_PATH={os.path.join(torch_dir, 'share', 'cmake')}",
        f"-DFLAGOS_PYTHON_INCLUDE_DIR={sysconfig.get_paths()['include']}",
        f"-DFLAGOS_PYTHON_EXT_SUFFIX={sysconfig.get_config_var('EXT_SUFFIX')}",
        f"-DFLAGOS_WITH_CANN={'ON' if with_cann else 'OFF'}",
    ]


class CMakeBuild(build_ext):
    """Runs the CMake build; its outputs land in torch_fl/ and torch_fl/lib/."""

    def run(self):
        subprocess.check_call(cmake_configure_command())
        jobs = os.environ.get("MAX_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(BUILD_DIR), "--", f"-j{jobs}"])
        for ext in self.extensions:
            built = next((ROOT / "torch_fl").glob("_C.*.so"))
            target = Path(self.get_ext_fullpath(ext.name))
            if built.resolve() != target.resolve():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(built, target)
                shutil.copytree(ROOT / "torch_fl" / "lib", target.parent / "lib", dirs_exist_ok=True)


# pip runs this file as __main__; benchmarks/new_op.py imports it for
# cmake_configure_command.
if __name__ == "__main__":
    setup(
        name="torch_fl",
        version="0.1.0",
        description="Ascend NPUs as the PyTorch device flagos, with device-correct ACLNN kernels",
        packages=["torch_fl", "torch_fl.integrations"],
        package_data={"torch_fl": ["lib/*.so"]},
        ext_modules=[Extension("torch_fl._C", sources=[])],
        # `import torch` loads torch_fl (PyTorch's device-backend autoload),
        # so libraries that fix their device lists at import see flagos.
        entry_points={"torch.backends": ["torch_fl = torch_fl:_autoload"]},
        cmdclass={"build_ext": CMakeBuild},
        python_requires=">=3.10",
        install_requires=["torch==2.13.0"],
    )
