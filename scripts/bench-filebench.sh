#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dnd filebench next to fio running the 2006 thread's job file (size scaled down),
# in one script, alternating the two tools so drift hits both alike. dnd's
# write and vmsplice paths measure the same kernel paths as fio's sync and
# splice engines and should agree within noise.
# Usage: scripts/bench-filebench.sh [SIZE=4g] [ROUNDS=3] [DIR=/var/tmp]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
DND=${DND:-$here/dnd}
SIZE=${1:-4g}
ROUNDS=${2:-3}
DIR=${3:-/var/tmp}
command -v fio >/dev/null || "$here/scripts/deps.sh" refs
W=$(mktemp -d "$DIR/dnd-fb.XXXXXX")
trap 'rm -rf "$W"' EXIT
# the 2006 thread's job, verbatim but for the size, the directory and
# "unlink=1" (fio 3 wants a value where 2006's fio took a bare "unlink")
cat >"$W/seed.fio" <<JOB
[global]
bs=64k
rw=write
overwrite=0
size=$SIZE
end_fsync=1
direct=0
unlink=1
directory=$W

[write]
ioengine=sync

[splice]
stonewall
ioengine=splice
JOB
bytes=$(numfmt --from=iec "${SIZE^^}")
echo "# fio $(fio --version) vs dnd filebench, $SIZE per job, bs 64k, end_fsync, $(uname -r)"
echo "| round | fio sync MiB/s | dnd write MiB/s | fio splice MiB/s | dnd vmsplice MiB/s | fio sync usr/sys % | dnd write usr/sys % |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for r in $(seq 1 "$ROUNDS"); do
	fio --output-format=json "$W/seed.fio" >"$W/fio.json"
	"$DND" filebench --json --size "$bytes" --bs 64Ki --dir "$W" \
		--paths write,vmsplice >"$W/dnd.json"
	jq -rn --slurpfile f "$W/fio.json" --slurpfile d "$W/dnd.json" --arg r "$r" '
		($f[0].jobs | map({(.jobname): .}) | add) as $j |
		($d | map({(.path): .}) | add) as $k |
		"| \($r) | \($j.write.write.bw / 1024 | round) | \($k.write.mib_per_s | round) | \($j.splice.write.bw / 1024 | round) | \($k.vmsplice.mib_per_s | round) | \($j.write.usr_cpu | round)/\($j.write.sys_cpu | round) | \($k.write.cpu_user_pct | round)/\($k.write.cpu_sys_pct | round) |"'
done
