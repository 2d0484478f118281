// The explorer's page, after textual.js: textual.js connects in window.onload; this runs it
// once the terminal font has loaded (so xterm.js measures its cells with the right font), with
// the WebSocket URL of this very page's origin, and gives the "Start a new session" button its
// action. Everything it loads comes from this server; the page's CSP allows nothing else.
(() => {
  const connect = window.onload;
  window.onload = null;
  const fontReady = Promise.race([
    document.fonts.load('16px "Roboto Mono"'),
    new Promise((resolve) => setTimeout(resolve, 3000)),
  ]);
  document.addEventListener("DOMContentLoaded", () => {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    document.getElementById("terminal").dataset.sessionWebsocketUrl = scheme + window.location.host + "/ws";
    for (const button of document.querySelectorAll("button.restart")) {
      button.addEventListener("click", () => window.location.replace("/"));
    }
  });
  window.addEventListener("load", (event) => {
    fontReady.catch(() => null).then(() => connect && connect(event));
  });
})();
