// Runs once per Jest run, in Jest's own process (outside the test VM, where node-forge's signing is
// about ten times slower): makes this month's development mesh PKI if it is not there yet, so no test
// file pays for it and parallel workers never race to make it.
module.exports = async function globalSetup() {
  const { ensureDevPki } = await import('@wallet/platform');
  ensureDevPki();
};
