// Preloaded into the processes the bench and the tests start (`node --import ./bench/exit-with-parent.mjs ...`)
// so none outlives them, even when they are killed with SIGKILL: once the parent is gone (the process is
// re-parented), it stops itself as an operator would, with SIGTERM. One unref'd 1 s timer, nothing else.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
}, 1000).unref();
