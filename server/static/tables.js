// The table list: refreshed in place every few seconds (scores, whose turn, new tables).
"use strict";

(function () {
  const root = document.getElementById("tables");
  const list = document.getElementById("table-list");
  if (!root || !list) return;
  const REFRESH_MS = 5000;

  async function refresh() {
    if (document.hidden) return;
    try {
      const res = await fetch(root.dataset.listUrl, { credentials: "same-origin", cache: "no-cache" });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      list.replaceChildren(...Array.from(doc.body.childNodes));
    } catch (err) {
      // offline for a moment: the next tick tries again
    }
  }

  setInterval(refresh, REFRESH_MS);
  document.addEventListener("visibilitychange", refresh);
})();
