#!/bin/bash
# `dsv41-top key` on a STATE_DIR of its own: no key, --rotate (0600, atomic,
# the old inode zeroed), the fingerprint beside openssl's, --show only to a
# terminal, --json, the key never in the output nor in ps, a symlinked key
# file refused, a read-only directory leaving the old key.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
TOP=${DSV41_BIN:-$root/build/dsv41-top}
T=$(mktemp -d /tmp/dsv41-key-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T XDG_CONFIG_HOME=$T
unset API_KEY_FILE DSV41_API_KEY STATE_DIR
S=$T/state
K=$S/api_key
top() { "$TOP" --set STATE_DIR="$S" "$@"; }
# the fingerprint as a laptop computes it (key --help says how)
fp_of() { printf 'SHA256:%s' "$(tr -d '\n' < "$1" | openssl dgst -sha256 -binary | base64 | tr -d =)"; }
fp_in() { printf '%s\n' "$1" | awk '$1 == "fingerprint" {print $2}'; }

out=$(top key --help); rc=$?
check "--help: usage, exit 0" eval '[ $rc = 0 ] && contains "$out" "usage: dsv41-top key"'
out=$(top key --bogus 2>&1); rc=$?
check "an unknown option: usage, exit 2" eval '[ $rc = 2 ] && contains "$out" "usage:"'
out=$(top key --restart 2>&1); rc=$?
check "--restart without --rotate: exit 2" eval '[ $rc = 2 ] && contains "$out" "--restart goes with --rotate"'

# --- no key ----------------------------------------------------------------------------
out=$(top key 2>&1); rc=$?
check "no key: exit 1, the path and how to make one" eval '[ $rc = 1 ] && contains "$out" "no API key at $K" && contains "$out" "dsv41-top key --rotate" && contains "$out" "launch"'
check "no key: fingerprint n/a" contains "$out" "fingerprint  n/a"
json=$(top key --json 2>/dev/null); rc=$?
check "no key, json: exists false, fingerprint null, exit 1" eval '[ $rc = 1 ] && jq_is "$json" ".exists" false && jq_is "$json" ".fingerprint" null'
out=$(script -qc "$(printf '%q ' "$TOP" --set STATE_DIR="$S" key --show)" /dev/null 2>&1)
check "no key, --show: how to make one" contains "$out" "dsv41-top key --rotate"
check "no key: nothing created" [ ! -e "$S" ]

# --- rotate ----------------------------------------------------------------------------
out=$(top key --rotate 2>&1); rc=$?
check "rotate: exit 0" [ $rc = 0 ]
check "rotate: the key file is 0600" eval '[ "$(stat -c %a "$K")" = 600 ]'
check "rotate: its new directory is 0700" eval '[ "$(stat -c %a "$S")" = 700 ]'
check "rotate: 32 random bytes, URL-safe base64" eval 'grep -Eqx "[A-Za-z0-9_-]{43}" "$K"'
fp1=$(fp_of "$K")
check "rotate: prints the fingerprint openssl computes" contains "$out" "fingerprint $fp1"
check "rotate: says the running rank 0 keeps the old key" contains "$out" "a running rank 0 still answers the old key"
check "rotate: the line a laptop runs again" contains "$out" "export DSV41_API_KEY=\"\$(ssh "
check "rotate: the key not in its output" eval '! grep -qF -- "$(cat "$K")" <<< "$out"'
check "rotate: nothing left beside the key" eval '[ "$(ls -A "$S")" = api_key ]'

out=$(top key 2>&1); rc=$?
check "key: exit 0, mode and owner ok" eval '[ $rc = 0 ] && contains "$out" "mode         0600, owner $(id -un): ok"'
check "key: the path and when it was written" eval 'contains "$out" "key file     $K" && contains "$out" "written      $(date +%Y-)"'
check "key: the fingerprint" eval '[ "$(fp_in "$out")" = "$fp1" ]'
out2=$(top key 2>&1)
check "key: the fingerprint is stable" eval '[ "$(fp_in "$out2")" = "$fp1" ]'
check "key: the key not in its output" eval '! grep -qF -- "$(cat "$K")" <<< "$out"'
json=$(top key --json); rc=$?
check "json: parses, exit 0" eval '[ $rc = 0 ] && jq -e . <<< "$json" > /dev/null'
check "json: path, mode, fingerprint" eval 'jq_is "$json" .path "$K" && jq_is "$json" .mode 0600 && jq_is "$json" .fingerprint "$fp1"'
check "json: mtime is the file's" jq_is "$json" .mtime "$(stat -c %Y "$K")"
check "json: no problems" jq_is "$json" '.problems | length' 0
check "json: the key not in it" eval '! grep -qF -- "$(cat "$K")" <<< "$json"'

# the old key: the rank's bind mount holds its inode like this descriptor does
old=$(cat "$K")
exec 3< "$K"
out=$(top key --rotate 2>&1); rc=$?
fp2=$(fp_of "$K")
check "rotate again: exit 0, a new fingerprint" eval '[ $rc = 0 ] && [ "$fp2" != "$fp1" ] && contains "$out" "fingerprint $fp2"'
check "rotate again: the old key overwritten, said" contains "$out" "the old key: overwritten and removed"
check "rotate again: the old inode holds nothing now" eval '[ ! -s /proc/self/fd/3 ] && ! grep -qF -- "$old" /proc/self/fd/3'
exec 3<&-
check "rotate again: still 0600" eval '[ "$(stat -c %a "$K")" = 600 ]'
out=$(top key 2>&1)
check "key after the rotation: the new fingerprint" eval '[ "$(fp_in "$out")" = "$fp2" ]'
json=$(top key --rotate --json); rc=$?
check "rotate --json: the new key's fingerprint" eval '[ $rc = 0 ] && jq_is "$json" .fingerprint "$(fp_of "$K")" && [ "$(fp_of "$K")" != "$fp2" ]'

# --- --show ----------------------------------------------------------------------------
top key --show 2> "$T/show.err" | cat > "$T/show.pipe"; rc=${PIPESTATUS[0]}
out=$(cat "$T/show.err" "$T/show.pipe")
check "--show into a pipe: refused, exit 1" eval '[ $rc = 1 ] && contains "$out" "stdout is not a terminal"'
check "--show into a pipe: the key not in it" eval '! grep -qF -- "$(cat "$K")" <<< "$out"'
top key --show > "$T/show.out" 2>&1; rc=$?
check "--show into a file: refused" eval '[ $rc = 1 ] && ! grep -qF -- "$(cat "$K")" "$T/show.out"'
out=$(script -qc "$(printf '%q ' "$TOP" --set STATE_DIR="$S" key --show)" /dev/null)
check "--show at a terminal: the key" eval 'grep -qxF -- "$(cat "$K")" <<< "${out//$'"'\r'"'/}"'
out=$(top key --show --json 2>&1); rc=$?
check "--show with --json: exit 2" [ $rc = 2 ]

# --- the key never on a command line (ps) while rotating ---------------------------------
: > "$T/keys"
(for _ in $(seq 40); do top key --rotate > /dev/null 2>&1; cat "$K" >> "$T/keys"; done) &
rot=$!
: > "$T/ps"
while kill -0 $rot 2>/dev/null; do ps -eo args >> "$T/ps"; done
wait $rot
check "ps while rotating: sampled" eval '[ "$(wc -l < "$T/keys")" = 40 ] && [ -s "$T/ps" ]'
check "ps while rotating: no key on any command line" eval '! grep -qF -f "$T/keys" "$T/ps"'

# --- DSV41_API_KEY beside the file --------------------------------------------------------
out=$(DSV41_API_KEY=other-key top key 2>&1)
check "DSV41_API_KEY set: said that requests send it, not the file" eval 'contains "$out" "DSV41_API_KEY is set here" && contains "$out" "NOT the file'"'"'s key" && ! grep -qF other-key <<< "$out"'

# --- mode and owner ------------------------------------------------------------------------
chmod 644 "$K"
out=$(top key 2>&1); rc=$?
check "mode 0644: exit 1, the fix" eval '[ $rc = 1 ] && contains "$out" "mode 0644, not 0600" && contains "$out" "chmod 600 $K"'
json=$(top key --json 2>/dev/null)
check "mode 0644, json: mode_ok false, a problem" eval 'jq_is "$json" .mode_ok false && jq_is "$json" ".problems | length" 1'
out=$(top key --rotate 2>&1); rc=$?
check "rotate a 0644 key: the new one is 0600" eval '[ $rc = 0 ] && [ "$(stat -c %a "$K")" = 600 ]'
if [ "$(id -u)" = 0 ]; then
    chown nobody "$K"
    out=$(top key 2>&1); rc=$?
    check "owned by another user: exit 1, said" eval '[ $rc = 1 ] && contains "$out" "owned by nobody, not by you"'
    chown 0 "$K"
fi

# --- a symbolic link for api_key -----------------------------------------------------------
printf 'not a key: must survive\n' > "$T/victim"
good=$(cat "$K")
mv "$K" "$T/moved_key"
ln -s "$T/victim" "$K"
out=$(top key 2>&1); rc=$?
check "a symlink: exit 1, named with its target" eval '[ $rc = 1 ] && contains "$out" "$K is a symbolic link (to $T/victim)"'
check "a symlink: not followed for a fingerprint" contains "$out" "fingerprint  n/a"
out=$(top key --rotate 2>&1); rc=$?
check "rotate onto a symlink: refused, exit 1" eval '[ $rc = 1 ] && contains "$out" "refusing to rotate: $K is a symbolic link"'
check "rotate onto a symlink: its target untouched" eval '[ "$(cat "$T/victim")" = "not a key: must survive" ]'
check "rotate onto a symlink: the link left as it was" eval '[ "$(readlink "$K")" = "$T/victim" ]'
out=$(script -qc "$(printf '%q ' "$TOP" --set STATE_DIR="$S" key --show)" /dev/null 2>&1)
check "--show of a symlink: refused, the target not shown" eval 'contains "$out" "symbolic link" && ! grep -qF "must survive" <<< "$out"'
rm "$K"
mv "$T/moved_key" "$K"

# --- a read-only directory -----------------------------------------------------------------
fp=$(fp_of "$K")
if [ "$(id -u)" = 0 ]; then
    # root writes through a mode; only a read-only mount stops it
    out=$(unshare -m sh -c 'mount --bind -o ro "$1" "$1" && exec "$2" --set STATE_DIR="$1" key --rotate' \
        sh "$S" "$TOP" 2>&1); rc=$?
else
    chmod 500 "$S"
    out=$(top key --rotate 2>&1); rc=$?
    chmod 700 "$S"
fi
check "a read-only directory: exit 1, a clear error" eval '[ $rc = 1 ] && contains "$out" "cannot write a new key beside $K" && contains "$out" "the old key is unchanged"'
check "a read-only directory: the old key intact" eval '[ "$(cat "$K")" = "$good" ] && [ "$(fp_of "$K")" = "$fp" ]'
check "a read-only directory: nothing left beside the key" eval '[ "$(ls -A "$S")" = api_key ]'

summary
