#!/usr/bin/env bash
# Session 43's device call: `bash perf/results/2026-11-29-session43/dev_call.sh CALL` on the device machine (run's
# command, with carry [".device"]); the programs are built here and carried (perf/pack_binaries.sh; panel_gather by
# nvcc here, into .device), helpers in perf/device_call_lib.sh. Results come back as $OUT/res.tgz.
set -u
export CISPMV_COMMIT=${CISPMV_COMMIT:-e4e48e5} RES=/tmp/res/${1:-exp} JOBS=16 ARCH=HOPPER90
mkdir -p $RES
s=$(date +%s)
FC=fcidump:unit_tests/data/h2o_631g_fc.fcidump:8:all-irreps
AE=fcidump:unit_tests/data/h2o_631g.fcidump:10:all-irreps
source perf/device_call_lib.sh
B=build/cuda/perf/spmv_bench
ONE='csell/automatic/lanes:1/sort:64/|ci-factored/iter'
case "${1:-}" in
  a)  # (H200) the staged-panel model (panel_gather.cu, six modes, checked against the host) and ncu of its launches;
      # the whole CUDA suite of the library as it is; csell's one vector and k = 8 block product on both matrices;
      # cispmv ci with 1 and 5 roots
    PREBUILT=.device/cuda-bin.tar.xz prebuilt
    nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv | tee -a $RES/log.txt
    timeout $(left 200) .device/panel_gather unit_tests/data/h2o_631g.fcidump 7 > $RES/panel.txt 2>&1
    echo "panel_gather rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt; cat $RES/panel.txt | tee -a $RES/log.txt; pack
    tests '*' all 330
    bench ae $AE "$ONE|block/k:8/csell-inline-sorted/lanes/iter" "--vectors 8" 420
    bench fc $FC "$ONE|block/k:8/csell-inline-sorted/lanes/iter" "--vectors 8" 450
    CLI=build/cuda/src/app/cispmv
    ci ae-r1 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps"
    ci ae-r5 "unit_tests/data/h2o_631g.fcidump --level 10 --all-irreps --roots 5"
    # ncu of 3 modes' launches (reps 1: a warm-up launch and the timed one each)
    for m in 1:0 1:2 0:0; do
      timeout $(left 585) ncu --kernel-name regex:staged --launch-skip 1 --launch-count 1 \
        --metrics gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,dram__bytes_read.sum,lts__t_sectors.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second \
        .device/panel_gather unit_tests/data/h2o_631g.fcidump 1 $m > $RES/ncu-panel-${m/:/-}.txt 2>&1
      echo "ncu panel $m rc $?" | tee -a $RES/log.txt
      grep -E "^cols|duration|wavefronts|dram__bytes|lts__t_sectors|inst_executed|per_second" $RES/ncu-panel-${m/:/-}.txt | tee -a $RES/log.txt; pack
    done ;;
  b)  # (H200) the model's words modes (an entry one 32-bit word, a panel's words loaded before its wait), with the
      # balanced window and dict modes again for reference; ncu of the words mode
    nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv | tee -a $RES/log.txt
    for m in 1:0 1:2 1:3 1:4 0:4; do
      timeout $(left 300) .device/panel_gather unit_tests/data/h2o_631g.fcidump 7 $m >> $RES/panel.txt 2>&1
      echo "panel_gather $m rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    done
    cat $RES/panel.txt | tee -a $RES/log.txt; pack
    for m in 1:4 1:3; do
      timeout $(left 585) ncu --kernel-name regex:staged --launch-skip 1 --launch-count 1 \
        --metrics gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,dram__bytes_read.sum,lts__t_sectors.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio \
        .device/panel_gather unit_tests/data/h2o_631g.fcidump 1 $m > $RES/ncu-panel-${m/:/-}.txt 2>&1
      echo "ncu panel $m rc $?" | tee -a $RES/log.txt
      grep -E "^cols|duration|wavefronts|dram__bytes|lts__t_sectors|inst_executed|per_second|stalled" $RES/ncu-panel-${m/:/-}.txt | tee -a $RES/log.txt; pack
    done ;;
  c)  # (H200) the model without the same-spin doubles' panels (panel_gather_singles: -DSINGLES_ONLY), balanced
      # columns, every C mode; the full model's words mode again for reference
    nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv | tee -a $RES/log.txt
    for m in 1:0 1:3 1:4 1:1; do
      timeout $(left 300) .device/panel_gather_singles unit_tests/data/h2o_631g.fcidump 7 $m >> $RES/panel.txt 2>&1
      echo "panel_gather_singles $m rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    done
    timeout $(left 300) .device/panel_gather unit_tests/data/h2o_631g.fcidump 7 1:4 >> $RES/panel.txt 2>&1
    echo "panel_gather 1:4 rc $? at $(( $(date +%s) - s )) s" | tee -a $RES/log.txt
    cat $RES/panel.txt | tee -a $RES/log.txt ;;
  *) echo "dev_call.sh: unknown call '${1:-}'"; exit 2 ;;
esac
pack
