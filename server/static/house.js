// The house board: every table of every Pi, kept live from /api/house/events.
// Everything a player or a bar typed goes in with textContent (never markup).
"use strict";

(function () {
  const root = document.getElementById("house");
  if (!root || !window.EventSource) return;
  const status = document.getElementById("house-status");
  const empty = root.querySelector(".house-empty");
  const overShown = Number(root.dataset.overShown) || 24;
  const groups = {};
  root.querySelectorAll("section[data-group]").forEach((s) => { groups[s.dataset.group] = s; });

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function when(iso) {
    const t = new Date(iso);
    if (isNaN(t)) return String(iso || "");
    const today = new Date().toDateString() === t.toDateString();
    return today ? t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : t.toLocaleString();
  }

  function players(line) {
    const teams = line.setup && line.setup.teams;
    if (teams && typeof teams === "object") {
      return Object.keys(teams).map((t) => t + ": " + teams[t].join(", ")).join(" · ");
    }
    return (line.players || []).join(", ");
  }

  function card(line) {
    const li = el("li", "card house-card" + (line.over ? " over" : ""));
    li.dataset.key = line.house_name + "/" + line.table;
    li.dataset.seq = String(line.seq);
    const main = el("div", "card-main");
    const head = el("span", "card-game");
    head.append(el("span", "h-title", line.title), " ", el("span", "tag h-house", line.house_name),
      " ", el("span", "tag h-table", line.table));
    if (line.over || line.idle) head.append(" ", el("span", "tag h-state", line.over ? "over" : "idle"));
    const scores = el("span", "card-scores");
    if (line.scores && typeof line.scores === "object") {
      Object.keys(line.scores).forEach((name) => {
        const v = line.scores[name];
        const item = el("span", null, name + " ");
        item.append(el("b", null, typeof v === "number" ? v.toLocaleString("en-US") : v));
        scores.append(item);
      });
    }
    const last = el("span", "card-idle", "last action ");
    const time = el("time", null, when(line.last));
    time.dateTime = line.last;
    last.append(time);
    main.append(head, el("span", "card-players", players(line)), scores,
      el("span", "card-next", line.expecting || ""), last);
    li.append(main);
    if (typeof line.scoreboard === "string" && /^https?:\/\//.test(line.scoreboard)) {
      const a = el("a", "card-link button", "Scoreboard");
      a.href = line.scoreboard;
      li.append(a);
    }
    return li;
  }

  function groupOf(line) { return line.over ? "over" : line.idle ? "idle" : "playing"; }

  function tidy() {
    let any = false;
    Object.values(groups).forEach((s) => {
      const list = s.querySelector("ul");
      if (s.dataset.group === "over") {
        while (list.children.length > overShown) list.lastElementChild.remove();
      }
      s.hidden = list.children.length === 0;
      any = any || !s.hidden;
    });
    if (empty) empty.hidden = any;
  }

  function find(key) {
    return Array.from(root.querySelectorAll("li.house-card")).find((li) => li.dataset.key === key);
  }

  function place(line) {
    const key = line.house_name + "/" + line.table;
    const old = find(key);
    if (old && Number(old.dataset.seq) > line.seq) return; // an older line than shown
    if (old) old.remove();
    const section = groups[groupOf(line)];
    if (section) section.querySelector("ul").prepend(card(line));
    tidy();
  }

  function all(lines) {
    Object.values(groups).forEach((s) => s.querySelector("ul").replaceChildren());
    lines.forEach((line) => {
      const section = groups[groupOf(line)];
      if (section) section.querySelector("ul").append(card(line));
    });
    tidy();
  }

  function say(text, state) {
    if (!status) return;
    status.textContent = text;
    status.dataset.state = state;
  }

  root.querySelectorAll("time[datetime]").forEach((t) => { t.textContent = when(t.dateTime); });
  const source = new EventSource(root.dataset.events);
  source.addEventListener("open", () => say("Live", "live"));
  source.addEventListener("error", () => say("Reconnecting…", "down"));
  source.addEventListener("tables", (ev) => { all(JSON.parse(ev.data).tables); say("Live", "live"); });
  source.addEventListener("table", (ev) => place(JSON.parse(ev.data).line));
  source.addEventListener("unavailable", (ev) => say(JSON.parse(ev.data).message, "down"));
})();
