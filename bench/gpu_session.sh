#!/usr/bin/env bash
# One session on a machine with an NVIDIA GPU, in one command of under ten minutes: what the
# CUDA target needs a real GPU to show, each step under a time limit of its own, so that a
# step that hangs costs its own minutes and no more.
#
#   bash bench/gpu_session.sh run [OUT]   on the GPU machine, from the repository's root
#   bash bench/gpu_session.sh pack        here, for a GPU machine without tlmc's packages
#   bash bench/gpu_session.sh unpack      there: only puts the pack in place (run's step 2)
#
# run:
#   1. the GPU (nvidia-smi) and the toolkit (nvcc), and the target tlmc makes of them;
#   2. tlmc and its GPU test programs: unpacked from gpu-session.tar.xz where `pack` left
#      one, else built with the toolkit (cmake, Release, into build-gpu; this needs the
#      packages of scripts/install-deps.sh);
#   3. the GPU tests (the programs of ctest's label gpu): every example and shapes of our own
#      checked on the GPU at -O0 and -O1, --profile, -O2 measuring on the GPU;
#   4. the operator tests with the GPU as their only target (TLMC_OPS_GPU_ONLY=1: the
#      default schedule and two drawn at random of every operator model, checked against the
#      reference), in as many shards as there are cores;
#   5. bench/cuda_vs_cublas.py: W1-W6 at -O0 and -O1, then W1 and W4 at -O2, beside cuBLAS
#      and cuDNN, each time beside the analytic model's estimate of it (each profile kept,
#      call by call).
# Every step's limit is cut to what is left of 570 s, so the whole fits a 10-minute command.
# It writes OUT/gpu_session.txt (the steps, their status and time, then the tables) and a
# log per step beside it; OUT defaults to $OUT where that is set, else build-gpu-session.
# Exit status: 0 when every step passed, 1 otherwise, 3 without a GPU.
#
# pack: a Release build with Clang and LLVM linked statically (-DTLMC_STATIC_LLVM=ON, in
# build-gpu-pack) of tlmc and the two test programs, stripped, with the shared libraries
# they load that a CUDA machine does not have as standard (everything but the C and C++
# runtimes), found through their run path, and Clang's headers, which tlmc's in-process
# compiler reads: gpu-session.tar.xz (ignored by git), at most 48 MiB, for the machine to
# carry beside the working tree. The programs name this checkout's path and Clang's header
# folder; run links those paths to where it finds them when they are absent there.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PACK=gpu-session.tar.xz
PACK_BUILD=build-gpu-pack
PACK_LIMIT_MIB=48

die() {
  echo "gpu_session: $*" >&2
  exit 1
}

# The shared libraries `file` loads, less the C and C++ runtimes every Linux machine has.
carried_libraries() {
  ldd "$1" | awk '/=> \// { print $3 }' |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so'
}

