// A file-backed storage adapter for Node.js: one file per key in a
// directory, written to a temporary file and renamed into place (a crash
// leaves the old or the new value, never half of one) and fsynced.
// compareAndSet is atomic across processes on one host: calls on a key are
// queued within the process, and each holds the key's lock file (created
// exclusively) around its read, compare and write, so two processes sharing
// a directory cannot both win. A lock left by a process that died is taken
// over once its holder is gone.
import { mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { storedRevision } from "./adapters.js";

const encode = (key) => encodeURIComponent(key);
const decode = (name) => decodeURIComponent(name);

export function fileAdapter(dir) {
  const ready = mkdir(dir, { recursive: true });
  const queues = new Map();
  // Runs `task` after every earlier task on `key`.
  const serial = (key, task) => {
    const previous = queues.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    queues.set(key, next.catch(() => {}));
    return next;
  };
  const read = async (key) => {
    await ready;
    try {
      return await readFile(join(dir, encode(key)), "utf8");
    } catch (e) {
      if (e.code === "ENOENT") return null;
      throw e;
    }
  };
  // The key's lock file, created exclusively; holds the holder's pid.
  const locked = async (key, task) => {
    await ready;
    const lock = `${join(dir, encode(key))}.lock`;
    const until = Date.now() + 10_000;
    for (let pause = 1; ; pause = Math.min(pause * 2, 25)) {
      try {
        const file = await open(lock, "wx");
        await file.writeFile(String(process.pid));
        await file.close();
        break;
      } catch (e) {
        if (e.code !== "EEXIST") throw e;
        if (await abandoned(lock)) { await rm(lock, { force: true }); continue; }
        if (Date.now() > until) throw new Error(`${lock} stayed locked for 10 s`);
        await new Promise((r) => setTimeout(r, pause));
      }
    }
    try { return await task(); } finally { await rm(lock, { force: true }); }
  };
  const write = async (key, value) => {
    await ready;
    const path = join(dir, encode(key));
    const tmp = `${path}.${process.pid}.tmp`;
    const file = await open(tmp, "w");
    try {
      await file.writeFile(value, "utf8");
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  };
  return {
    get: (key) => read(key),
    set: (key, value) => serial(key, () => locked(key, () => write(key, value))),
    delete: (key) => serial(key, () => locked(key, () => rm(join(dir, encode(key)), { force: true }))),
    async list(prefix) {
      await ready;
      return (await readdir(dir)).filter((n) => !n.endsWith(".tmp") && !n.endsWith(".lock")).map(decode).filter((k) => k.startsWith(prefix));
    },
    compareAndSet: (key, expected, value) =>
      serial(key, () => locked(key, async () => {
        if (storedRevision(await read(key)) !== expected) return false;
        await write(key, value);
        return true;
      })),
  };
}

// A lock whose holder process is gone (or that is unreadable and old).
async function abandoned(lock) {
  try {
    const pid = Number(await readFile(lock, "utf8"));
    if (Number.isSafeInteger(pid) && pid > 0) {
      try { process.kill(pid, 0); return false; } catch (e) { return e.code === "ESRCH"; }
    }
    return Date.now() - (await stat(lock)).mtimeMs > 5_000;
  } catch {
    return false;
  }
}
