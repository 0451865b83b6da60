// The wall: ask before hiding an entry (it stays in the log either way).
"use strict";

document.addEventListener("submit", (ev) => {
  const form = ev.target;
  if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) ev.preventDefault();
});
