#!/usr/bin/env bash
# Gathers the results files the workers of an Indexed Job printed to their logs
# (between the marker lines of worker-job.yaml) and merges them with pgbench-report:
#
#   deploy/kubernetes/collect.sh [JOB [DIR]]     (defaults: pgbench-rs, results)
#
# Writes DIR/worker-I.json for every worker whose log has a file, then
# DIR/merged.json, and prints the merged report and the per-worker table. A worker
# without a file (its pod failed before writing one, or is gone) is left out, and
# the merge names it. Exit status: pgbench-report merge's (0; 1 refused; 3
# incomplete). PGBENCH_REPORT names the program when it is not on PATH, e.g. the
# image's copy, with the current directory mounted at the same path:
#   PGBENCH_REPORT="podman run --rm --user $(id -u) -v $PWD:$PWD:Z -w $PWD
#                   --entrypoint pgbench-report pgbench-rs:0.1.0"
set -euo pipefail
job=${1:-pgbench-rs}
dir=${2:-results}
report=${PGBENCH_REPORT:-pgbench-report}
kubectl=${KUBECTL:-kubectl}

count=$($kubectl get job "$job" -o 'jsonpath={.spec.completions}')
mkdir -p "$dir"
files=()
for ((i = 0; i < count; i++)); do
  # The newest pod of index i (there is one: the Job does not retry).
  pod=$($kubectl get pods -l "job-name=$job,batch.kubernetes.io/job-completion-index=$i" \
    -o 'jsonpath={.items[-1:].metadata.name}')
  file="$dir/worker-$i.json"
  if [ -n "$pod" ]; then
    $kubectl logs "$pod" \
      | sed -n '/^----- pgbench-rs results file of worker /,/^----- end of pgbench-rs results file -----$/p' \
      | sed '1d;$d' >"$file"
  else
    : >"$file"
  fi
  if [ -s "$file" ]; then
    files+=("$file")
  else
    rm -f "$file"
    echo "collect.sh: worker $i of $count: no results file in the log of ${pod:-its pod (none found)}" >&2
  fi
done
if [ ${#files[@]} -eq 0 ]; then
  echo "collect.sh: no worker of job $job left a results file" >&2
  exit 1
fi
exec $report merge "${files[@]}" -o "$dir/merged.json"
