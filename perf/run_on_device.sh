#!/usr/bin/env bash
# Builds, checks and times cispmv on a GPU host in one go (the `device` tool's machine: no package
# registry, so the Kokkos sources come along as a tarball made by `cmake/bootstrap.sh --pack`).
#
#   perf/run_on_device.sh STAGE... (stages: build prebuilt test-cuda test run bench bench-quick bench-large bench-fci bench-fci-large
#                                   bench-host bench-host-large ci-matrix ci-e2e bench-blocks bench-blocks-large
#                                   bench-csell bench-csell-large mpi mpi-gpus mpi-scaling mpi-large ci-large ci-roots
#                                   ncu ncu-csell ncu-csell-unroll
#                                   ncu-blocks nsys-davidson report
#                                   build-kokkos4 test-kokkos4 bench-kokkos4)
#
# The *-kokkos4 stages do the same against Kokkos 4.6.01 + Kokkos Kernels 4.6.02 (preset cuda-kokkos4),
# from KOKKOS4_TGZ (default .deps/kokkos4-src.tgz, made here by
# `cmake/bootstrap.sh --kokkos 4 --source ../shared/deps --pack .deps/kokkos4-src.tgz`).
#
# `prebuilt` unpacks programs built elsewhere instead of `build` (PREBUILT, default .device/cuda-bin.tar.xz, made by
# perf/pack_binaries.sh: carry .device); then test-cuda and the bench stages that use spmv_bench and cispmv run.
# Environment: RES (results folder, default perf/out; the device tool fetches one tarball of it), KOKKOS_TGZ (default .deps/kokkos-src.tgz),
# CISPMV_COMMIT (recorded in the reports), ARCH (Kokkos arch, default HOPPER90), JOBS, TARGETS (build only
# these targets, e.g. "cispmv_test_cuda cispmv_cli spmv_bench", where a call's time is short), BLOCK_MATRICES
# (bench-blocks), BLOCK_VECTORS and BLOCK_FILTER (bench-blocks-large: its k and its benchmark filter),
# MPI_SCALING_RUNS (mpi-scaling: ';'-separated runs, each a rank count and cispmv ci options), LARGE_FORMATS
# (mpi-large: the --format of each run, default "auto csell").
# Each stage appends to $RES/log.txt; numbers land in $RES as JSON / Markdown / PNG.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RES=${RES:-perf/out}
KOKKOS_TGZ=${KOKKOS_TGZ:-.deps/kokkos-src.tgz}
KOKKOS4_TGZ=${KOKKOS4_TGZ:-.deps/kokkos4-src.tgz}
ARCH=${ARCH:-HOPPER90}
PREBUILT=${PREBUILT:-.device/cuda-bin.tar.xz}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$RES"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-cores}
bench=build/cuda/perf/spmv_bench
cli=build/cuda/src/app/cispmv
log() { echo "=== $(date -u +%H:%M:%S) $*" | tee -a "$RES/log.txt"; }

