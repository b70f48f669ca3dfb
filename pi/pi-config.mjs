// pi-config.mjs: the edits pi/install.sh makes to Pi's configuration, run
// with Pi's own runtime (node). Every other provider, model, key and
// setting stays byte for byte as it was: the files are edited as text, at
// the spans a small JSON scanner finds, never parsed and printed again. A
// file that changes is backed up first (NAME.bak-YYYYmmdd-HHMMSS) and
// replaced atomically (a temporary file beside it with the same mode,
// fsync'ed, renamed); a file that would not change is not touched.
//
// usage: node pi-config.mjs BASE_URL
// environment: PI_CODING_AGENT_DIR (else ~/.pi/agent), KEY_ENV (the
// variable the key is read from at request time, default DSV41_API_KEY),
// SET_DEFAULT=1 (the startup model too), DSV41_PI_DIR (where the fragment
// and the extension are; default: beside this file).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PROVIDER = "dsv41-sparks";
const MODEL = "deepseek-v4.1-flash";

class Refusal extends Error {}

// ---- a JSON scanner that keeps where everything is ------------------------------------

// Returns the value at text[i...] as {kind, start, end, members?, items?};
// members: [{key, start (of the key), vstart, vend, value}].
function scan(text, file) {
  let i = 0;
  const fail = (what) => {
    const line = text.slice(0, i).split("\n").length;
    throw new Refusal(`${file} is not JSON (line ${line}: ${what}): fix it or move it away; nothing was changed`);
  };
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  const str = () => {
    const start = i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") i++;
      else if (text.charCodeAt(i) < 0x20) fail("a control character in a string");
      i++;
    }
    if (i >= text.length) fail("a string that does not end");
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = () => {
    ws();
    const start = i;
    const c = text[i];
    if (c === "{") {
      i++;
      const members = [];
      ws();
      if (text[i] === "}") {
        i++;
        return { kind: "object", start, end: i, members };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("a key expected");
        const kstart = i;
        const key = str();
        ws();
        if (text[i] !== ":") fail("':' expected");
        i++;
        const v = value();
        members.push({ key, start: kstart, vstart: v.start, vend: v.end, value: v });
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return { kind: "object", start, end: i, members };
        }
        fail("',' or '}' expected");
      }
    }
    if (c === "[") {
      i++;
      const items = [];
      ws();
      if (text[i] === "]") {
        i++;
        return { kind: "array", start, end: i, items };
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return { kind: "array", start, end: i, items };
        }
        fail("',' or ']' expected");
      }
    }
    if (c === '"') {
      const s = str();
      return { kind: "string", start, end: i, v: s };
    }
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail("a value expected");
    i += m[0].length;
    return { kind: "scalar", start, end: i };
  };
  const root = value();
  ws();
  if (i !== text.length) fail("text after the end");
  if (root.kind !== "object") fail("the top is not an object");
  return root;
}

// The indentation of the line pos is on, and the file's indent step.
function indentAt(text, pos) {
  const ls = text.lastIndexOf("\n", pos - 1) + 1;
  return /^[ \t]*/.exec(text.slice(ls))[0];
}
function step(text) {
  const m = /\n([ \t]+)"/.exec(text);
  return m ? (m[1].startsWith("\t") ? "\t" : m[1]) : "  ";
}

// JSON text of v, as a member value at indentation ind.
function render(v, ind, st) {
  return JSON.stringify(v, null, st).split("\n").join("\n" + ind);
}

// obj (a scanned object): member key set to v (replaced in place, or added
// after the last member). Returns the new text.
// The member JSON.parse (and so Pi) takes when a key appears twice: the last.
function member(obj, key) {
  return obj.members.findLast((x) => x.key === key);
}

function setMember(text, obj, key, v) {
  const st = step(text);
  const m = member(obj, key);
  if (m) {
    const ind = indentAt(text, m.start);
    return text.slice(0, m.vstart) + render(v, ind, st) + text.slice(m.vend);
  }
  if (obj.members.length) {
    const last = obj.members[obj.members.length - 1];
    const ind = indentAt(text, last.start);
    return (
      text.slice(0, last.vend) +
      ",\n" + ind + JSON.stringify(key) + ": " + render(v, ind, st) +
      text.slice(last.vend)
    );
  }
  const outer = indentAt(text, obj.start);
  const ind = outer + st;
  return (
    text.slice(0, obj.start + 1) +
    "\n" + ind + JSON.stringify(key) + ": " + render(v, ind, st) + "\n" + outer +
    text.slice(obj.end - 1)
  );
}

// arr (a scanned array): s appended.
function appendItem(text, arr, s) {
  const item = JSON.stringify(s);
  if (!arr.items.length) return text.slice(0, arr.start + 1) + item + text.slice(arr.end - 1);
  const n = arr.items.length, last = arr.items[n - 1];
  // the separator the list already uses (", " or ",\n    "), else ", "
  const sep = n > 1 ? text.slice(arr.items[n - 2].end, last.start) : ", ";
  return text.slice(0, last.end) + sep + item + text.slice(last.end);
}

// ---- files --------------------------------------------------------------------------

