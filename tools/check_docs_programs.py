#!/usr/bin/env python3
"""Builds and runs the programs of docs/GETTING_STARTED.md against an installed tandem, from the docs' own text.

Each program is a section's `cmake` block (its CMakeLists.txt) and the `cpp` block after it (the body of
`main`, as the text around it says; its #include lines go on top, with <tandem/tandem.hpp>, and kernels it
only declares, "your kernels", get empty bodies). The `python` blocks of "First steps" run with the
installed module on PYTHONPATH. Each is built in a folder of its own against PREFIX (CMAKE_PREFIX_PATH
only: no other path, and no folder holding a libtandem on LD_LIBRARY_PATH), so an installed library without its run paths fails here as it
would for a user. A CMake developer warning is a failure too (a snippet a user copies must configure
cleanly).

    tools/check_docs_programs.py PREFIX WORK [--python PY] [--nvcc NVCC] [--mpiexec MPIEXEC]
                                 [--cuda-architectures LIST]

What runs: the C++ program always; the MPI one with 2 ranks on the CPU backend where the install has tandem_mpi and MPIEXEC
is given; the CUDA one is built where NVCC is given and run where `PREFIX/bin/tandem info` finds a usable
GPU; the Python blocks where PY is given and the install has the module (the CuPy / PyTorch block only with
a GPU). Exit status: 0 when everything that could run passed, 1 on a failure, 2 for a usage error.
Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "GETTING_STARTED.md")


def sections(text):
    """{heading: [(language, code), ...]} for the fenced blocks under each ## / ### heading."""
    out, heading, block, lang = {}, "", None, ""
    for line in text.splitlines():
        if block is None and re.match(r"^#{2,3} ", line):
            heading = line.lstrip("#").strip()
        elif block is None and line.startswith("```"):
            block, lang = [], line[3:].strip()
        elif block is not None and line.startswith("```"):
            out.setdefault(heading, []).append((lang, "\n".join(block)))
            block = None
        elif block is not None:
            block.append(line)
    return out


def program(blocks, heading):
    """The section's first cmake block and the cpp block after it."""
    cmake = cpp = None
    for lang, code in blocks.get(heading, []):
        if lang == "cmake" and cmake is None:
            cmake = code
        elif lang == "cpp" and cmake is not None and cpp is None:
            cpp = code
    if cmake is None or cpp is None:
        raise SystemExit(f"check_docs_programs: no cmake block followed by a cpp block under '{heading}' in {DOC}")
    return cmake, cpp


def main_source(cpp, header):
    """The body of main from the docs, with its #include lines and declared kernels moved to the top."""
    includes, kernels, body = [f"#include <{header}>", "#include <cstddef>", "#include <vector>"], [], []
    for line in cpp.splitlines():
        if line.startswith("#include"):
            includes.append(line)
        elif re.match(r"^__global__ void \w+\(.*\);", line):
            kernels.append(line.split(";")[0] + " {}  // (declared only in the docs: an empty kernel)")
        else:
            body.append("  " + line)
    return "\n".join(includes + [""] + kernels + ["", "int main(int argc, char** argv) {", "  (void)argc, (void)argv;"] +
                     body + ["  return 0;", "}", ""])


def run(cmd, what, env=None, cwd=None):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    output = r.stdout + r.stderr
    if r.returncode != 0:
        print(output)
        raise RuntimeError(f"{what} failed (exit {r.returncode})")
    return output


def build(name, cmake, source_name, source, prefix, work, extra):
    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "CMakeLists.txt"), "w") as f:
        f.write(cmake + "\n")
    with open(os.path.join(folder, source_name), "w") as f:
        f.write(source)
    # (--as-needed, as some distributions link by default: a program then records only the libraries it
    # calls directly, and each installed library must find its own dependencies by its run path.)
    out = run(["cmake", "-S", folder, "-B", os.path.join(folder, "build"), f"-DCMAKE_PREFIX_PATH={prefix}",
               "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed"] + extra, f"{name}: configuring")
    if "CMake Warning" in out or "CMake Deprecation Warning" in out:
        print(out)
        raise RuntimeError(f"{name}: configuring gives warnings")
    run(["cmake", "--build", os.path.join(folder, "build")], f"{name}: building")
    target = re.search(r"add_executable\((\w+)", cmake).group(1)
    return os.path.join(folder, "build", target)


