// pi-check.mjs: `pi/install.sh --check`, where Pi runs (a laptop, a Mac,
// the head): what `dsv41-top pi --check` checks, with node alone. Pi on
// PATH; the dsv41-sparks provider in Pi's models.json; the extension that
// lifts Pi's output limit; the key variable the provider names, set; the
// endpoint answering that key with the model; one request sent the way Pi
// sends it with this entry (streamed, reasoning_effort of level low, no
// output limit: what the extension leaves), answered. PASS/FAIL per check,
// then "N passed, M failed"; exit 0 all passed, 1 one failed, 2 usage.
//
// usage: node pi-check.mjs [--timeout SEC]
// environment: PI_CODING_AGENT_DIR (else ~/.pi/agent), the key variable
// the provider names (DSV41_API_KEY unless KEY_ENV was given to install.sh).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const PROVIDER = "dsv41-sparks";
const MODEL = "deepseek-v4.1-flash";
const QUESTION = "What is 17 * 23?";

const BODY_MAX = 1 << 20; // what is read of an answer: a model list, a stream
const ERROR_MAX = 4096; // of an error's body

let passed = 0;
let failed = 0;
let secret = ""; // the key: never shown, whatever an error message carries
function line(ok, what, evidence) {
  if (ok) passed++;
  else failed++;
  let text = String(evidence);
  if (secret) text = text.split(secret).join("<the key>");
  // a server's words are shown, never its control characters (C0, C1) or
  // bidi overrides that would reorder the line
  const clean = text.replace(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, "?");
  console.log(`${ok ? "PASS" : "FAIL"} ${what.padEnd(10)} ${clean}`);
}

// At most max bytes of a response's body as text; the rest is not read.
async function readCapped(res, max) {
  const dec = new TextDecoder();
  let text = "";
  let n = 0;
  for await (const part of res.body) {
    n += part.length;
    text += dec.decode(part.subarray(0, Math.max(0, part.length - Math.max(0, n - max))), { stream: true });
    if (n >= max) break;
  }
  return text;
}

function usage(msg) {
  if (msg) console.error(`pi/install.sh --check: ${msg}`);
  console.error("usage: pi/install.sh --check [--timeout SEC]");
  process.exit(2);
}

function args() {
  const a = process.argv.slice(2);
  let timeout = 120;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === "--timeout" && i + 1 < a.length && /^[0-9]+$/.test(a[i + 1]) && +a[i + 1] > 0)
      timeout = +a[++i];
    else if (a[i] === "-h" || a[i] === "--help") usage();
    else usage(`not understood: ${a[i]}`);
  }
  return { timeout };
}

