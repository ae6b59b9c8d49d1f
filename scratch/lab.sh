#!/usr/bin/env bash
# LAB ONLY (not committed): run locally built binaries on the device.
cd "$(dirname "$0")/.."
ln -sf libtandem.so.0.1.0 build/libtandem.so.0
export LD_LIBRARY_PATH=$PWD/build:$PWD/.deps/usr/lib/x86_64-linux-gnu:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
B=build/benchmarks/bench_cuda
if [[ " $* " == *" test "* ]]; then
  timeout 300 build/tests/tandem_tests --test-suite=cuda --test-case="${TESTS:-*matmul*,*float16*,*bf16*,*forms*,*batch*}" > /tmp/t.log 2>&1; echo "tests rc $?"
  grep -E "ERROR|FAILED|error" /tmp/t.log | head -30; tail -4 /tmp/t.log
fi
if [[ " $* " == *" bench "* ]]; then
  $B --benchmark_filter="${F:-kernel/cuda/(wgmma_tf32|cublas_tf32)/gemm/float/(1024|2048|4096|8192|8192x64x8192)/|(wgmma_bf16|cublas_gemm_ex)/matmul/bfloat16/(4096|8192)x}" 2>&1 | grep -E "^(kernel|float16|baseline)" | awk '{print $1, $NF, $(NF-1)}'
fi
if [[ " $* " == *" shapes "* ]]; then
  for sh in 0 1 2; do echo "shape $sh"; TANDEM_WGMMA_SHAPE=$sh $B --benchmark_filter="${SF:-kernel/cuda/wgmma_tf32/gemm/float/(1024|2048|8192x64x8192)/}" 2>&1 | grep -E "^kernel" | awk '{print $1, $NF, $(NF-1)}'; done
fi
