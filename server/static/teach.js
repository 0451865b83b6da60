// The teaching page: the page works without this. It asks every two seconds which throw the
// camera settled on last, and reloads the page for a new one -- unless a pick has been made on
// the throw shown, which then stays (a line offers the new one).
"use strict";

(function () {
  const root = document.getElementById("teach");
  if (!root || !root.dataset.pollUrl) return;
  const shown = root.dataset.throw || "";
  const form = document.getElementById("teach-form");
  const newer = document.getElementById("newer");
  const POLL_MS = 2000;
  let touched = false;
  let leaving = false;

  if (form) {
    form.addEventListener("change", () => { touched = true; });
    form.addEventListener("submit", () => { leaving = true; });
  }

  async function poll() {
    if (document.hidden || leaving) return;
    try {
      const res = await fetch(root.dataset.pollUrl, { credentials: "same-origin", cache: "no-store" });
      if (!res.ok) return;
      const data = await res.json();
      const latest = data.throw === null ? "" : String(data.throw);
      if (latest === shown) return;
      if (touched) {
        if (newer) newer.hidden = false;
        return;
      }
      leaving = true;
      window.location.assign(root.dataset.pageUrl);
    } catch (err) {
      // offline for a moment: the next tick asks again
    }
  }

  setInterval(poll, POLL_MS);
  document.addEventListener("visibilitychange", poll);
})();
