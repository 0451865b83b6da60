// The live scoreboard (and the kiosk): follows the table through server-sent events, falls
// back to polling when the feed is unavailable, and re-renders by fetching the server's
// own HTML for the board (Jinja escapes everything a user typed; nothing is built here from
// user text except through textContent). The scorekeeper's controls post to the JSON API
// with the session's CSRF token: the same validation path as every other client. Logging in
// from another tab gives the session a new token; a call refused for the old one fetches the
// new one and is sent once more (see post()).
"use strict";

(function () {
  const root = document.getElementById("board");
  if (!root) return;
  const body = document.getElementById("board-body");
  const live = document.getElementById("live");
  const message = document.getElementById("message");
  const toast = document.getElementById("toast");
  let csrf = root.dataset.csrf || ""; // replaced by freshToken() after a login elsewhere
  const POLL_MS = 2000;
  const FEED_RETRY_MS = 10000; // the feed's Retry-After when it is full
  const TOAST_MS = 5000;

  let tray = []; // dice entered by tapping faces, kept across refreshes
  let fixIndex = null; // which die of the last roll is being corrected
  let busy = false;
  let refreshing = null;
  let again = false;
  let pollTimer = null;
  let toastTimer = null;

  function currentSeq() {
    const part = body.querySelector(".board-part");
    return part ? Number(part.dataset.seq) : -1;
  }

  // JSON with sorted keys: the pad state shown (data-pad) and the one just received compare
  // equal exactly when nothing the board shows about the camera changed.
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value && typeof value === "object") {
      return "{" + Object.keys(value).sort()
        .map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  function currentPad() {
    const part = body.querySelector(".board-part");
    try { return canonical(JSON.parse((part && part.dataset.pad) || "{}")); } catch (err) { return ""; }
  }

  // The board is out of date: a new log entry, or the pad service said something new (a
  // notice about the last throw, the camera going offline, another table on the pad).
  function stale(view) {
    return view.seq !== currentSeq() || canonical(view.pad || {}) !== currentPad();
  }

  function setLive(text, cls) {
    if (!live) return;
    live.textContent = text;
    live.className = "live " + cls;
  }

  function showMessage(text) {
    if (!message) return;
    message.textContent = text;
    message.hidden = false;
    message.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function hideMessage() {
    if (message) message.hidden = true;
  }

  function showToast(text) {
    if (!toast) return;
    toast.textContent = text;
    toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { toast.hidden = true; }, TOAST_MS);
  }

  // -- rendering -------------------------------------------------------------------------

  function makeDie(value, attrs) {
    const die = document.createElement(attrs ? "button" : "span");
    die.className = "die d" + value;
    if (attrs) {
      die.type = "button";
      for (const [k, v] of Object.entries(attrs)) die.setAttribute(k, v);
      die.setAttribute("aria-label", "remove die showing " + value);
    } else {
      die.setAttribute("role", "img");
      die.setAttribute("aria-label", String(value));
    }
    for (let i = 0; i < value; i++) die.appendChild(document.createElement("i"));
    return die;
  }

  function renderTray() {
    const entry = document.getElementById("entry");
    const el = document.getElementById("tray");
    if (!entry || !el) { tray = []; return; }
    const wanted = Number(entry.dataset.wanted) || 0;
    if (tray.length > wanted) tray = tray.slice(0, wanted);
    el.replaceChildren(...tray.map((v, i) => makeDie(v, { "data-tray-index": String(i) })));
    const count = document.getElementById("tray-count");
    if (count) count.textContent = tray.length + " / " + wanted;
    const send = document.getElementById("send-roll");
    if (send) send.disabled = tray.length !== wanted || busy;
  }

  function renderFarm() {
    const farm = document.getElementById("farm");
    if (!farm) return;
    const send = document.getElementById("farm-send");
    if (send) send.disabled = !farm.querySelector("[data-pick].selected") || busy;
  }

  // -- the pad's question (server/templates/_ask.html) -----------------------------------

  // The roll the PIN holder's picks make of the dice read (data-dice, null for an asked die):
  // each asked die answered ("d<i>"), one taken away ("drop") when the camera counted one too
  // many, one added ("add") when it missed one. null until complete. server/pages/ask.py's
  // answer() is the same for a phone without this script.
  function askedRoll(ask, submitter) {
    const dice = JSON.parse(ask.dataset.dice || "[]");
    const wanted = Number(ask.dataset.wanted) || 0;
    const value = (name) => {
      if (submitter && submitter.name === name) return submitter.value;
      const el = ask.querySelector('input[name="' + name + '"]:checked');
      return el ? el.value : "";
    };
    const drop = dice.length > wanted ? value("drop") : "";
    if (dice.length > wanted && drop === "") return null;
    const out = [];
    for (let i = 0; i < dice.length; i++) {
      if (String(i) === drop) continue;
      const v = dice[i] !== null ? dice[i] : Number(value("d" + i));
      if (!v) return null;
      out.push(v);
    }
    if (dice.length < wanted) {
      const add = Number(value("add"));
      if (!add) return null;
      out.push(add);
    }
    return out.length === wanted ? out : null;
  }

  // The picks shown: an answered die filled in, a die taken away struck out, the added one
  // drawn, and the log button naming the roll once it is complete.
  function renderAsk() {
    const ask = document.getElementById("ask");
    if (!ask) return;
    const checked = (name) => ask.querySelector('input[name="' + name + '"]:checked');
    const drop = checked("drop");
    ask.querySelectorAll(".slot[data-slot]").forEach((slot) => {
      const name = slot.dataset.slot === "add" ? "add" : "d" + slot.dataset.slot;
      const pick = checked(name);
      const shown = slot.querySelector(".picked");
      if (shown) shown.remove();
      if (pick) {
        const die = makeDie(Number(pick.value));
        die.classList.add("picked");
        slot.appendChild(die);
      }
      slot.classList.toggle("answer", Boolean(pick)); // its "?" is hidden by the stylesheet
      slot.classList.toggle("dropped", Boolean(drop) && drop.value === slot.dataset.slot);
    });
    ask.querySelectorAll("[data-asked]").forEach((card) => {
      card.hidden = Boolean(drop) && drop.value === card.dataset.asked;
    });
    const send = document.getElementById("ask-send");
    if (send) {
      const roll = askedRoll(ask, null);
      send.disabled = !roll || busy;
      const what = "Log the " + (ask.dataset.kind || "roll");
      send.textContent = roll ? what + " " + roll.join(" ") : what;
    }
  }

  function askPicks() {
    const ask = document.getElementById("ask");
    if (!ask) return null;
    const checked = Array.from(ask.querySelectorAll("input[type=radio]:checked"))
      .map((el) => [el.name, el.value]);
    return { key: ask.dataset.question, checked: checked };
  }

  function restoreAsk(kept) {
    const ask = document.getElementById("ask");
    if (!kept || !ask || ask.dataset.question !== kept.key) return;
    for (const [name, value] of kept.checked) {
      ask.querySelectorAll('input[type=radio][name="' + name + '"]').forEach((el) => {
        if (el.value === value) el.checked = true;
      });
    }
  }

  function onAskSubmit(ev) {
    ev.preventDefault(); // the form is for phones without this script
    const ask = document.getElementById("ask");
    if (!ask) return;
    const dice = askedRoll(ask, ev.submitter || null);
    if (!dice) { showMessage("Answer every die first"); return; }
    // "answers" names the question: its throw's photo is kept with the roll, and an answer to
    // a question the camera has since replaced with another is refused, not logged
    post({ type: ask.dataset.kind, dice: dice, answers: ask.dataset.question });
  }

  // Picks not sent yet (dice tapped for a keep or a re-roll, the bid being made, the die
  // being fixed) outlive a redraw while the game has not moved (the same seq: only the
  // camera's notice or status changed), since they still mean what they meant. Dropping them
  // made a notice arriving between "tap these two" and "Cocked" re-roll every die (none
  // tapped means all). A new log entry clears them: the dice they named have changed.
  const PICKS = ["data-pick", "data-reroll-pick", "data-bid-face"];

  function picks() {
    const form = document.getElementById("bid-form");
    const selected = []; // [attribute, position among its buttons]: equal dice share a value
    for (const attr of PICKS) {
      body.querySelectorAll("[" + attr + "]").forEach((b, i) => {
        if (b.classList.contains("selected")) selected.push([attr, i]);
      });
    }
    return {
      seq: currentSeq(),
      selected: selected,
      bid: form ? [form.elements.count.value, form.elements.face.value] : null,
      fixIndex: fixIndex,
      ask: askPicks(),
    };
  }

  function restore(kept) {
    restoreAsk(kept.ask); // kept while the question is the same one (the notice names it)
    if (kept.seq !== currentSeq()) return;
    const groups = new Set(kept.selected.map(([attr]) => attr));
    groups.forEach((attr) => {
      body.querySelectorAll(".selected[" + attr + "]").forEach((b) => b.classList.remove("selected"));
    });
    for (const [attr, i] of kept.selected) {
      const b = body.querySelectorAll("[" + attr + "]")[i];
      if (b) b.classList.add("selected");
    }
    const form = document.getElementById("bid-form");
    if (form && kept.bid) [form.elements.count.value, form.elements.face.value] = kept.bid;
    if (kept.fixIndex !== null && document.querySelector("#fix [data-fix-index]")) {
      showFix(kept.fixIndex);
    }
  }

  // The die of the last roll being corrected: marked, with the value picker open.
  function showFix(index) {
    fixIndex = index;
    document.querySelectorAll("#fix [data-fix-index]").forEach((b) => {
      b.classList.toggle("fixing", Number(b.dataset.fixIndex) === fixIndex);
    });
    const picker = document.getElementById("fix-picker");
    if (picker) picker.hidden = false;
  }

  function swap(html) {
    const wasOpen = new Map();
    body.querySelectorAll("details[data-key]").forEach((d) => wasOpen.set(d.dataset.key, d.open));
    const kept = picks();
    const doc = new DOMParser().parseFromString(html, "text/html");
    body.replaceChildren(...Array.from(doc.body.childNodes));
    body.querySelectorAll("details[data-key]").forEach((d) => {
      if (wasOpen.has(d.dataset.key)) d.open = wasOpen.get(d.dataset.key);
    });
    fixIndex = null;
    restore(kept);
    renderTray();
    renderFarm();
    renderAsk();
  }

  async function refresh() {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      do {
        again = false;
        try {
          const res = await fetch(root.dataset.partUrl, { credentials: "same-origin", cache: "no-cache" });
          if (res.ok) swap(await res.text());
        } catch (err) {
          setLive("offline", "off");
        }
      } while (again);
    })();
    try { await refreshing; } finally { refreshing = null; }
  }

  // -- following the table ---------------------------------------------------------------

  // Polling asks for the table with its history cut to the last round, as a live message
  // carries it: only seq and pad are read here, and the board's HTML comes from the server.
  function stateUrl() {
    const url = new URL(root.dataset.stateUrl, window.location.href);
    url.searchParams.set("history", "last");
    return url.toString();
  }

  function startPolling() {
    if (pollTimer) return;
    setLive("polling", "polling");
    pollTimer = setInterval(async () => {
      try {
        const res = await fetch(stateUrl(), { credentials: "same-origin", cache: "no-cache" });
        if (!res.ok) return;
        const view = await res.json();
        if (!pollTimer) return; // the feed came back while this poll was out: it is live
        setLive("polling", "polling");
        if (stale(view)) await refresh();
      } catch (err) {
        if (pollTimer) setLive("offline", "off");
      }
    }, POLL_MS);
  }

  function stopPolling() {
    clearInterval(pollTimer);
    pollTimer = null;
  }

  function follow() {
    if (!("EventSource" in window)) { startPolling(); return; }
    const source = new EventSource(root.dataset.eventsUrl);
    source.addEventListener("open", () => { stopPolling(); setLive("live", "on"); });
    source.addEventListener("state", (ev) => {
      setLive("live", "on");
      let view;
      try { view = JSON.parse(ev.data); } catch (err) { return; }
      if (stale(view)) refresh();
    });
    source.addEventListener("entry", (ev) => {
      let entry;
      try { entry = JSON.parse(ev.data); } catch (err) { return; }
      const texts = (entry.highlights || []).filter((h) => h.kind !== "roll" && h.kind !== "turn")
        .map((h) => h.text);
      if (texts.length) showToast(texts.join(" · "));
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) {
        // the feed refused us (full, or gone): poll meanwhile, and ask for the feed again, so
        // a phone turned away at a busy moment goes live once a place is free
        startPolling();
        setTimeout(follow, FEED_RETRY_MS);
      } else {
        setLive("reconnecting", "off");
      }
    });
  }

  // -- the scorekeeper's controls --------------------------------------------------------

  // The session's token now: logging in (or out and in) from another tab rotates it, and the
  // controls of a board opened before that would be refused until a reload. Every form on
  // the page (the header's log-out) gets it too. false when there is none to be had (no
  // longer logged in), or the scoreboard did not answer.
  async function freshToken() {
    if (!root.dataset.tokenUrl) return false;
    try {
      const res = await fetch(root.dataset.tokenUrl, { credentials: "same-origin", cache: "no-store" });
      if (!res.ok) return false;
      const answer = await res.json();
      if (!answer || typeof answer.csrf !== "string" || !answer.csrf) return false;
      csrf = answer.csrf;
      document.querySelectorAll('input[name="csrf"]').forEach((el) => { el.value = csrf; });
      return true;
    } catch (err) {
      return false;
    }
  }

  async function send(action, url) {
    const res = await fetch(url || root.dataset.actionsUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(action),
    });
    let answer = null;
    try { answer = await res.json(); } catch (err) { answer = null; }
    return [res, answer];
  }

  async function post(action, url) {
    if (busy) return false;
    busy = true;
    body.classList.add("busy");
    try {
      let [res, answer] = await send(action, url);
      // Refused for the token alone ("csrf"): the server checks it before it reads the
      // action (server/pages/security.py, a before_request hook), so nothing was applied
      // and sending the same action once more with the session's new token is safe.
      if (res.status === 403 && answer && answer.error === "csrf" && await freshToken()) {
        [res, answer] = await send(action, url);
      }
      if (!res.ok) {
        showMessage((answer && answer.message) || ("refused: HTTP " + res.status));
        return false;
      }
      hideMessage();
      tray = [];
      return true;
    } catch (err) {
      showMessage("could not reach the scoreboard: " + err.message);
      return false;
    } finally {
      busy = false;
      body.classList.remove("busy");
      await refresh();
    }
  }

  function onClick(ev) {
    const target = ev.target.closest("button");
    if (!target || !body.contains(target)) return;
    const d = target.dataset;
    if (d.action) {
      if (d.confirm && !window.confirm(d.confirm)) return;
      post(JSON.parse(d.action));
    } else if (d.face) {
      const entry = document.getElementById("entry");
      if (entry && tray.length < Number(entry.dataset.wanted)) tray.push(Number(d.face));
      renderTray();
    } else if (d.trayIndex !== undefined) {
      tray.splice(Number(d.trayIndex), 1);
      renderTray();
    } else if (target.id === "clear-roll") {
      tray = [];
      renderTray();
    } else if (target.id === "send-roll") {
      const entry = document.getElementById("entry");
      post({ type: entry.dataset.kind, dice: tray.slice() });
    } else if (d.pick !== undefined) {
      target.classList.toggle("selected");
      renderFarm();
    } else if (target.id === "farm-send") {
      const picked = Array.from(document.querySelectorAll("#farm [data-pick].selected"))
        .map((b) => Number(b.dataset.pick));
      post({ type: "keep", dice: picked });
    } else if (d.bidFace !== undefined) {
      const form = document.getElementById("bid-form");
      form.elements.face.value = d.bidFace;
      form.querySelectorAll("[data-bid-face]").forEach((b) => {
        b.classList.toggle("selected", b === target);
      });
    } else if (d.rerollPick !== undefined) {
      target.classList.toggle("selected");
    } else if (d.reroll) {
      const picked = Array.from(document.querySelectorAll("#reroll [data-reroll-pick].selected"))
        .map((b) => Number(b.dataset.rerollPick));
      post({ type: "reroll", dice: picked, reason: d.reroll });
    } else if (d.padAssign !== undefined) {
      post({ table: d.padAssign }, root.dataset.padUrl);
    } else if (d.fixIndex !== undefined) {
      showFix(Number(d.fixIndex));
    } else if (d.fixValue !== undefined && fixIndex !== null) {
      const fix = document.getElementById("fix");
      const dice = JSON.parse(fix.dataset.dice);
      dice[fixIndex] = Number(d.fixValue);
      post({ type: "fix", dice: dice });
    }
  }

  function onSubmit(ev) {
    const form = ev.target;
    if (form.id !== "bid-form") return;
    ev.preventDefault();
    const data = new FormData(form);
    post({ type: "bid", count: Number(data.get("count")), face: Number(data.get("face")) });
  }

  body.addEventListener("click", onClick);
  body.addEventListener("submit", onSubmit);
  body.addEventListener("change", (ev) => { if (ev.target.closest("#ask")) renderAsk(); });
  const askForm = document.getElementById("ask-form");
  if (askForm) askForm.addEventListener("submit", onAskSubmit);
  renderTray();
  renderAsk();
  setLive("connecting", "connecting"); // the page says "not live" to a phone without this script
  follow();
})();