// The first executable named name on PATH, or "".
function which(name) {
  for (const d of (process.env.PATH || "").split(path.delimiter)) {
    if (!d) continue;
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return "";
}

// The provider's entry, as Pi reads it (JSON.parse: the last of a key
// written twice, as Pi takes it); throws with why.
function readEntry(dir) {
  const file = path.join(dir, "models.json");
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(`${file}: ${e.code === "ENOENT" ? "missing" : e.message}: run pi/install.sh http://HEAD:8000/v1`);
  }
  let j;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not JSON (${e.message}): Pi cannot read it either`);
  }
  const p = j && j.providers && j.providers[PROVIDER];
  if (!p || typeof p !== "object") throw new Error(`${file} has no ${PROVIDER} provider: run pi/install.sh http://HEAD:8000/v1`);
  if (typeof p.baseUrl !== "string" || !/^https?:\/\//.test(p.baseUrl)) throw new Error(`${file}: ${PROVIDER} has no http(s) baseUrl`);
  const models = Array.isArray(p.models) ? p.models : [];
  const m = models.find((x) => x && x.id === MODEL);
  if (!m) throw new Error(`${file}: ${PROVIDER} has no model ${MODEL}: run pi/install.sh again`);
  const key = typeof p.apiKey === "string" ? p.apiKey : "";
  const low = m.thinkingLevelMap && typeof m.thinkingLevelMap.low === "string" ? m.thinkingLevelMap.low : "";
  return { file, baseUrl: p.baseUrl.replace(/\/+$/, ""), apiKey: key, model: m.id, low };
}

// The streamed answer's text, read as Pi reads an SSE stream: data lines
// of JSON chunks until [DONE]; throws on an error chunk or a line that is
// not JSON.
async function readStream(res) {
  const dec = new TextDecoder();
  let pending = "";
  let content = "";
  let done = false;
  let n = 0;
  const take = (raw) => {
    const l = raw.replace(/\r$/, "");
    if (!l.startsWith("data:")) return;
    const data = l.slice(5).trim();
    if (data === "[DONE]") {
      done = true;
      return;
    }
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new Error(`a stream line that is not JSON: ${data.slice(0, 80)}`);
    }
    if (chunk.error) throw new Error(`the server sent an error: ${JSON.stringify(chunk.error).slice(0, 200)}`);
    const d = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
    if (d && typeof d.content === "string") content += d.content;
  };
  for await (const part of res.body) {
    n += part.length;
    if (n > BODY_MAX) throw new Error(`the stream ran past ${BODY_MAX} bytes without [DONE]`);
    pending += dec.decode(part, { stream: true });
    let nl;
    while (!done && (nl = pending.indexOf("\n")) >= 0) {
      take(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
    if (done) break; // the answer is whole; a server that keeps the line open is no failure
  }
  if (!done && pending) take(pending);
  if (!done) throw new Error(`the stream ended without [DONE] after ${content.length} characters`);
  return content;
}

async function main() {
  const { timeout } = args();
  const pi = which("pi");
  line(!!pi, "pi", pi ? `${pi} (node ${process.versions.node})` : "not on PATH: pi/install.sh URL installs it (npm), or add npm's global bin to PATH");

  const dir = process.env.PI_CODING_AGENT_DIR || path.join(os.homedir(), ".pi", "agent");
  let e;
  try {
    e = readEntry(dir);
  } catch (err) {
    line(false, "provider", err.message);
    for (const w of ["extension", "key", "endpoint", "request"]) line(false, w, "not checked: no provider");
    return;
  }
  line(true, "provider", `${PROVIDER} in ${e.file}: ${e.baseUrl}, model ${e.model}`);

  const extFile = path.join(dir, "extensions", `${PROVIDER}.ts`);
  let ext = "";
  try {
    ext = fs.readFileSync(extFile, "utf8");
  } catch {
    // missing: said below
  }
  const extOk = ext.includes("max_completion_tokens") && ext.includes("before_provider_request");
  line(extOk, "extension", extOk ? extFile : `${extFile}: missing or not the one pi/install.sh installs (run it again), so Pi caps every answer`);

  const m = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(e.apiKey);
  let key = m ? process.env[m[1]] || "" : "";
  if (key) secret = key;
  if (key && !/^[\x21-\x7e]+$/.test(key)) {
    line(false, "key", `$${m[1]} holds a character a key cannot have (a space, a line break: the wrong file exported?); it is not shown`);
    key = "";
    line(false, "endpoint", "not asked: no usable key");
    line(false, "request", "not sent: no usable key");
    return;
  }
  if (!m)
    line(false, "key", e.apiKey ? "the key is written into models.json: run pi/install.sh again to read it from $DSV41_API_KEY instead" : "the provider names no key variable: run pi/install.sh again");
  else line(!!key, "key", key ? `$${m[1]} is set` : `$${m[1]} is not set in this shell: export it (the line from \`dsv41-top pi\` on the head), then start Pi from that shell`);
  if (!key) {
    line(false, "endpoint", "not asked: no key");
    line(false, "request", "not sent: no key");
    return;
  }

  const auth = { authorization: `Bearer ${key}` };
  const signal = () => AbortSignal.timeout(timeout * 1000);
  try {
    // redirect "error": the key goes to the URL Pi uses, and nowhere else
    const r = await fetch(`${e.baseUrl}/models`, { headers: auth, signal: signal(), redirect: "error" });
    const body = await readCapped(r, BODY_MAX);
    let ids = [];
    try {
      ids = (JSON.parse(body).data || []).map((x) => x.id);
    } catch {
      // said below
    }
    if (r.status === 401) line(false, "endpoint", `${e.baseUrl}/models: HTTP 401, the server refused the key in $${m[1]} (is it the head's STATE_DIR/api_key?)`);
    else if (!r.ok) line(false, "endpoint", `${e.baseUrl}/models: HTTP ${r.status}`);
    else line(ids.includes(e.model), "endpoint", `${e.baseUrl}/models: ${ids.includes(e.model) ? `serves ${e.model}` : `serves ${ids.slice(0, 5).join(", ").slice(0, 200) || "nothing"}, not ${e.model}`}`);
  } catch (err) {
    line(false, "endpoint", `${e.baseUrl}/models: ${err.name === "TimeoutError" ? `no answer in ${timeout} s` : err.cause ? err.cause.message || err.cause.code : err.message}`);
  }

  const payload = {
    model: e.model,
    messages: [{ role: "user", content: QUESTION }],
    stream: true,
    stream_options: { include_usage: true },
  };
  if (e.low) payload.reasoning_effort = e.low;
  try {
    const r = await fetch(`${e.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(payload),
      signal: signal(),
      redirect: "error",
    });
    if (!r.ok) {
      const why = r.status === 401 ? `the server refused the key in $${m[1]}` : (await readCapped(r, ERROR_MAX)).slice(0, 200);
      line(false, "request", `${e.baseUrl}/chat/completions: HTTP ${r.status}: ${why}`);
      return;
    }
    const answer = await readStream(r);
    line(answer.length > 0, "request", `${e.baseUrl}/chat/completions ${answer ? `answered: ${answer.slice(0, 160)}` : "gave an empty answer"}`);
  } catch (err) {
    line(false, "request", `${e.baseUrl}/chat/completions: ${err.name === "TimeoutError" ? `no answer in ${timeout} s` : err.cause ? err.cause.message || err.cause.code : err.message}`);
  }
}

await main();
console.log(`${passed} passed, ${failed} failed`);
// not process.exit(): a pipe to a slow reader gets every line first
process.exitCode = failed ? 1 : 0;