pack() {
  command -v patchelf >/dev/null && [ -f /usr/lib/llvm-14/lib/libPolly.a ] ||
    die "pack needs patchelf and LLVM's static Polly (apt-get install patchelf libpolly-14-dev)"
  cmake -S . -B "$PACK_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTLMC_STATIC_LLVM=ON \
    -DTLMC_SHARED_LIBRARIES=ON -DTLMC_BUILD_BENCH=OFF >/dev/null || die "cmake failed"
  cmake --build "$PACK_BUILD" --target tlmc tests_gpu tests_ops || die "the build failed"
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/$PACK_BUILD/driver" "$stage/$PACK_BUILD/tests" "$stage/gpu-session/lib"
  local programs=(driver/tlmc tests/tests_gpu tests/tests_ops)
  for p in "${programs[@]}"; do
    strip -o "$stage/$PACK_BUILD/$p" "$PACK_BUILD/$p" || die "strip $p failed"
    # Both folders lie two below the root: the libraries are at ../../gpu-session/lib.
    patchelf --force-rpath --set-rpath '$ORIGIN/../../gpu-session/lib' "$stage/$PACK_BUILD/$p" ||
      die "patchelf $p failed"
    carried_libraries "$PACK_BUILD/$p" | xargs -r cp -Lt "$stage/gpu-session/lib" ||
      die "copying the libraries of $p failed"
  done
  # Libraries with a run path of their own (tlmc's: the build's folders) find each other
  # beside themselves.
  for l in "$stage"/gpu-session/lib/*; do
    [ -n "$(patchelf --print-rpath "$l")" ] || continue
    patchelf --force-rpath --set-rpath '$ORIGIN' "$l" || die "patchelf $l failed"
  done
  local resource
  resource=$(find /usr/lib/llvm-14/lib/clang -mindepth 1 -maxdepth 1 -type d | head -1)
  [ -d "$resource/include" ] || die "no Clang resource folder under /usr/lib/llvm-14/lib/clang"
  mkdir -p "$stage/gpu-session/clang"
  cp -r "$resource/include" "$stage/gpu-session/clang/"
  echo "$REPO" >"$stage/gpu-session/source_dir"
  echo "$resource" >"$stage/gpu-session/clang_resource_dir"
  tar -C "$stage" -cf - "$PACK_BUILD" gpu-session | xz -9 -T0 >"$PACK.part" || die "tar failed"
  local mib=$(($(stat -c %s "$PACK.part") / 1048576))
  if [ "$mib" -gt "$PACK_LIMIT_MIB" ]; then
    rm -f "$PACK.part"
    die "the pack is $mib MiB, over $PACK_LIMIT_MIB: it would not travel beside the working tree"
  fi
  mv "$PACK.part" "$PACK"
  echo "gpu_session: $PACK ($mib MiB): carry it, then run 'bash bench/gpu_session.sh run'"
}

# run's state: the summary file, the seconds since the start, the failures.
SUMMARY=
START=$SECONDS
FAILED=0

# step NAME SECONDS COMMAND...: runs COMMAND under a limit, its output in OUT/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  # Within the session's 570 s, whatever a step asks for (10 s at least).
  local left=$((570 - (SECONDS - START)))
  [ "$limit" -gt "$left" ] && limit=$left
  [ "$limit" -lt 10 ] && limit=10
  local log="$OUTDIR/$name.log" begun=$SECONDS status
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  status=$?
  local verdict=passed
  if [ $status -eq 124 ] || [ $status -eq 137 ]; then
    verdict="stopped at its limit of $limit s"
  elif [ $status -ne 0 ]; then
    verdict="failed ($status)"
  fi
  [ "$verdict" = passed ] || FAILED=1
  printf '%-28s %-32s %5d s  (log: %s.log)\n' "$name" "$verdict" $((SECONDS - begun)) "$name" |
    tee -a "$SUMMARY"
  return $status
}

# The operator tests in one shard per core, at once, less the bf16 ones (CPU targets'
# alone); fails if any shard failed.
sharded_operator_tests() {
  local shards
  shards=$(nproc)
  local pids=() failed=0
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i TLMC_OPS_GPU_ONLY=1 \
      "$BUILD/tests/tests_ops" --gtest_brief=1 --gtest_filter=-Bf16TileProducts.*:Bf16Products.* \
      >"$OUTDIR/operators-shard-$i.txt" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  cat "$OUTDIR"/operators-shard-*.txt
  rm -f "$OUTDIR"/operators-shard-*.txt
  return $failed
}

# The packed programs in place: the paths they were built with lead to this checkout.
unpack() {
  tar -xJf "$PACK" || return 1
  local source resource
  source=$(cat gpu-session/source_dir)
  resource=$(cat gpu-session/clang_resource_dir)
  if [ "$source" != "$REPO" ] && [ ! -e "$source" ]; then
    mkdir -p "$(dirname "$source")" && ln -s "$REPO" "$source" || return 1
  fi
  if [ ! -e "$resource/include" ]; then
    mkdir -p "$resource" && ln -s "$REPO/gpu-session/clang/include" "$resource/include" || return 1
  fi
  ldd "$PACK_BUILD/driver/tlmc" | grep "not found" && return 1
  "$PACK_BUILD/driver/tlmc" --version
}

build() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTLMC_BUILD_BENCH=OFF &&
    cmake --build build-gpu --target tlmc tests_gpu tests_ops
}

run() {
  OUTDIR=${1:-${OUT:-$REPO/build-gpu-session}}
  mkdir -p "$OUTDIR"
  OUTDIR=$(cd "$OUTDIR" && pwd)
  SUMMARY=$OUTDIR/gpu_session.txt
  echo "gpu_session at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u)" >"$SUMMARY"
  if ! step gpu 60 sh -c 'nvidia-smi -L && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv && ldd --version | head -1'; then
    cat "$OUTDIR/gpu.log" >>"$SUMMARY"
    exit 3
  fi
  cat "$OUTDIR/gpu.log" >>"$SUMMARY"
  # Where tlmc looks too: PATH, then CUDA's usual prefix.
  step nvcc 30 sh -c '"$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version'

  if [ -f "$PACK" ]; then
    BUILD=$PACK_BUILD
    step unpack 120 bash -c unpack || exit 1
  else
    BUILD=build-gpu
    step build 420 bash -c build || exit 1
  fi
  local tlmc=$REPO/$BUILD/driver/tlmc
  step target 60 "$tlmc" --print-target --target cuda
  cat "$OUTDIR/target.log" >>"$SUMMARY"
  local none=$OUTDIR/no-tuning-records.db
  step gpu-tests 150 env TLMC_TUNING_DB="$none" "$BUILD/tests/tests_gpu"
  export OUTDIR BUILD
  step operators-on-the-gpu 180 env TLMC_TUNING_DB="$none" TLMC_RANDOM_SCHEDULES=2 \
    bash -c sharded_operator_tests
  step cuda-vs-cublas-O0-O1 150 python3 -u bench/cuda_vs_cublas.py --tlmc "$tlmc" --levels 0,1 \
    --work "$OUTDIR/cuda"
  # -O2 measures 32 candidates a kernel on the GPU: a product and a convolution, in what is
  # left of the session.
  step cuda-vs-cublas-O2 570 python3 -u bench/cuda_vs_cublas.py --tlmc "$tlmc" --levels 2 \
    --workloads W1,W4 --work "$OUTDIR/cuda"
  # The tables, else (a step stopped at its limit) the workloads it finished.
  for s in cuda-vs-cublas-O0-O1 cuda-vs-cublas-O2; do
    { echo; echo "## $s"; sed -n '/^| workload/,$p' "$OUTDIR/$s.log" |
      grep . || grep -E '^W[0-9] -O' "$OUTDIR/$s.log"; } >>"$SUMMARY"
  done
  echo "total: $((SECONDS - START)) s" | tee -a "$SUMMARY"
  exit $FAILED
}

# The functions `step` runs through bash -c.
export -f unpack build sharded_operator_tests
export REPO PACK PACK_BUILD

case "${1:-}" in
  pack) pack ;;
  run) run "${2:-}" ;;
  unpack) unpack ;;
  *) die "usage: bash bench/gpu_session.sh run [OUT] | pack | unpack" ;;
esac
