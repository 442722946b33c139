// Locks where there are no Web Locks (src/web/locks.rs: a scope's place,
// an idempotent consumer's effect).

// An in-process FIFO lock for runtimes without Web Locks (Node.js, workerd):
// one holder per name inside this process, granted in request order.
// Resolves to a release function, or to null when not granted within
// `timeoutMs`. It says nothing about other processes.
const localQueues = new Map();
export function localLockWait(name, timeoutMs) {
  return new Promise((resolve) => {
    let queue = localQueues.get(name);
    if (!queue) localQueues.set(name, (queue = []));
    let timer;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      queue.shift();
      if (queue.length) queue[0].grant();
      else localQueues.delete(name);
    };
    const waiter = { grant: () => { clearTimeout(timer); resolve(release); } };
    queue.push(waiter);
    if (queue.length === 1) return waiter.grant();
    timer = setTimeout(() => {
      const at = queue.indexOf(waiter);
      if (at > 0) queue.splice(at, 1);
      resolve(null);
    }, Math.min(Math.max(0, timeoutMs), 2147483647));
  });
}

// Whether this runtime has Web Locks (locks that hold across tabs and workers).
export function hasWebLocks() {
  return !!(globalThis.navigator && globalThis.navigator.locks);
}
