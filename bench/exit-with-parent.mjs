// Preloaded into the gateway (`node --import ./bench/exit-with-parent.mjs ...`) so it never outlives
// the bench, even when the bench is killed with SIGKILL: once the parent is gone (the process is
// re-parented), it stops itself as an operator would, with SIGTERM. One unref'd 1 s timer, nothing else.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
}, 1000).unref();