def clean_env():
    """The environment without tandem's settings, and LD_LIBRARY_PATH without folders that hold a libtandem
    (the programs must find the install's libraries by their run paths; other folders, such as one that
    holds oneTBB on a machine where it is not installed system-wide, stay)."""
    env = dict(os.environ)
    for v in ("TANDEM_MODULE_PATH", "TANDEM_DEVICES", "TANDEM_BACKEND"):
        env.pop(v, None)
    keep = [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d and not glob.glob(os.path.join(d, "libtandem*"))]
    env["LD_LIBRARY_PATH"] = ":".join(keep)
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefix")
    ap.add_argument("work")
    ap.add_argument("--python", default="")
    ap.add_argument("--nvcc", default="")
    ap.add_argument("--mpiexec", default="")
    ap.add_argument("--cuda-architectures", default="90", help="CMAKE_CUDA_ARCHITECTURES of the CUDA program "
                    "(the install's own; default 90)")
    a = ap.parse_args()
    prefix, work = os.path.abspath(a.prefix), os.path.abspath(a.work)
    if not os.path.isdir(prefix):
        print(f"check_docs_programs: {prefix} is not an installed tandem", file=sys.stderr)
        return 2
    blocks = sections(open(DOC).read())
    env = clean_env()
    info = run([os.path.join(prefix, "bin", "tandem"), "info"], "tandem info", env=env)
    gpu = "auto picks: cuda" in info
    done, skipped, failed = [], [], []

    def attempt(name, fn):
        try:
            fn()
            done.append(name)
        except RuntimeError as e:
            print(f"FAILED: {e}")
            failed.append(name)

    def cxx():
        cmake, cpp = program(blocks, "Your first C++ program")
        exe = build("cxx", cmake, "main.cpp", main_source(cpp, "tandem/tandem.hpp"), prefix, work, [])
        print(run([exe], "the C++ program", env=env).strip())

    attempt("C++", cxx)

    has_mpi = bool(glob.glob(os.path.join(prefix, "lib*", "libtandem_mpi.so*")))
    if has_mpi and a.mpiexec:
        def mpi():
            cmake, cpp = program(blocks, "MPI")
            exe = build("mpi", cmake, "app.cpp", main_source(cpp, "tandem/mpi.hpp"), prefix, work, [])
            version = run([a.mpiexec, "--version"], "mpiexec --version").lower()
            flags = ["--allow-run-as-root", "--oversubscribe"] if re.search(r"open ?mpi|openrte", version) else []
            # (On the CPU: with CUDA each rank takes the GPU of its rank, and this machine may have one GPU.)
            print(run([a.mpiexec] + flags + ["-np", "2", exe], "the MPI program (2 ranks)",
                      env=dict(env, TANDEM_BACKEND="cpu")).strip())

        attempt("MPI", mpi)
    else:
        skipped.append("MPI (" + ("no --mpiexec" if has_mpi else "the install has no tandem_mpi") + ")")

    if a.nvcc:
        def cuda():
            cmake, cpp = program(blocks, "In a CUDA application")
            exe = build("cuda", cmake, "main.cu", main_source(cpp, "tandem/tandem.hpp"), prefix, work,
                        [f"-DCMAKE_CUDA_COMPILER={a.nvcc}", f"-DCMAKE_CUDA_ARCHITECTURES={a.cuda_architectures}"])
            if gpu:
                print(run([exe], "the CUDA program", env=env).strip())
            else:
                print("the CUDA program: built; not run (no usable GPU)")

        attempt("CUDA", cuda)
    else:
        skipped.append("CUDA (no --nvcc)")

    site = glob.glob(os.path.join(prefix, "lib*", "python3*", "*-packages"))
    if a.python and site:
        def python():
            penv = dict(env, PYTHONPATH=site[0])
            for lang, code in blocks.get("First steps: NumPy, CuPy, PyTorch", []):
                if lang != "python":
                    continue
                if "cupy" in code or "torch" in code:
                    ready = gpu and subprocess.run([a.python, "-c", "import cupy, torch"], capture_output=True).returncode == 0
                    if not ready:
                        print("the CuPy / PyTorch block: not run (" + ("no CuPy or PyTorch" if gpu else "no usable GPU") + ")")
                        continue
                run([a.python, "-c", code], "a Python block", env=penv, cwd=work)
                print("a Python block: ran")

        attempt("Python", python)
    else:
        skipped.append("Python (" + ("no --python" if site else "the install has no Python module") + ")")

    print(f"docs programs: {len(done)} ran ({', '.join(done)}), {len(failed)} failed ({', '.join(failed)}), "
          f"skipped: {', '.join(skipped) or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
