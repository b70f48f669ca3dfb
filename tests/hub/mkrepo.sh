#!/bin/bash
# Writes a synthetic revision of the checkpoint repo with the real layout
# into a hub root (ROOT/revs/COMMIT/) and points ROOT/refs/main at it:
# config and tokenizer files, six shards of which 5 and 6 are stored as
# .partNN pieces (as the hub's 50 GB cap made the real ones), the
# sha256-manifest.txt of the six native shards, reassemble.sh, exl3 banks in
# qn/q31/q31s and the plan. Sizes scale with MB (default 32: ~200 MB in all).
# Prints the commit. A second call with another SEED makes another revision.
set -euo pipefail
root=${1:?usage: mkrepo.sh ROOT [MB] [SEED]}
mb=${2:-32}
seed=${3:-1}
tmp=$(mktemp -d "$root/.new.XXXXXX" 2>/dev/null || { mkdir -p "$root"; mktemp -d "$root/.new.XXXXXX"; })
trap 'rm -rf "$tmp"' EXIT

# reproducible bytes: a seeded stream (openssl's AES-CTR of zeros), n MiB
bytes() { # n_kib label
    openssl enc -aes-128-ctr -nosalt -pass "pass:dsv41-$seed-$2" -pbkdf2 < <(head -c "$(( $1 * 1024 ))" /dev/zero) 2>/dev/null
}
kib() { echo $(( $1 * mb / 32 )); } # KiB at the default scale (MB=32), scaled

cd "$tmp"
printf '{"architectures":["DeepseekV41ForCausalLM"],"model_type":"deepseek_v41","seed":%s}\n' "$seed" > config.json
printf '{"version":"1.0","model":{"type":"BPE"},"seed":%s}\n' "$seed" > tokenizer.json
printf '{"tokenizer_class":"PreTrainedTokenizerFast"}\n' > tokenizer_config.json
printf '# DeepSeek-V4.1-Flash-Spark (synthetic test checkpoint, seed %s)\n' "$seed" > README.md
i=1
for k in 24 24 16 8; do
    bytes "$(kib $((k * 1024)) )" "shard$i" > "model-0000$i-of-00006.safetensors"
    i=$((i + 1))
done
# shards 5 and 6 (the Engram tables) exist here only as parts
bytes "$(kib $((48 * 1024)))" shard5 > shard5
bytes "$(kib $((40 * 1024)))" shard6 > shard6
split -d -a 2 --numeric-suffixes=1 -b "$(( $(kib $((20 * 1024))) * 1024 ))" shard5 model-00005-of-00006.safetensors.part
split -d -a 2 --numeric-suffixes=1 -b "$(( $(kib $((16 * 1024))) * 1024 ))" shard6 model-00006-of-00006.safetensors.part
mv shard5 model-00005-of-00006.safetensors
mv shard6 model-00006-of-00006.safetensors
sha256sum model-0000[1-6]-of-00006.safetensors > sha256-manifest.txt
rm model-00005-of-00006.safetensors model-00006-of-00006.safetensors
{
    echo '{"metadata":{"total_size":0},"weight_map":{'
    for i in 1 2 3 4 5 6; do printf '"layer.%d":"model-0000%d-of-00006.safetensors"%s\n' $i $i "$([ $i = 6 ] || echo ,)"; done
    echo '}}'
} > model.safetensors.index.json
cat > reassemble.sh <<'EOF'
#!/bin/sh
# the script era's reassembly: each Engram shard is its parts, in order
set -e
for s in model-00005-of-00006.safetensors model-00006-of-00006.safetensors; do
    cat "$s".part* > "$s"
done
sha256sum -c sha256-manifest.txt
EOF
for b in qn q31 q31s; do
    mkdir -p "exl3/$b"
    for l in 00 01 02 03; do bytes "$(kib 256)" "$b$l" > "exl3/$b/L$l.part.safetensors"; done
done
mkdir -p exl3/plan
printf '{"qdir":"qn:q31:q31s","seed":%s}\n' "$seed" > exl3/plan/J268-ho-v31-K5n.json

commit=$(find . -type f | sort | xargs sha1sum | sha1sum | cut -c1-40)
mkdir -p "$root/revs" "$root/refs"
rm -rf "${root:?}/revs/$commit"
mv "$tmp" "$root/revs/$commit"
trap - EXIT
echo "$commit" > "$root/refs/main"
echo "$commit"
