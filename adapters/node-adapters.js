// A file-backed storage adapter for Node.js: one file per key in a
// directory, written to a temporary file and renamed into place (a crash
// leaves the old or the new value, never half of one) and fsynced.
// compareAndSet is atomic within one process (calls on a key are queued);
// two processes sharing a directory must not drive the same intent at once.
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
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
    set: (key, value) => serial(key, () => write(key, value)),
    delete: (key) => serial(key, async () => { await ready; await rm(join(dir, encode(key)), { force: true }); }),
    async list(prefix) {
      await ready;
      return (await readdir(dir)).filter((n) => !n.endsWith(".tmp")).map(decode).filter((k) => k.startsWith(prefix));
    },
    compareAndSet: (key, expected, value) =>
      serial(key, async () => {
        if (storedRevision(await read(key)) !== expected) return false;
        await write(key, value);
        return true;
      }),
  };
}
