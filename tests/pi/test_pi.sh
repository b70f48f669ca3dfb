#!/bin/bash
# pi/install.sh into a Pi configuration that already has other providers,
# a custom model and settings (all kept byte for byte), then the real Pi
# (npm, Node 22) against dsv41-sim: what the simulator records of each
# request is what Pi sent.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
SIM=${DSV41_SIM:-$root/build/dsv41-sim}
INSTALL=$root/pi/install.sh
T=$(mktemp -d /tmp/dsv41-pi.XXXXXX)
simpid=
cleanup() {
    [ -n "$simpid" ] && kill "$simpid" 2>/dev/null && wait "$simpid" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
if ! bin=$("$root/tests/pi/setup.sh"); then
    not_ok "npm ci: Node 22 and Pi could not be installed (tests/pi)"
    summary
    exit 1
fi
export PATH="$bin:$PATH"
ok "Pi $(pi --version 2>/dev/null) on node $(node --version)"

# --- a configuration of someone's own, in its own formatting -------------------------------
A=$T/agent
mkdir -p "$A"
cat > "$A/models.json" <<'EOF'
{
	"$schema": "https://pi.dev/schemas/models.schema.json",
	"providers": {
		"ollama": { "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
			"models": [ { "id": "qwen3:8b", "contextWindow": 32768 } ] },
		"openrouter":   {"apiKey": "sk-or-a-literal-key-that-must-stay"}
	}
}
EOF
printf '{\n    "enabledModels": ["ollama/qwen3:8b",\n                      "openrouter/anthropic/claude"],\n    "theme": "dark",\n    "quietStartup": true\n}\n' > "$A/settings.json"
chmod 640 "$A/models.json"
cp "$A/models.json" "$T/models.orig"
cp "$A/settings.json" "$T/settings.orig"
# kept byte for byte: the new text is the old with one piece inserted or replaced
kept() { # old new [allowed_changed_bytes_of_old]
    node -e '
        const fs = require("fs");
        const a = fs.readFileSync(process.argv[1], "utf8"), b = fs.readFileSync(process.argv[2], "utf8");
        let p = 0; while (p < a.length && a[p] === b[p]) p++;
        let s = 0; while (s < a.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
        const lost = a.length - p - s;
        if (lost > Number(process.argv[3] || 0)) { console.error("    changed bytes of the old file: " + JSON.stringify(a.slice(p, a.length - s))); process.exit(1); }
    ' "$@"
}
out=$(PI_CODING_AGENT_DIR=$A "$INSTALL" http://spark-head:8000 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
check "install: exit 0" [ $rc -eq 0 ]
check "install: models.json is the old one with the provider added (every other byte kept)" kept "$T/models.orig" "$A/models.json"
check "install: the provider entry (base URL with /v1, the key by name, the model)" eval \
    'node -e "const m=require(\"$A/models.json\").providers[\"dsv41-sparks\"]; process.exit(m.baseUrl===\"http://spark-head:8000/v1\" && m.apiKey===\"\$DSV41_API_KEY\" && m.models[0].id===\"deepseek-v4.1-flash\" && m.models[0].contextWindow===262144 && m.models[0].reasoning===true && m.models[0].input.includes(\"image\") ? 0 : 1)"'
check "install: the other providers unchanged" eval \
    'node -e "const r=(f)=>JSON.parse(require(\"fs\").readFileSync(f,\"utf8\")).providers, a=r(\"$T/models.orig\"), b=r(\"$A/models.json\"); process.exit(JSON.stringify(a.ollama)===JSON.stringify(b.ollama) && JSON.stringify(a.openrouter)===JSON.stringify(b.openrouter) ? 0 : 1)"'
check "install: the file's mode kept (640)" [ "$(stat -c %a "$A/models.json")" = 640 ]
check "install: a backup of each changed file, as it was, private" eval \
    'cmp -s "$T/models.orig" "$A"/models.json.bak-* && cmp -s "$T/settings.orig" "$A"/settings.json.bak-* && [ "$(stat -c %a "$A"/models.json.bak-*)" = 600 ]'
check "install: the model appended to enabledModels, nothing else" eval \
    'kept "$T/settings.orig" "$A/settings.json" && node -e "const s=require(\"$A/settings.json\"); process.exit(JSON.stringify(s.enabledModels)===JSON.stringify([\"ollama/qwen3:8b\",\"openrouter/anthropic/claude\",\"dsv41-sparks/deepseek-v4.1-flash\"]) ? 0 : 1)"'
check "install: not the default model without SET_DEFAULT" eval '! grep -q defaultModel "$A/settings.json"'
check "install: the extension" cmp -s "$root/pi/dsv41-sparks.ts" "$A/extensions/dsv41-sparks.ts"
check "install: no key in Pi's files or the output" eval '! grep -rq "pikey-secret" "$A" && ! contains "$out" "pikey-secret" 2>/dev/null'
sums() { (cd "$A" && find . -type f | sort | xargs sha256sum); }
before=$(sums)
out=$(DSV41_API_KEY=pikey-secret PI_CODING_AGENT_DIR=$A "$INSTALL" http://spark-head:8000/v1/ 2>&1); rc=$?
check "install again (another spelling of the URL): exit 0, nothing changed, no new backup" eval \
    '[ $rc -eq 0 ] && [ "$(sums)" = "$before" ] && contains "$out" "unchanged"'
out=$(SET_DEFAULT=1 PI_CODING_AGENT_DIR=$A "$INSTALL" http://spark-head:8000/v1 2>&1); rc=$?
check "SET_DEFAULT=1: the startup model" eval \
    '[ $rc -eq 0 ] && node -e "const s=require(\"$A/settings.json\"); process.exit(s.defaultProvider===\"dsv41-sparks\" && s.defaultModel===\"deepseek-v4.1-flash\" && s.theme===\"dark\" ? 0 : 1)"'
out=$(KEY_ENV=MY_SPARK_KEY PI_CODING_AGENT_DIR=$A "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "KEY_ENV: the key read from the variable it names" eval \
    '[ $rc -eq 0 ] && grep -q "\"apiKey\": \"\$MY_SPARK_KEY\"" "$A/models.json"'
PI_CODING_AGENT_DIR=$A "$INSTALL" http://spark-head:8000 > /dev/null 2>&1
E=$T/empty
out=$(PI_CODING_AGENT_DIR=$E "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "a first install (no Pi configuration yet): exit 0, models.json made" eval \
    '[ $rc -eq 0 ] && node -e "require(\"$E/models.json\").providers[\"dsv41-sparks\"]" && [ ! -e "$E/settings.json" ]'

# --- dotfiles kept elsewhere (a repository of them): the files the links name are edited,
# the links stay links; a key that appears twice: the one JSON.parse (and Pi) takes, the last
L=$T/linked
mkdir -p "$L/agent" "$L/dotfiles"
printf '{\n  "providers": {"old": {"apiKey": "x"}},\n  "providers": {"ollama": {"apiKey": "ollama"}}\n}\n' > "$L/dotfiles/models.json"
printf '{"enabledModels": ["ollama/m"]}\n' > "$L/dotfiles/settings.json"
ln -s ../dotfiles/models.json "$L/agent/models.json"
ln -s ../dotfiles/settings.json "$L/agent/settings.json"
out=$(PI_CODING_AGENT_DIR=$L/agent "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "symlinked models.json and settings.json: exit 0, still links" eval \
    '[ $rc -eq 0 ] && [ -L "$L/agent/models.json" ] && [ -L "$L/agent/settings.json" ]' ||
    printf '%s\n' "$out" | tail -3
check "symlinked: the provider in the file the link names" eval \
    'node -e "const m=JSON.parse(require(\"fs\").readFileSync(\"$L/dotfiles/models.json\",\"utf8\")); process.exit(m.providers[\"dsv41-sparks\"] && m.providers.ollama ? 0 : 1)"'
check "symlinked: the model enabled in the settings the link names" grep -q "dsv41-sparks/deepseek-v4.1-flash" "$L/dotfiles/settings.json"
check "a key twice: the last one (what JSON.parse takes) edited, the first left as it was" eval \
    'grep -q "\"providers\": {\"old\": {\"apiKey\": \"x\"}}," "$L/dotfiles/models.json"'
ln -s ../nowhere/models.json "$L/agent/broken.json"
rm "$L/agent/models.json"
ln -s ../nowhere/models.json "$L/agent/models.json"
before_l=$(cd "$L" && find . | sort; cat "$L/dotfiles/settings.json")
out=$(PI_CODING_AGENT_DIR=$L/agent "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "a link that leads nowhere: refused, named, nothing changed" eval \
    '[ $rc -ne 0 ] && contains "$out" "is a symbolic link to ../nowhere/models.json" && [ "$(cd "$L" && find . | sort; cat "$L/dotfiles/settings.json")" = "$before_l" ]'

# --- no pi on PATH: install.sh installs it with npm (into a prefix of the test's) ------------------
mkdir -p "$T/node22"
ln -s "$bin/node" "$T/node22/node"
G=$T/npm-global
out=$(PATH="$G/bin:$T/node22:/usr/bin:/bin" NPM_CONFIG_PREFIX=$G PI_CODING_AGENT_DIR=$T/fresh \
    "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "no pi on PATH: installed with npm, then configured (exit 0)" eval \
    '[ $rc -eq 0 ] && contains "$out" "installing Pi: npm install -g" && [ -x "$G/bin/pi" ] && [ -e "$T/fresh/models.json" ]'
rm -rf "$G"

# --- what it refuses, changing nothing -------------------------------------------------------
before=$(sums)
out=$(PI_CODING_AGENT_DIR=$A "$INSTALL" 2>&1); rc=$?
check "no URL: exit 2, an example given, nothing changed" eval '[ $rc -eq 2 ] && contains "$out" "http://spark-head:8000/v1" && [ "$(sums)" = "$before" ]'
out=$(PI_CODING_AGENT_DIR=$A "$INSTALL" "not a url" 2>&1); rc=$?
check "a URL that is none: exit 2, nothing changed" eval '[ $rc -eq 2 ] && contains "$out" "is not a base URL" && [ "$(sums)" = "$before" ]'
mkdir -p "$T/nonode"
for t in bash sh sed sort head dirname cat; do ln -sf "$(command -v $t)" "$T/nonode/$t"; done
out=$(PATH=$T/nonode PI_CODING_AGENT_DIR=$A "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "no node: exit 2, says what to install, nothing changed" eval '[ $rc -eq 2 ] && contains "$out" "Node.js >= 22.19" && [ "$(sums)" = "$before" ]'
printf '#!/bin/sh\necho v20.19.2\n' > "$T/nonode/node"
chmod +x "$T/nonode/node"
out=$(PATH=$T/nonode PI_CODING_AGENT_DIR=$A "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "node 20 and no Pi: exit 2, too old for Pi 1.x, nothing changed" eval '[ $rc -eq 2 ] && contains "$out" "too old for Pi 1.x" && [ "$(sums)" = "$before" ]'
B=$T/broken
mkdir -p "$B"
printf '{\n  "providers": {\n    "x": {"apiKey": "k",}\n  }\n}\n' > "$B/models.json"
cp "$B/models.json" "$T/broken.orig"
out=$(PI_CODING_AGENT_DIR=$B "$INSTALL" http://spark-head:8000 2>&1); rc=$?
check "models.json not JSON: exit 2, the file and line named, nothing changed" eval \
    '[ $rc -eq 2 ] && contains "$out" "models.json is not JSON (line 3" && cmp -s "$B/models.json" "$T/broken.orig" && [ "$(ls "$B")" = models.json ]'

# --- the real Pi against the simulator ------------------------------------------------------
P=$(test_ports)
REC=$T/requests.jsonl
KEY=pi-test-key-$$
VLLM_API_KEY=$KEY DSV41_SIM_BOOT_MS=50 DSV41_SIM_RECORD=$REC "$SIM" /model \
    --served-model-name deepseek-v4.1-flash --host 127.0.0.1 --port $P > "$T/sim.log" 2>&1 &
simpid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$P/health" && break; sleep 0.05; done
W=$T/agent-sim
PI_CODING_AGENT_DIR=$W "$INSTALL" "http://127.0.0.1:$P" > /dev/null 2>&1
# a second provider on the same server, which the extension must leave alone
node -e '
    const fs = require("fs"), f = process.argv[1], m = JSON.parse(fs.readFileSync(f, "utf8"));
    m.providers.other = { baseUrl: m.providers["dsv41-sparks"].baseUrl, api: "openai-completions",
        apiKey: "$DSV41_API_KEY", models: [{ id: "deepseek-v4.1-flash", name: "other" }] };
    fs.writeFileSync(f, JSON.stringify(m, null, 2));' "$W/models.json"
runpi() { # model thinking prompt
    : > "$REC"
    (cd "$T/work" && DSV41_API_KEY=$KEY PI_CODING_AGENT_DIR=$W PI_OFFLINE=1 timeout 120 \
        pi -p "$3" --model "$1" --thinking "$2" < /dev/null)
}
field() { jq -r "$1" "$REC" | head -1; }
mkdir -p "$T/work"
echo "the code is 4711" > "$T/work/notes.txt"
out=$(runpi dsv41-sparks/deepseek-v4.1-flash low "What is 17 * 23?" 2>&1); rc=$?
check "pi -p: answered through the simulator" eval '[ $rc -eq 0 ] && contains "$out" "391"'
check "pi -p: no max_tokens and no max_completion_tokens in the request" \
    eval '[ "$(field ".body | has(\"max_tokens\") or has(\"max_completion_tokens\")")" = false ]'
check "pi -p: the bearer key from the environment" [ "$(field .authorization)" = "Bearer $KEY" ]
check "pi -p: streamed to /v1/chat/completions" eval '[ "$(field .url)" = /v1/chat/completions ] && [ "$(field .body.stream)" = true ]'
for lv in minimal:low low:low medium:high high:high xhigh:max max:max; do
    runpi dsv41-sparks/deepseek-v4.1-flash "${lv%%:*}" "What is 17 * 23?" > /dev/null 2>&1
    check "thinking ${lv%%:*}: reasoning_effort ${lv#*:}" [ "$(field .body.reasoning_effort)" = "${lv#*:}" ]
done
out=$(runpi dsv41-sparks/deepseek-v4.1-flash high "Read the file notes.txt and tell me what it says" 2>&1); rc=$?
check "a tool round trip: Pi's read tool ran and the answer used it" eval '[ $rc -eq 0 ] && contains "$out" "The file says: the code is 4711"'
check "a tool round trip: two requests, the second with the tool's result" eval \
    '[ "$(wc -l < "$REC")" -eq 2 ] && [ "$(jq -r ".body.messages[-1].role" "$REC" | tail -1)" = tool ]'
out=$(runpi other/deepseek-v4.1-flash low "What is 17 * 23?" 2>&1); rc=$?
check "another provider: its request keeps Pi's limit" eval \
    '[ $rc -eq 0 ] && [ "$(field ".body | has(\"max_tokens\") or has(\"max_completion_tokens\")")" = true ]'
rm "$W/extensions/dsv41-sparks.ts"
out=$(runpi dsv41-sparks/deepseek-v4.1-flash low "What is 17 * 23?" 2>&1); rc=$?
limit=$(field '.body.max_completion_tokens // .body.max_tokens')
echo "    without the extension Pi asked for $limit tokens"
check "without the extension the limit is back (so the extension is what removes it)" eval \
    '[ $rc -eq 0 ] && [ "$limit" != null ] && [ "$limit" -gt 0 ]'
out=$(DSV41_API_KEY=wrong PI_CODING_AGENT_DIR=$W PI_OFFLINE=1 timeout 60 pi -p "What is 17 * 23?" \
    --model dsv41-sparks/deepseek-v4.1-flash < /dev/null 2>&1); rc=$?
check "a wrong key: Pi fails (the server refused it)" eval '[ $rc -ne 0 ] || ! contains "$out" 391 2>/dev/null'

# --- dsv41-top pi: the lines to run; --check ----------------------------------------------
TOP=${DSV41_BIN:-$root/build/dsv41-top}
out=$(HOME=$T API_KEY_FILE=$T/state/api_key "$TOP" pi --url http://spark-head:8000 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
check "pi: the install command with the head's address and /v1" eval \
    '[ $rc -eq 0 ] && contains "$out" "install.sh\" http://spark-head:8000/v1" && contains "$out" "scp -r spark-head:$root/pi \"\$d\""'
check "pi: the key fetched over ssh from the head's home, never printed" eval \
    'contains "$out" "ssh spark-head '"'"'cat ~/state/api_key'"'"'" && ! contains "$out" "$KEY" 2>/dev/null'
check "pi: the pi command" contains "$out" "pi --model dsv41-sparks/deepseek-v4.1-flash"
PI_CODING_AGENT_DIR=$W "$INSTALL" "http://127.0.0.1:$P" > /dev/null 2>&1
out=$(DSV41_API_KEY=$KEY PI_CODING_AGENT_DIR=$W "$TOP" pi --check 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
check "pi --check: every check PASS on the simulator, exit 0" eval \
    '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | grep -c ^PASS)" -eq 4 ] && contains "$out" "391"'
check "pi --check: the request went as Pi sends it (no limit, reasoning_effort low)" eval \
    '[ "$(jq -r ".body | has(\"max_completion_tokens\") or has(\"max_tokens\")" "$REC" | tail -1)" = false ] && [ "$(jq -r .body.reasoning_effort "$REC" | tail -1)" = low ]'
out=$(DSV41_API_KEY=wrong-key PI_CODING_AGENT_DIR=$W "$TOP" pi --check 2>&1); rc=$?
check "pi --check with a wrong key: FAIL, the refusal named, exit 1" eval \
    '[ $rc -eq 1 ] && contains "$out" "FAIL request" && contains "$out" "HTTP 401"'
out=$(env -u DSV41_API_KEY PI_CODING_AGENT_DIR=$W "$TOP" pi --check 2>&1); rc=$?
check "pi --check without the key variable: FAIL, says to export it" eval \
    '[ $rc -eq 1 ] && contains "$out" "FAIL key" && contains "$out" "DSV41_API_KEY is not set"'
rm "$W/extensions/dsv41-sparks.ts"
out=$(DSV41_API_KEY=$KEY PI_CODING_AGENT_DIR=$W "$TOP" pi --check 2>&1); rc=$?
check "pi --check without the extension: FAIL, named" eval '[ $rc -eq 1 ] && contains "$out" "FAIL extension"'
out=$(PI_CODING_AGENT_DIR=$T/nothing "$TOP" pi --check 2>&1); rc=$?
check "pi --check with no Pi configuration: FAIL, says to run install.sh" eval \
    '[ $rc -eq 1 ] && contains "$out" "run pi/install.sh"'

# --- pi/install.sh --check: the same where Pi runs, node alone ------------------------------
# the laptop's copy (what `dsv41-top pi`'s scp line makes), no dsv41-top on PATH
cp -r "$root/pi" "$T/laptop-pi"
LCHECK=$T/laptop-pi/install.sh
# a laptop's PATH: node, Pi and what a shell needs; nothing of dsv41-top
mkdir -p "$T/lbin"
for c in node pi dirname sed sort head; do ln -s "$(command -v $c)" "$T/lbin/$c"; done
lcheck() { PATH=$T/lbin "$LCHECK" --check "$@"; }
PI_CODING_AGENT_DIR=$W "$LCHECK" "http://127.0.0.1:$P" > /dev/null 2>&1
: > "$REC"
out=$(DSV41_API_KEY=$KEY PI_CODING_AGENT_DIR=$W lcheck 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
check "install.sh --check: every check PASS (pi, provider, extension, key, endpoint, request), exit 0" eval \
    '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | grep -c ^PASS)" -eq 6 ] && contains "$out" "391" && contains "$out" "6 passed, 0 failed"'
check "install.sh --check: the request went as Pi sends it (streamed, no limit, reasoning_effort low, the bearer key)" eval \
    '[ "$(jq -r ".body | has(\"max_completion_tokens\") or has(\"max_tokens\")" "$REC" | tail -1)" = false ] &&
     [ "$(jq -r .body.reasoning_effort "$REC" | tail -1)" = low ] && [ "$(jq -r .body.stream "$REC" | tail -1)" = true ] &&
     [ "$(jq -r .authorization "$REC" | tail -1)" = "Bearer $KEY" ]'
out=$(DSV41_API_KEY=wrong-key PI_CODING_AGENT_DIR=$W lcheck 2>&1); rc=$?
check "install.sh --check with a wrong key: the endpoint and the request FAIL with 401, exit 1" eval \
    '[ $rc -eq 1 ] && contains "$out" "FAIL endpoint" && contains "$out" "FAIL request" && contains "$out" "HTTP 401"'
out=$(unset DSV41_API_KEY; PI_CODING_AGENT_DIR=$W lcheck 2>&1); rc=$?
check "install.sh --check without the key variable: FAIL, says to export it, nothing sent" eval \
    '[ $rc -eq 1 ] && contains "$out" "FAIL key" && contains "$out" "DSV41_API_KEY is not set" && contains "$out" "not sent"'
rm "$W/extensions/dsv41-sparks.ts"
out=$(DSV41_API_KEY=$KEY PI_CODING_AGENT_DIR=$W lcheck 2>&1); rc=$?
check "install.sh --check without the extension: FAIL, named" eval '[ $rc -eq 1 ] && contains "$out" "FAIL extension"'
out=$(PI_CODING_AGENT_DIR=$T/nothing lcheck 2>&1); rc=$?
check "install.sh --check with no Pi configuration: FAIL, says to run install.sh" eval \
    '[ $rc -eq 1 ] && contains "$out" "run pi/install.sh"'
kill "$simpid" 2>/dev/null; wait "$simpid" 2>/dev/null; simpid=
PI_CODING_AGENT_DIR=$W "$LCHECK" "http://127.0.0.1:$P" > /dev/null 2>&1
out=$(DSV41_API_KEY=$KEY PI_CODING_AGENT_DIR=$W lcheck --timeout 5 2>&1); rc=$?
check "install.sh --check with the server gone: the endpoint FAILs with the reason, exit 1" eval \
    '[ $rc -eq 1 ] && contains "$out" "FAIL endpoint" && grep -qi "refused\|ECONNREFUSED" <<< "$out"'
out=$(PI_CODING_AGENT_DIR=$W lcheck --bogus 2>&1); rc=$?
check "install.sh --check --bogus: exit 2, usage" eval '[ $rc -eq 2 ] && contains "$out" "usage: pi/install.sh --check"'
summary
