// The hub's own JS client (@huggingface/hub) against dsv41-sim's hub: it
// lists the tree through every page and downloads files (small ones from the
// hub, LFS ones through the resolve redirect to the CDN), and what it gets
// must be the revision on disk. Prints "ok - ..." / "FAIL - ..." lines.
// usage: node client.mjs HUB_URL REPO REVISION_DIR [TOKEN]
import { downloadFile, listFiles } from "@huggingface/hub";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const [hubUrl, repo, dir, token] = process.argv.slice(2);
let failed = 0;
const check = (name, ok, detail) => {
    console.log(`${ok ? "ok  " : "FAIL"} - ${name}${ok || !detail ? "" : `: ${detail}`}`);
    if (!ok) failed++;
};

function walk(base, rel = "") {
    const out = [];
    for (const name of readdirSync(join(base, rel)).sort()) {
        if (name.startsWith(".")) continue;
        const r = rel ? `${rel}/${name}` : name;
        if (statSync(join(base, r)).isDirectory()) out.push(...walk(base, r));
        else out.push(r);
    }
    return out;
}
const sha256 = (b) => createHash("sha256").update(b).digest("hex");
const gitSha1 = (b) => createHash("sha1").update(`blob ${b.length}\0`).update(b).digest("hex");

const params = { repo: { type: "model", name: repo }, hubUrl, ...(token ? { accessToken: token } : {}) };
const files = [];
for await (const e of listFiles({ ...params, recursive: true })) if (e.type === "file") files.push(e);
const onDisk = walk(dir);
check("listFiles: every file of the revision, through every page", JSON.stringify(files.map((f) => f.path).sort()) === JSON.stringify(onDisk.slice().sort()), `${files.length} listed, ${onDisk.length} on disk`);
let sizes = true, oids = true;
for (const f of files) {
    const b = readFileSync(join(dir, f.path));
    sizes &&= f.size === b.length;
    oids &&= f.lfs ? f.lfs.oid === sha256(b) && f.lfs.size === b.length : f.oid === gitSha1(b);
}
check("listFiles: sizes as on disk", sizes);
check("listFiles: lfs.oid is the sha256, oid the git blob sha1", oids);
check("listFiles: the shards are LFS files", files.filter((f) => f.path.includes(".safetensors")).every((f) => f.lfs));

for (const path of ["config.json", "model-00001-of-00006.safetensors", "model-00005-of-00006.safetensors.part02"]) {
    const blob = await downloadFile({ ...params, path });
    const got = Buffer.from(await blob.arrayBuffer());
    check(`downloadFile ${path}: the bytes on disk`, sha256(got) === sha256(readFileSync(join(dir, path))), `${got.length} bytes`);
}
const none = await downloadFile({ ...params, path: "no-such-file" });
check("downloadFile of a missing file: null (EntryNotFound)", none === null);
process.exit(failed ? 1 : 0);
