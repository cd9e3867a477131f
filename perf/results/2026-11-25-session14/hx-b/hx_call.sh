#!/usr/bin/env bash
# one device call (not committed): session 14, host SIMD experiment
set -u
RES=/tmp/res/hx; mkdir -p $RES
s=$(date +%s)
pack() { tar czf $OUT/res.tgz -C /tmp res; }
{ lscpu; nproc; free -g; } > $RES/lscpu.txt 2>&1; grep -E "Model name|^CPU\(s\)|Thread|Socket|L2|L3|NUMA node" $RES/lscpu.txt; grep -o 'avx512f\|avx2' $RES/lscpu.txt | sort -u
RES=$RES TARGETS="cispmv_spmv cispmv_ci" JOBS=16 timeout 420 bash perf/run_on_device.sh build > $RES/build-log.txt 2>&1 || { tail -20 $RES/build-log.txt; pack; exit 1; }
echo "libs $(( $(date +%s) - s )) s"
D=.deps/cuda/install W=$D/bin/nvcc_wrapper
$W -DCISPMV_HAS_KOKKOS_KERNELS=1 -Iinclude -Ibuild/cuda/include -isystem $D/include -O3 -DNDEBUG -std=c++17 -expt-extended-lambda -arch=sm_90 -Xcompiler -fopenmp -c hx_exp.cpp -o /tmp/hx.o > $RES/cc.txt 2>&1 &&
$W -O3 -fopenmp -arch=sm_90 /tmp/hx.o -o /tmp/hx_exp build/cuda/src/spmv/libcispmv_spmv.a build/cuda/src/ci/libcispmv_ci.a build/cuda/src/spmv/libcispmv_spmv.a $D/lib/libkokkoskernels.a $D/lib/libkokkoscontainers.a $D/lib/libkokkoscore.a -lcuda -ldl >> $RES/cc.txt 2>&1 || { tail $RES/cc.txt; pack; exit 1; }
echo "compiled $(( $(date +%s) - s )) s"
export OMP_PROC_BIND=spread OMP_PLACES=cores
OMP_NUM_THREADS=16 timeout 120 /tmp/hx_exp > $RES/fc-16.txt 2>&1; cat $RES/fc-16.txt; pack
OMP_NUM_THREADS=2 timeout 150 /tmp/hx_exp > $RES/fc-2.txt 2>&1; cat $RES/fc-2.txt; pack
left=$(( 570 - ($(date +%s) - s) ))
echo "left $left s"
[ $left -gt 60 ] && { OMP_NUM_THREADS=16 timeout $left /tmp/hx_exp fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps > $RES/ae-16.txt 2>&1; cat $RES/ae-16.txt; }
pack
