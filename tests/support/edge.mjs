// A caller deep in its own recursion, as an app with a deep component tree
// or a recursive reducer is: one round recurses until the stack runs out,
// then calls `call()` from each frame's catch on the way back up, with a
// little more stack each time, until a call goes through. One of those runs
// out of stack inside the module, which stops (src/web/instance.js). The
// round picks one of three frame sizes, for a finer step over rounds.
// Self-contained, so that a page gets it as text (`String(edgeRound)`).
export function edgeRound(call, round) {
  const edges = [
    function e0() { try { return e0(); } catch { return call(); } },
    function e1(a, b, c) { try { return e1(a + 1, b, c); } catch { return call(); } },
    function e2() { const x = round, y = x + 1; try { return e2() + x + y; } catch { return call(); } },
  ];
  try { edges[round % 3](0, 0, 0); } catch { /* every frame refused */ }
}
