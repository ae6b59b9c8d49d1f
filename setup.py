"""`pip install .`: the Python module tandem, built by the project's CMake (pybind11's cmake_example pattern on
setuptools, since scikit-build-core is not packaged by Debian 12).

build_ext configures the project into <setuptools build temp>/cmake (under build-pip/, not the CMake presets'
build/), builds only `tandem_python_package` (the module, libtandem and, when the CUDA backend is built, its
run-time modules libtandem_cuda.so / libtandem_nccl.so) and puts into the wheel what
<build>/python/wheel_files.txt lists:

    site-packages/tandem.cpython-*.so     the extension (RUNPATH $ORIGIN/tandem.libs)
    site-packages/tandem.pyi              its type stubs
    site-packages/tandem.libs/            libtandem.so.0 and the CUDA modules next to it, where libtandem
                                          looks for them (numpy.libs' convention)

The CUDA backend is built when CMake finds nvcc (TANDEM_WITH_CUDA=AUTO: /usr/local/cuda/bin/nvcc, else CUDACXX or
nvcc on PATH), as tools/setup.sh does. More CMake arguments go in the environment variable CMAKE_ARGS, e.g.
CMAKE_ARGS="-DTANDEM_WITH_CUDA=OFF"; CMAKE_BUILD_PARALLEL_LEVEL sets the number of compile jobs.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*tandem\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", text)
    if not m:
        raise RuntimeError("setup.py: no 'project(tandem VERSION x.y.z' in CMakeLists.txt")
    return m.group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        ext_path = Path(self.get_ext_fullpath(ext.name)).resolve()
        site = ext_path.parent  # the wheel's site-packages
        build = Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)

        args = [
            f"-DPython_EXECUTABLE={sys.executable}",  # the interpreter pip runs: the module is built for it
            "-DCMAKE_BUILD_TYPE=Release",
            "-DTANDEM_BUILD_PYTHON=ON",
            "-DTANDEM_BUILD_TESTS=OFF",
            "-DTANDEM_BUILD_BENCHMARKS=OFF",
            "-DTANDEM_BUILD_TOOLS=OFF",
            "-DTANDEM_WITH_MPI=OFF",
            "-DTANDEM_WITH_CUDA=AUTO",  # as tools/setup.sh; given each time, so that no earlier CMAKE_ARGS stays cached
            # The built files carry their installed RUNPATH ($ORIGIN/tandem.libs), since they are copied as built.
            "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
        ]
        if "CMAKE_GENERATOR" not in os.environ and not (build / "CMakeCache.txt").exists() and shutil.which("ninja"):
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("CMAKE_ARGS", ""))  # last: the user's arguments win
        jobs = ["-j", str(self.parallel)] if self.parallel else []  # else CMAKE_BUILD_PARALLEL_LEVEL or the tool's

        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "tandem_python_package", *jobs], check=True)

        shutil.rmtree(site / "tandem.libs", ignore_errors=True)  # no module left from an earlier build
        for line in (build / "python" / "wheel_files.txt").read_text().splitlines():
            folder, src = line.split("\t")
            dest = ext_path if folder == "module" else site / folder / Path(src).name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)  # libtandem.so.0 is a symbolic link: its target's bytes, under its name
            shutil.copymode(src, dest)
            print(f"setup.py: {dest.relative_to(site)} <- {src}")


setup(
    version=project_version(),
    ext_modules=[CMakeExtension("tandem")],
    packages=[],  # no Python packages: setuptools' discovery would look at engine/, python/, tools/, ...
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}},  # build/ is the CMake presets' folder
    zip_safe=False,
)