for stage in "$@"; do
  case "$stage" in
    build)
      log "device"; nvidia-smi | tee "$RES/nvidia-smi.txt"
      log "bootstrap Kokkos ($ARCH)"
      bash cmake/bootstrap.sh --preset cuda --arch "$ARCH" --source "$KOKKOS_TGZ" --jobs "$JOBS" >"$RES/bootstrap.txt" 2>&1 ||
        { tail -30 "$RES/bootstrap.txt"; exit 1; }
      log "configure + build (cuda preset)"
      cmake --preset cuda >"$RES/configure.txt" 2>&1 || { tail -30 "$RES/configure.txt"; exit 1; }
      cmake --build --preset cuda --parallel "$JOBS" ${TARGETS:+--target $TARGETS} >"$RES/build.txt" 2>&1 ||
        { grep -B2 -A8 error "$RES/build.txt" | head -60; exit 1; }
      log "built" ;;
    test)
      log "ctest (cuda preset: serial, openmp, cuda, host, cross-validation, consumer)"
      ctest --preset cuda 2>&1 | tee "$RES/ctest.txt" | tail -15
      log "compute-sanitizer memcheck on the CUDA test executable"
      timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build/cuda/unit_tests/cispmv_test_cuda \
        --gtest_filter='*PaperExample*:*RandomIrregular*:*EveryLaunchShape*' >"$RES/memcheck.txt" 2>&1
      echo "memcheck exit code $? ($(grep -c 'ERROR SUMMARY: 0 errors' "$RES/memcheck.txt") clean summaries)" | tee -a "$RES/log.txt"
      log "compute-sanitizer racecheck (shared memory: the staged hybrid kernel) on the CUDA test executable"
      timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 build/cuda/unit_tests/cispmv_test_cuda \
        --gtest_filter='*PaperExample*:*EveryLaunchShape*' >"$RES/racecheck.txt" 2>&1
      echo "racecheck exit code $? ($(grep -c 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' "$RES/racecheck.txt") clean summaries)" | tee -a "$RES/log.txt" ;;
    prebuilt)
      # programs built on another x86-64 host by perf/pack_binaries.sh (no build here: a call's minutes go to runs)
      log "device"; nvidia-smi | tee "$RES/nvidia-smi.txt"
      for f in $PREBUILT; do
        log "unpack $f"
        tree=$(tar tJf "$f" | grep -m1 -oE '^(\./)?build/[^/]+/PACKED$') || { echo "$f: no build/<preset>/PACKED"; exit 1; }
        tar xJf "$f" || exit 1
        tee -a "$RES/log.txt" <"$tree"
        data=$(sed -n 's/^source //p' "$tree")/unit_tests/data  # the tests' data, by the path they were built with
        if [ ! -e "$data" ]; then mkdir -p "$(dirname "$data")" && ln -s "$PWD/unit_tests/data" "$data" || exit 1; fi
        for lib in "$(dirname "$tree")"/lib/*; do  # (the packed libraries this host has not)
          name=$(basename "$lib")  # (awk reads all of ldconfig's list: no early exit for pipefail to see)
          [ -e "$lib" ] && ! ldconfig -p | awk -v n="$name" '$1 == n {f = 1} END {exit !f}' &&
            cp "$lib" /usr/local/lib/ && echo "installed $name"
        done
        ldconfig
        for p in "$(dirname "$tree")"/{perf/spmv_bench,src/app/cispmv,unit_tests/cispmv_test_cuda}; do
          [ -e "$p" ] || continue
          if ldd "$p" 2>&1 | grep "not found" >/dev/null; then  # (versions, e.g. GLIBCXX_..., on stderr)
            ldd "$p" 2>&1 | grep "not found"; echo "$p: libraries missing"; exit 1
          fi
        done
      done
      log "unpacked" ;;
    test-cuda)
      log "the CUDA test executable alone (built with TARGETS=cispmv_test_cuda ...)"
      build/cuda/unit_tests/cispmv_test_cuda 2>&1 | tee "$RES/test-cuda.txt" | tail -5 ;;
    build-kokkos4)
      log "bootstrap Kokkos 4.6.01 + Kokkos Kernels 4.6.02 ($ARCH)"
      bash cmake/bootstrap.sh --preset cuda --kokkos 4 --arch "$ARCH" --source "$KOKKOS4_TGZ" --jobs "$JOBS" \
        >"$RES/bootstrap-kokkos4.txt" 2>&1 || { tail -30 "$RES/bootstrap-kokkos4.txt"; exit 1; }
      log "configure + build (cuda-kokkos4 preset)"
      cmake --preset cuda-kokkos4 >"$RES/configure-kokkos4.txt" 2>&1 || { tail -30 "$RES/configure-kokkos4.txt"; exit 1; }
      cmake --build --preset cuda-kokkos4 --parallel "$JOBS" >"$RES/build-kokkos4.txt" 2>&1 ||
        { grep -B2 -A8 error "$RES/build-kokkos4.txt" | head -60; exit 1; }
      log "built (Kokkos 4)" ;;
    test-kokkos4)
      log "ctest (cuda-kokkos4 preset)"
      ctest --preset cuda-kokkos4 2>&1 | tee "$RES/ctest-kokkos4.txt" | tail -15 ;;
    bench-kokkos4)
      log "spmv_bench with Kokkos 4.6 (Kokkos Kernels 4.6.02 native and merge path): paper32k-1, frozen-core FCI"
      for m in paper32k-1 fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps; do
        build/cuda-kokkos4/perf/spmv_bench --matrix "$m" --iterations 20 --repetitions 5 --out-dir "$RES/kokkos4" \
          --benchmark_filter='-unstaged' >>"$RES/bench-kokkos4.txt" 2>&1
        echo "$m: exit code $?" | tee -a "$RES/log.txt"
      done ;;
    run)
      log "cispmv run (main job, default matrix)"
      "$cli" run --repetitions 50 --json "$RES/run-paper32k-1.json" >"$RES/run-paper32k-1.txt" 2>"$RES/run-paper32k-1.err"
      echo "exit code $?" | tee -a "$RES/log.txt"; tail -25 "$RES/run-paper32k-1.txt" ;;
    bench)
      log "spmv_bench paper32k-1 on the GPU, with the launch-shape sweep"
      "$bench" --matrix paper32k-1 --sweep --iterations 50 --repetitions 7 --out-dir "$RES" >"$RES/bench-paper32k-1.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    bench-quick)
      log "spmv_bench paper32k-1 on the GPU (every format, no sweep)"
      "$bench" --matrix paper32k-1 --iterations 50 --repetitions 7 --out-dir "$RES" >"$RES/bench-paper32k-1.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    bench-fci)
      log "spmv_bench on a real CI Hamiltonian built in-process: H2O/6-31G frozen-core full CI (level 8, all irreps)"
      "$bench" --matrix fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps --iterations 20 --repetitions 5 \
        --out-dir "$RES" --benchmark_filter='-unstaged' >"$RES/bench-h2o_631g_fc.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    bench-fci-large|bench-csell-large)
      # bench-csell-large: csell's thread-per-row kernels beside Kokkos Kernels and cuSPARSE CSR only
      if [ "$stage" = bench-fci-large ]; then
        filter='kokkos|cusparse|/csr/|/ell/|/ellr/scalar|/sell/|/sellr/scalar|/hybrid/vector/iter|/hybrid16/vector|/csell/'
        out="$RES/bench-h2o_631g.txt"
      else
        filter='/csell/|kokkos-kernels/native|cusparse-csr/default|/sell/scalar'
        out="$RES/bench-csell-large.txt"
      fi
      log "spmv_bench ($stage) on H2O/6-31G all-electron full CI (level 10, 1.09e9 nonzeros) built in-process"
      "$bench" --matrix fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps --iterations 10 --repetitions 3 \
        --out-dir "$RES" --benchmark_filter="$filter" >"$out" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    bench-csell)
      log "spmv_bench: csell's thread-per-row kernel (each unroll factor) beside Kokkos Kernels and cuSPARSE: frozen-core FCI, paper32k-1"
      for m in fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps paper32k-1; do
        "$bench" --matrix "$m" --iterations 20 --repetitions 5 --out-dir "$RES" \
          --benchmark_filter='/csell/|kokkos-kernels/native|cusparse|/sell/scalar|hybrid16/vector' >>"$RES/bench-csell.txt" 2>&1
        echo "$m: exit code $?" | tee -a "$RES/log.txt"
      done ;;
    ncu-csell-unroll)
      log "ncu: csell's thread-per-row kernel with 8 (the automatic factor at 245K rows) and 4 entries decoded together, frozen-core FCI Hamiltonian"
      ncu --clock-control none --target-processes all --kernel-name-base demangled -k regex:'SpmvFunctor' \
        --launch-count 8 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
        --section WarpStateStats --section LaunchStats "$bench" --matrix fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps \
        --iterations 1 --repetitions 1 --out-dir /tmp --benchmark_filter='csell/scalar/(unroll:4/)?iterations' >"$RES/ncu-csell-unroll.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    ncu-blocks)
      log "ncu: csell's single-vector kernel and its lane-shape block kernel at k = 8 on the frozen-core FCI Hamiltonian"
      ncu --clock-control none --target-processes all --kernel-name-base demangled -k regex:'SpmvFunctor|SpmvBlockFunctor' \
        --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats "$bench" \
        --matrix fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps \
        --vectors 8 --iterations 1 --repetitions 1 --out-dir /tmp --benchmark_filter='block/k:8/csell/lanes/|device/csell/scalar' \
        >"$RES/ncu-blocks.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    nsys-davidson)
      log "nsys: where cispmv ci --roots 10 spends its GPU time (H2O/6-31G full CI)"
      timeout 90 nsys profile -o /tmp/ci-roots10 --force-overwrite true "$cli" ci unit_tests/data/h2o_631g.fcidump \
        --level 10 --all-irreps --roots 10 >"$RES/nsys-ci-roots10.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt"
      nsys stats --report cuda_gpu_kern_sum --report cuda_api_sum --format csv --output "$RES/nsys-ci-roots10" \
        /tmp/ci-roots10.nsys-rep >>"$RES/nsys-ci-roots10.txt" 2>&1
      echo "stats exit code $?" | tee -a "$RES/log.txt" ;;
    ci-roots)
      log "cispmv ci, H2O/6-31G full CI: the automatic choice for 1, 5 and 10 roots (products + conversion), and CSR"
      for run in "--roots 1" "--roots 5" "--roots 10" "--roots 10 --format csr" "--roots 10 --format csell"; do
        tag=$(echo "$run" | tr -d ' -')
        /usr/bin/time -v "$cli" ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps $run --json "$RES/ci-$tag.json" \
          >"$RES/ci-$tag.txt" 2>"$RES/ci-$tag.time"
        echo "ci $run: exit code $?" | tee -a "$RES/log.txt"
        grep -E "Elapsed" "$RES/ci-$tag.time" | tee -a "$RES/log.txt"
        grep -E "^automatic|^timings|^total" "$RES/ci-$tag.txt" | tee -a "$RES/log.txt"
      done ;;
    ncu-csell)
      log "ncu: csell and sell kernels on the frozen-core FCI Hamiltonian"
      ncu --clock-control none --target-processes all --kernel-name-base demangled -k regex:'SpmvFunctor' \
        --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
        --section WarpStateStats "$bench" --matrix fcidump:unit_tests/data/h2o_631g_fc.fcidump:8 --iterations 1 \
        --repetitions 1 --out-dir /tmp --benchmark_filter='/csell/|/sell/scalar' >"$RES/ncu-csell.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    bench-large)
      log "spmv_bench scaled-1048576 on the GPU"
      "$bench" --matrix scaled-1048576 --iterations 10 --repetitions 5 --out-dir "$RES" \
        --benchmark_filter='-unstaged' >"$RES/bench-scaled.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    bench-host)
      log "spmv_bench paper32k-1 on the host (OpenMP, $(nproc) cores)"
      "$bench" --space host --matrix paper32k-1 --sweep --iterations 20 --repetitions 5 --out-dir "$RES" \
        --benchmark_filter='kokkos|/csr/|hybrid|sell' >"$RES/bench-host.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    ci-matrix)
      log "a real CI matrix: H2O/6-31G(d) CISD (all irreps) from its FCIDUMP, energies, then every format on it"
      "$cli" ci unit_tests/data/h2o_631gd.fcidump --level 2 --all-irreps --format hybrid \
        --write-mtx /tmp/h2o_631gd_cisd.mtx >"$RES/ci-h2o_631gd_cisd.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt"
      "$cli" run /tmp/h2o_631gd_cisd.mtx --repetitions 50 --json "$RES/run-h2o_631gd_cisd.json" \
        >"$RES/run-h2o_631gd_cisd.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt"
      "$bench" --matrix /tmp/h2o_631gd_cisd.mtx --iterations 100 --repetitions 5 --out-dir "$RES" \
        >"$RES/bench-h2o.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    ci-e2e)
      log "cispmv ci end to end (read, reference, space, H built on the GPU, csell encoded there, Davidson)"
      for run in "h2o_631g.fcidump --level 10 --all-irreps" "h2o_631g.fcidump --level 10 --all-irreps --format csr" \
                 "h2o_631g.fcidump --level 10 --all-irreps --roots 5" \
                 "h2o_631g.fcidump --level 10 --all-irreps --roots 5 --format csr" \
                 "h2o_631g.fcidump --level 10" "h2o_631g_fc.fcidump --level 8 --all-irreps" \
                 "h2o_631g_fc.fcidump --level 8 --roots 5" "h2o_631g_pitzer.fcidump --level 2"; do
        tag=$(echo "$run" | tr ' ' '_' | tr -d '-' | tr '/' '_')
        /usr/bin/time -v "$cli" ci unit_tests/data/$run --json "$RES/ci-$tag.json" >"$RES/ci-$tag.txt" 2>"$RES/ci-$tag.time"
        echo "ci $run: exit code $?" | tee -a "$RES/log.txt"
        grep -E "Elapsed|Maximum resident" "$RES/ci-$tag.time" | tee -a "$RES/log.txt"
        grep -E "^automatic|^converted|^timings|^total|^  iterations|^     [1-5] " "$RES/ci-$tag.txt" | tee -a "$RES/log.txt"
      done ;;
    bench-blocks)
      log "spmv_bench, several vectors (k = 1, 2, 4, 8, 16): frozen-core FCI (all irreps), paper32k-1"
      for m in ${BLOCK_MATRICES:-fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps paper32k-1}; do
        timeout 240 "$bench" --matrix "$m" --vectors 1,2,4,8,16 --iterations 20 --repetitions 3 --out-dir "$RES/blocks" \
          --benchmark_filter='block/|kokkos-kernels/native|cusparse-csr/default|cusparse-sell|/csr/vector|/csell/|/hybrid/vector/iter' \
          >>"$RES/bench-blocks.txt" 2>&1
        echo "$m: exit code $?" | tee -a "$RES/log.txt"
      done ;;
    bench-blocks-large)
      log "spmv_bench, several vectors, on H2O/6-31G all-electron full CI (1.09e9 nonzeros)"
      timeout 300 "$bench" --matrix fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps --vectors "${BLOCK_VECTORS:-1,2,4,8,16}" \
        --iterations 5 --repetitions 3 --out-dir "$RES/blocks" \
        --benchmark_filter="${BLOCK_FILTER:-block/k:[0-9]+/(csell/(lanes|rows)|kokkos|cusparse-spmm/row)|kokkos-kernels/native|cusparse-csr/default|/csell/scalar}" \
        >"$RES/bench-blocks-large.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    mpi)
      log "MPI: $(mpiexec --version 2>&1 | head -1); the distributed tests on 1 and 2 ranks (sharing the GPU)"
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
      ompi_info 2>/dev/null | grep -i "cuda" | head -5 | tee -a "$RES/log.txt"
      for n in 1 2; do
        timeout 120 mpiexec -n $n build/cuda/unit_tests/cispmv_test_mpi >"$RES/mpi-test-$n.txt" 2>&1
        echo "cispmv_test_mpi on $n ranks: exit code $? ($(grep -c 'PASSED' "$RES/mpi-test-$n.txt") ranks passed)" | tee -a "$RES/log.txt"
      done
      log "cispmv ci under mpirun on one GPU (functional: the ranks share it), H2O/6-31G full CI"
      for run in "1 allgather" "2 allgather" "2 halo"; do
        set -- $run
        timeout 120 mpiexec -n $1 "$cli" ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --exchange $2 \
          --json "$RES/mpi-ci-$1-$2.json" >"$RES/mpi-ci-$1-$2.txt" 2>&1
        echo "mpiexec -n $1 cispmv ci --exchange $2: exit code $?" | tee -a "$RES/log.txt"
        grep -E "davidson:|^     1 |^  rank|^     [0-9] |^total" "$RES/mpi-ci-$1-$2.txt" | tee -a "$RES/log.txt"
      done ;;
    mpi-gpus)
      # issue 15 on a machine of several GPUs, one GPU per rank (cispmv picks it by node-local rank;
      # the test executable is told how many GPUs there are)
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      gpus=$(nvidia-smi -L | wc -l)
      log "MPI on $gpus GPUs: $(mpiexec --version 2>&1 | head -1); how the GPUs are linked:"
      nvidia-smi topo -m 2>&1 | tee "$RES/topo.txt" | tee -a "$RES/log.txt"
      ompi_info 2>/dev/null | grep -i "cuda" | head -5 | tee -a "$RES/log.txt"
      for n in 1 $gpus; do
        timeout 180 mpiexec -n $n build/cuda/unit_tests/cispmv_test_mpi --kokkos-num-devices=$gpus \
          >"$RES/mpi-test-$n.txt" 2>&1
        echo "cispmv_test_mpi on $n ranks ($gpus GPUs): exit code $? ($(grep -c 'PASSED' "$RES/mpi-test-$n.txt") ranks passed)" | tee -a "$RES/log.txt"
      done ;;
    mpi-scaling)
      # the distributed SpMV and solve on 1 .. all GPUs: H2O/6-31G all-electron full CI (1.09e9 nonzeros),
      # products timed after the solve (--spmv-repetitions), one GPU per rank
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      gpus=$(nvidia-smi -L | wc -l)
      log "cispmv ci, one process, one GPU (the single-process path): H2O/6-31G full CI"
      /usr/bin/time -v "$cli" ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --json "$RES/scaling-single.json" \
        >"$RES/scaling-single.txt" 2>"$RES/scaling-single.time"
      echo "exit code $?" | tee -a "$RES/log.txt"
      grep -E "^automatic|^  davidson|^     1 |^total" "$RES/scaling-single.txt" | tee -a "$RES/log.txt"
      IFS=';' read -ra runs <<<"${MPI_SCALING_RUNS:-1;2;2 --no-overlap;2 --exchange halo;4;4 --no-overlap}"
      for run in "${runs[@]}"; do
        set -- $run
        n=$1; shift
        [ "$n" -gt "$gpus" ] && continue
        tag="scaling-$n$(echo "$*" | tr -d ' -')"
        /usr/bin/time -v timeout 240 mpiexec -n $n "$cli" ci unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps \
          --distributed --spmv-repetitions 50 "$@" --json "$RES/$tag.json" >"$RES/$tag.txt" 2>"$RES/$tag.time"
        echo "mpiexec -n $n cispmv ci $* (H2O/6-31G full CI): exit code $?" | tee -a "$RES/log.txt"
        grep -E "^hamiltonian|davidson:|^  davidson|^     1 |^spmv|^  rank|^     [0-9] |^total" "$RES/$tag.txt" | tee -a "$RES/log.txt"
      done ;;
    ci-large)
      # the same space in one process on one GPU: its CSR (~133 GB) does not fit beside its csell, so
      # csell is built in blocks of rows (to_compressed_sell_by_blocks)
      log "H2O/6-31G(d) frozen-core full CI (9,363,600 determinants) in one process on one GPU"
      /usr/bin/time -v timeout 400 "$cli" ci unit_tests/data/h2o_631gd_fc.fcidump --level 8 --all-irreps \
        --json "$RES/ci-large.json" >"$RES/ci-large.txt" 2>"$RES/ci-large.time"
      echo "exit code $?" | tee -a "$RES/log.txt"
      grep -vE "^  hamiltonian (count|fill)" "$RES/ci-large.txt" | tail -16 | tee -a "$RES/log.txt"
      grep -E "Elapsed|Maximum resident" "$RES/ci-large.time" | tee -a "$RES/log.txt" ;;
    mpi-large)
      # H2O/6-31G(d) frozen-core full CI without symmetry: 9,363,600 determinants, ~1.1e10 nonzeros
      # (unit_tests/data/h2o_631gd_fc.fcidump, from h2o_631gd.fcidump by freeze_core_fcidump.py)
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      gpus=$(nvidia-smi -L | wc -l)
      log "H2O/6-31G(d) frozen-core full CI on one GPU: expected to be refused (its CSR does not fit)"
      timeout 120 mpiexec -n 1 "$cli" ci unit_tests/data/h2o_631gd_fc.fcidump --level 8 --all-irreps --distributed \
        >"$RES/large-1.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt"; tail -3 "$RES/large-1.txt" | tee -a "$RES/log.txt"
      for format in ${LARGE_FORMATS:-auto csell}; do
        log "H2O/6-31G(d) frozen-core full CI on $gpus GPUs, --format $format"
        tag="large-$gpus-$format"
        /usr/bin/time -v timeout 300 mpiexec -n $gpus "$cli" ci unit_tests/data/h2o_631gd_fc.fcidump --level 8 --all-irreps \
          --format $format --spmv-repetitions 10 --json "$RES/$tag.json" >"$RES/$tag.txt" 2>"$RES/$tag.time"
        echo "exit code $?" | tee -a "$RES/log.txt"
        grep -vE "^  hamiltonian (count|fill)" "$RES/$tag.txt" | tail -16 | tee -a "$RES/log.txt"
        grep -E "Elapsed|Maximum resident" "$RES/$tag.time" | tee -a "$RES/log.txt"
      done ;;
    bench-host-large)
      log "spmv_bench scaled-262144 (3 GB, larger than the caches) on the host (OpenMP, $(nproc) cores)"
      "$bench" --space host --matrix scaled-262144 --iterations 5 --repetitions 3 --out-dir "$RES" \
        --benchmark_filter='kokkos|/csr/|hybrid|sell' >"$RES/bench-host-large.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    ncu)
      log "ncu: hybrid vector kernel (staged and not) on paper32k-1 (Kokkos Kernels, cuSPARSE: see earlier runs)"
      ncu --clock-control none --target-processes all --kernel-name-base demangled -k regex:'SpmvFunctor' --launch-skip 0 \
        --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
        --section WarpStateStats --section LaunchStats \
        "$bench" --matrix paper32k-1 --iterations 1 --repetitions 1 --out-dir /tmp \
        --benchmark_filter='device/hybrid/vector/(iter|unstaged/iter)' >"$RES/ncu.txt" 2>&1
      echo "exit code $?" | tee -a "$RES/log.txt" ;;
    report)
      log "report"
      python3 perf/report.py "$RES" --commit "${CISPMV_COMMIT:-unknown}" --date "$(date -u +%F)" \
        --command "perf/run_on_device.sh $*" >"$RES/report.txt" 2>&1
      tail -40 "$RES/report.txt" ;;
    *) echo "run_on_device.sh: unknown stage $stage" >&2; exit 2 ;;
  esac
done
