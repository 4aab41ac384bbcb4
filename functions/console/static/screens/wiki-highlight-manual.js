// Read by Prism's core as it starts (wiki-highlight.js imports this first): no highlighting of its
// own on load and no worker message handler. Prism then only tokenizes, when it is asked.
globalThis.Prism = { manual: true, disableWorkerMessageHandler: true };
