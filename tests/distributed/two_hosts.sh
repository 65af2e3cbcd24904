#!/bin/bash
# Two "hosts" on one machine: two network namespaces joined by a veth pair with private addresses,
# one MPI rank in each, talking TCP over the veth only (docs/distributed.md, "Two hosts").
#
#   two_hosts.sh ATTN_BINARY SHARED_DIR
#
# mpirun runs in namespace A; Open MPI starts the remote rank's daemon through plm_rsh_agent, here
# a script that runs the command with `ip netns exec B` instead of ssh. btl tcp,self (no shared
# memory, which would bypass the network) and the tcp/oob interfaces limited to the veth's subnet.
# It shows, for the Transformer and the classifier, that the weights after 50 steps equal those of
# one process with the same global batch (accumulation 2 / the batch's 16 rows) within fp32
# rounding, and that the traffic went through the veth pair: each end sent at least the allreduce
# volume (steps x weights x 4 bytes, what a 2-rank allreduce must send per rank), the namespaces'
# loopbacks carried less than a tenth of it, and the namespaces hold no other interface or route.
# Exit 77 (skipped) when not root, or without ip, mpirun or network namespaces.
set -euo pipefail
attn=$(realpath "$1")
shared=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
python=/usr/bin/python3

skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (ip netns)"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v mpirun >/dev/null || skip "no mpirun"

# Unique names (the pid), so that parallel runs do not clash; interface names stay within 15 characters.
ns_a="attn2h-$$-a" ns_b="attn2h-$$-b" veth_a="a2h$$a" veth_b="a2h$$b"
subnet=10.233.0.0/30 ip_a=10.233.0.1 ip_b=10.233.0.2  # private, and only inside the two namespaces
work=$(mktemp -d /tmp/attn-two-hosts.XXXXXX)

cleanup() {
  for ns in "$ns_a" "$ns_b"; do
    if ip netns list | grep -qw "$ns"; then
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
      ip netns del "$ns" 2>/dev/null || true  # deleting a namespace deletes its veth end, and so the pair
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns_a" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "$ns_b"
ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b"
ip -n "$ns_a" addr add "$ip_a/30" dev "$veth_a"
ip -n "$ns_b" addr add "$ip_b/30" dev "$veth_b"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$veth_a" up
ip -n "$ns_b" link set "$veth_b" up

# Open MPI's "ssh": agent HOST COMMAND... runs COMMAND in namespace B (the only remote host).
cat >"$work/agent.sh" <<EOF
#!/bin/sh
shift
exec ip netns exec $ns_b sh -c "\$*"
EOF
chmod +x "$work/agent.sh"

echo "namespace $ns_a: $(ip -n "$ns_a" -o link | awk -F': ' '{print $2}' | tr '\n' ' ')routes: $(ip -n "$ns_a" route | tr '\n' ';')"
echo "namespace $ns_b: $(ip -n "$ns_b" -o link | awk -F': ' '{print $2}' | tr '\n' ' ')routes: $(ip -n "$ns_b" route | tr '\n' ';')"
for ns in "$ns_a" "$ns_b"; do
  n=$(ip -n "$ns" -o link | wc -l)
  [ "$n" = 2 ] || { echo "FAIL: $ns has $n interfaces, expected lo and the veth"; exit 1; }
done

bytes() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_bytes"; }

two_hosts() {  # mpirun from namespace A, one rank per namespace, TCP over the veth only
  ip netns exec "$ns_a" mpirun --allow-run-as-root -np 2 -H "$ip_a,$ip_b" \
    --mca plm_rsh_agent "$work/agent.sh" --mca btl tcp,self \
    --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet" "$@"
}

# check LABEL STEPS ONE_DIR TWO_DIR LOG: equality of the weights, and where the bytes went.
check() {
  local label=$1 steps=$2 one=$3 two=$4 log=$5 weights volume
  weights=$(grep -o '[0-9]* weights' "$log" | head -1 | cut -d' ' -f1)
  volume=$((steps * weights * 4))
  "$python" "$here/compare_weights.py" "$one/model.safetensors" "$two/model.safetensors" --label "$label, $steps steps, 2 ranks in two namespaces vs 1 process"
  local sent_a=$(($(bytes "$ns_a" "$veth_a") - veth_a0)) sent_b=$(($(bytes "$ns_b" "$veth_b") - veth_b0))
  local lo_a=$(($(bytes "$ns_a" lo) - lo_a0)) lo_b=$(($(bytes "$ns_b" lo) - lo_b0))
  echo "$label: $weights weights, allreduce volume $volume bytes per rank; sent over the veth: $sent_a ($ns_a), $sent_b ($ns_b); over the namespaces' lo: $lo_a, $lo_b"
  [ "$sent_a" -ge "$volume" ] && [ "$sent_b" -ge "$volume" ] || { echo "FAIL: the veth carried less than the allreduce volume"; exit 1; }
  [ $((10 * lo_a)) -lt "$volume" ] && [ $((10 * lo_b)) -lt "$volume" ] || { echo "FAIL: the loopbacks carried the traffic"; exit 1; }
}

counters() { veth_a0=$(bytes "$ns_a" "$veth_a") veth_b0=$(bytes "$ns_b" "$veth_b") lo_a0=$(bytes "$ns_a" lo) lo_b0=$(bytes "$ns_b" lo); }

cd "$work"
head -400 "$shared/data/mt-ende/train.en" >train.en
head -400 "$shared/data/mt-ende/train.de" >train.de
awk -F'\t' 'n[$1]++ < 50' "$shared/data/cls-zh-poetry/train.tsv" >train.tsv  # 50 rows of each class
steps=50

# The Transformer: a tiny model without dropout (each rank's dropout stream is its own).
t_args=(--max-steps $steps --threads 1 --precision fp32 --set data.train_src=train.en --set data.train_tgt=train.de
  --set data.valid_src= --set data.valid_tgt= --set model.d_model=32 --set model.heads=2 --set model.encoder_layers=1
  --set model.decoder_layers=1 --set model.d_ff=64 --set model.dropout=0 --set train.max_tokens=256
  --set train.accumulate=2 --set train.warmup=10 --set train.lr_factor=0.05 --set train.decay=none
  --set train.log_every=10 --set train.checkpoint_every=25 --set train.checkpoint_minutes=0)
"$attn" train --model-dir t1 "${t_args[@]}" --set data.vocab_size=200 >t1.log 2>&1 || { cat t1.log; exit 1; }
counters
two_hosts "$attn" train --model-dir t2 "${t_args[@]}" --set data.tokenizer=t1/spm.model >t2.log 2>&1 || { cat t2.log; exit 1; }
grep -q "data-parallel: 2 ranks" t2.log || { cat t2.log; echo "FAIL: not 2 ranks"; exit 1; }
check Transformer $steps t1 t2 t1.log

# The classifier: batch 16, 8 rows on each rank.
c_args=(--set task=classification --max-steps $steps --threads 1 --precision fp32 --set data.train=train.tsv
  --set data.dev= --set model.pad_size=8 --set model.d_model=16 --set model.heads=2 --set model.layers=1
  --set model.d_ff=32 --set model.dropout=0 --set train.batch=16 --set train.lr=0.0005 --set train.max_epochs=0)
"$attn" train --model-dir c1 "${c_args[@]}" >c1.log 2>&1 || { cat c1.log; exit 1; }
counters
two_hosts "$attn" train --model-dir c2 "${c_args[@]}" >c2.log 2>&1 || { cat c2.log; exit 1; }
check classifier $steps c1 c2 c1.log
echo "two hosts: PASS"