function stamp() {
  const d = new Date();
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

// Where a write to file goes: the file a symbolic link names (dotfiles kept
// in a repository are often links; replacing the link would leave the file
// it names without the provider), or file itself.
function writeTarget(file) {
  let st;
  try {
    st = fs.lstatSync(file);
  } catch (e) {
    if (e.code === "ENOENT") return file;
    throw e;
  }
  if (!st.isSymbolicLink()) return file;
  try {
    return fs.realpathSync(file);
  } catch (e) {
    throw new Refusal(`${file} is a symbolic link to ${fs.readlinkSync(file)}, which cannot be reached (${e.code}): fix the link or remove it; nothing was changed`);
  }
}

// Writes text to file atomically (through a symbolic link: to the file it
// names); the old file backed up. False when the file already holds exactly that.
function replace(linkOrFile, text, mode) {
  const file = writeTarget(linkOrFile);
  let old = null;
  try {
    old = fs.readFileSync(file, "utf8");
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  if (old === text) return false;
  let m = mode;
  if (old !== null) {
    m = fs.statSync(file).mode & 0o7777;
    let bak = `${file}.bak-${stamp()}`;
    for (let n = 2; fs.existsSync(bak); n++) bak = `${file}.bak-${stamp()}-${n}`; /* same second */
    fs.copyFileSync(file, bak, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(bak, 0o600); // other providers' keys may be in it
    console.log(`backup: ${bak}`);
  }
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, "wx", m);
  try {
    fs.writeSync(fd, text);
    fs.fchmodSync(fd, m);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  return true;
}

function readOr(file, fallback) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return fallback;
    throw new Refusal(`cannot read ${file}: ${e.message}`);
  }
}

// ---- the edits ------------------------------------------------------------------------

function normalizeUrl(u) {
  let s = String(u || "").trim();
  if (!/^https?:\/\/[^/\s]+/.test(s))
    throw new Refusal(`'${u}' is not a base URL: give the head's API, e.g. http://spark-head:8000/v1`);
  s = s.replace(/\/+$/, "");
  if (!/\/v1$/.test(s)) s += "/v1";
  return s;
}

function main() {
  const base = normalizeUrl(process.argv[2]);
  const keyEnv = process.env.KEY_ENV || "DSV41_API_KEY";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyEnv))
    throw new Refusal(`KEY_ENV='${keyEnv}' is not a variable name`);
  const here = process.env.DSV41_PI_DIR || path.dirname(fileURLToPath(import.meta.url));
  const dir = process.env.PI_CODING_AGENT_DIR || path.join(os.homedir(), ".pi", "agent");
  const fragment = JSON.parse(fs.readFileSync(path.join(here, "models.fragment.json"), "utf8"));
  const entry = fragment.providers[PROVIDER];
  entry.baseUrl = base;
  entry.apiKey = "$" + keyEnv; // the name: Pi reads the key at request time

  // everything is checked before anything is written
  const modelsFile = path.join(dir, "models.json");
  const settingsFile = path.join(dir, "settings.json");
  writeTarget(modelsFile); // a link that leads nowhere: said before anything is written
  writeTarget(settingsFile);
  let models = readOr(modelsFile, null);
  let settings = readOr(settingsFile, null);
  const mroot = models === null ? null : scan(models, modelsFile);
  const sroot = settings === null ? null : scan(settings, settingsFile);
  const prov = mroot && member(mroot, "providers");
  if (prov && prov.value.kind !== "object")
    throw new Refusal(`${modelsFile}: "providers" is not an object; nothing was changed`);

  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (models === null) models = JSON.stringify({ providers: { [PROVIDER]: entry } }, null, 2) + "\n";
  else if (!prov) models = setMember(models, mroot, "providers", { [PROVIDER]: entry });
  else models = setMember(models, prov.value, PROVIDER, entry);
  scan(models, modelsFile); // what we made is JSON, or nothing is written
  const mChanged = replace(modelsFile, models, 0o600);

  const id = `${PROVIDER}/${MODEL}`;
  let sChanged = false;
  if (sroot) {
    let s = settings;
    let root = sroot;
    const en = member(root, "enabledModels");
    if (en && en.value.kind === "array") {
      const have = en.value.items.some((it) => it.kind === "string" && it.v === id);
      if (!have) {
        s = appendItem(s, en.value, id);
        root = scan(s, settingsFile);
      }
    }
    if (process.env.SET_DEFAULT === "1") {
      s = setMember(s, root, "defaultProvider", PROVIDER);
      root = scan(s, settingsFile);
      s = setMember(s, root, "defaultModel", MODEL);
      scan(s, settingsFile);
    }
    sChanged = replace(settingsFile, s, 0o600);
  } else if (process.env.SET_DEFAULT === "1") {
    sChanged = replace(settingsFile,
      JSON.stringify({ defaultProvider: PROVIDER, defaultModel: MODEL }, null, 2) + "\n", 0o600);
  }

  const extDir = path.join(dir, "extensions");
  fs.mkdirSync(extDir, { recursive: true, mode: 0o700 });
  const ext = fs.readFileSync(path.join(here, "dsv41-sparks.ts"), "utf8");
  const eChanged = replace(path.join(extDir, "dsv41-sparks.ts"), ext, 0o644);

  console.log(`${modelsFile}: ${mChanged ? `provider ${PROVIDER} -> ${base}` : "unchanged"}`);
  console.log(`${settingsFile}: ${sChanged ? "updated" : sroot || process.env.SET_DEFAULT === "1" ? "unchanged" : "none (not needed)"}`);
  console.log(`${path.join(extDir, "dsv41-sparks.ts")}: ${eChanged ? "installed" : "unchanged"}`);
  console.log(`the key is read from $${keyEnv} when Pi sends a request`);
}

try {
  main();
} catch (e) {
  if (e instanceof Refusal) {
    console.error(`pi/install.sh: ${e.message}`);
    process.exit(2);
  }
  // a file system error (no space, no permission): said plainly; a file is
  // either its old self or its new one (atomic replace)
  console.error(`pi/install.sh: ${e.message}`);
  process.exit(1);
}
