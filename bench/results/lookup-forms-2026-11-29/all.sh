#!/bin/bash
# all.sh RESULTFILE PORT
cd /tmp/wtfloor
R=$1; export PGPORT=${2:-5432}
opt_of() { case $1 in
  generic) echo "-c plan_cache_mode=force_generic_plan";;
  custom) echo "-c plan_cache_mode=force_custom_plan";;
  custom0) echo "-c plan_cache_mode=force_custom_plan -c max_parallel_workers_per_gather=0";;
esac; }
for round in 1 2 3; do for k in 4 8; do
  specs="seq_v1:generic seq_v2cur:generic seq_lateral:generic seq_lateral:custom seq_or8:custom seq_anyor8:custom ts_v1:generic ts_v2cur:generic ts_lateral:generic ts_any:custom ts_any:custom0 ts_in8:custom0"
  [ $round = 1 ] && specs="$specs seq_anyor8:generic ts_in8:generic"
  for spec in $specs; do
    f=${spec%%:*}; mode=${spec##*:}
    db=mirrorql_same_v2; [[ $f == *_v1 ]] && db=mirrorql_same_v1
    echo "$round $f k=$k $mode $(PGOPTIONS="$(opt_of $mode)" ./run.sh $db scripts/${f}_k$k 10)" >> $R
  done
done; done
echo done >> $R
