// The agent forest, live: lineage serve's web page. Plain JavaScript, no build step, no
// library, nothing fetched from anywhere but this server.
//
// The page loads the whole forest once (/forest), then listens on /events: each event
// carries the trees of the roots that changed, whole, and the page redraws only those roots
// (so an update costs what changed, not the forest's size). The slider and the time field
// load the forest as of an earlier moment (/forest?position=N or ?at=TIME); "now" returns.
"use strict";

(() => {
  const LOGICAL_EPOCH = Date.parse("2000-01-01T00:00:00Z");
  const LOGICAL_SPAN = 365 * 86400 * 1000;
  const OPEN_BY_DEFAULT_UP_TO = 2000; // nodes: a larger forest starts with its roots closed
  const SHORT_ID = 12;
  const QUIET_AFTER = 2 * 3600 * 1000; // ms without a fact before a live node shows "quiet" (lineage tree's default)

  const $ = (id) => document.getElementById(id);
  const forestEl = $("forest");
  const state = {
    roots: new Map(), // root key -> tree (as /forest gives it)
    items: new Map(), // root key -> its <li>
    order: [], // root keys, newest activity first
    activity: new Map(), // root key -> newest activity (ms)
    toggled: new Set(), // node keys opened (or closed) against the default
    openByDefault: true,
    live: true,
    position: 0,
    latest: 0,
    asOf: null, // ms the ages are counted to while travelling
    selected: null, // {host, conversation}
    source: null,
  };
  const stats = { firstRender: null, updates: [] };
  window.__lineage = { state, stats };

  const keyOf = (node) => node.host + "\u0000" + node.conversation;
  const printable = (s) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
  const short = (id) => { const p = printable(id); return p.length > SHORT_ID ? p.slice(0, SHORT_ID) + "…" : p; };

  function age(iso, now) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return "?";
    if (t - LOGICAL_EPOCH >= 0 && t - LOGICAL_EPOCH < LOGICAL_SPAN) return "row " + Math.floor((t - LOGICAL_EPOCH) / 1000);
    let s = Math.max(0, Math.floor((now - t) / 1000));
    for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) if (s >= size) return Math.floor(s / size) + unit;
    return s + "s";
  }
  const now = () => (state.asOf !== null ? state.asOf : Date.now());

  // -- drawing ------------------------------------------------------------------------------

  function newestActivity(root) {
    let newest = 0;
    const stack = [root];
    while (stack.length) {
      const n = stack.pop();
      const t = Date.parse(n.last_seen || n.started_at);
      if (t > newest) newest = t;
      for (const c of n.children) stack.push(c);
    }
    return newest;
  }

  function isOpen(node) {
    return state.openByDefault !== state.toggled.has(keyOf(node));
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function drawRow(node) {
    const row = el("div", "row");
    const twisty = el("button", "twisty" + (node.children.length ? "" : " leaf"), isOpen(node) ? "▾" : "▸");
    twisty.type = "button";
    twisty.setAttribute("aria-label", "open or close");
    row.append(twisty, el("span", "dot"));
    const id = el("code", "id", short(node.conversation));
    id.title = printable(node.conversation) + " (click to copy)";
    row.append(id);
    if (node.name) row.append(el("span", "name", node.name));
    if (node.subagent && node.subagent.type) row.append(el("span", "tag type", node.subagent.type));
    row.append(el("span", "tag host", node.host));
    let status = node.status;
    if (node.last_seen && node.status === "live" && now() - Date.parse(node.last_seen) >= QUIET_AFTER) status += " · quiet " + age(node.last_seen, now());
    row.append(el("span", "tag status", status));
    row.append(el("span", "tag res-" + node.resolution, node.resolution));
    if (node.ambiguous) row.append(el("span", "tag ambiguous", "ambiguous"));
    row.append(el("span", "age", agesOf(node)));
    return row;
  }

  function agesOf(node) {
    let ages = "started " + age(node.started_at, now());
    if (node.last_seen) ages += " · seen " + age(node.last_seen, now());
    return ages;
  }

  // Live ages move on by themselves: the drawn rows' are rewritten every half minute.
  setInterval(() => {
    if (!state.live) return;
    for (const li of forestEl.querySelectorAll("li.node")) {
      const ages = li.querySelector(":scope > .row > .age");
      if (ages) ages.textContent = agesOf(li.__node);
    }
  }, 30_000);

  // One node and, when open, its children: those placed ambiguous (no parent edge) drawn apart.
  function drawNode(node) {
    const li = el("li", "node status-" + node.status);
    li.dataset.conversation = node.conversation;
    li.dataset.host = node.host;
    li.dataset.depth = node.depth;
    li.dataset.status = node.status;
    li.dataset.resolution = node.resolution;
    li.dataset.startedAt = node.started_at;
    if (node.subagent) {
      li.dataset.subagentId = node.subagent.id;
      if (node.subagent.type !== null && node.subagent.type !== undefined) li.dataset.subagentType = node.subagent.type;
    }
    if (node.ambiguous) li.dataset.ambiguous = "true";
    if (node.name) li.dataset.name = node.name;
    if (node.last_seen) li.dataset.lastSeen = node.last_seen;
    li.__node = node;
    const row = drawRow(node);
    if (state.selected && state.selected.host === node.host && state.selected.conversation === node.conversation) row.classList.add("selected");
    li.append(row);
    if (node.children.length && isOpen(node)) drawChildren(li, node);
    return li;
  }

  function drawChildren(li, node) {
    const placed = node.children.filter((c) => !c.ambiguous);
    const apart = node.children.filter((c) => c.ambiguous);
    if (placed.length) {
      const ul = el("ul", "children");
      for (const c of placed) ul.append(drawNode(c));
      li.append(ul);
    }
    if (apart.length) {
      li.append(el("div", "ambiguous-label", "placed under the root, parent not known:"));
      const ul = el("ul", "children ambiguous");
      for (const c of apart) ul.append(drawNode(c));
      li.append(ul);
    }
  }

  function redrawNode(li) {
    const fresh = drawNode(li.__node);
    const key = keyOf(li.__node);
    if (state.items.get(key) === li) {
      fresh.classList.add("root");
      state.items.set(key, fresh);
    }
    li.replaceWith(fresh);
    applyFilters(fresh);
    return fresh;
  }

  // Where a root of this activity goes in state.order (newest first; ties by key).
  function slotOf(key, activity) {
    let lo = 0;
    let hi = state.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const other = state.order[mid];
      const a = state.activity.get(other);
      if (a > activity || (a === activity && other < key)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  function putRoot(root) {
    const key = keyOf(root);
    dropRoot(key);
    const activity = newestActivity(root);
    const slot = slotOf(key, activity);
    state.order.splice(slot, 0, key);
    state.activity.set(key, activity);
    state.roots.set(key, root);
    const li = drawNode(root);
    li.classList.add("root");
    state.items.set(key, li);
    const next = state.order[slot + 1];
    forestEl.insertBefore(li, next === undefined ? null : state.items.get(next));
    applyFilters(li);
    return li;
  }

  function dropRoot(key) {
    const li = state.items.get(key);
    if (!li) return;
    const i = slotOf(key, state.activity.get(key));
    if (state.order[i] === key) state.order.splice(i, 1);
    else state.order.splice(state.order.indexOf(key), 1);
    li.remove();
    state.items.delete(key);
    state.roots.delete(key);
    state.activity.delete(key);
  }

  function drawForest(data) {
    const started = performance.now();
    forestEl.replaceChildren();
    state.roots.clear(); state.items.clear(); state.order = []; state.activity.clear();
    let count = 0;
    const stack = [...data.roots];
    while (stack.length) { const n = stack.pop(); count++; for (const c of n.children) stack.push(c); }
    state.openByDefault = count <= OPEN_BY_DEFAULT_UP_TO;
    const sorted = data.roots.map((r) => [keyOf(r), newestActivity(r), r]);
    sorted.sort((a, b) => (b[1] - a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const frag = document.createDocumentFragment();
    for (const [key, activity, root] of sorted) {
      state.order.push(key);
      state.activity.set(key, activity);
      state.roots.set(key, root);
      const li = drawNode(root);
      li.classList.add("root");
      state.items.set(key, li);
      frag.append(li);
    }
    forestEl.append(frag);
    applyFilters();
    summarize();
    $("message").textContent = data.roots.length ? "" : "No agents journaled yet. Run a hook, lineage ingest or lineage import, and they appear here.";
    return performance.now() - started;
  }

  function summarize() {
    let nodes = 0;
    let live = 0;
    for (const root of state.roots.values()) {
      const stack = [root];
      while (stack.length) { const n = stack.pop(); nodes++; if (n.status === "live") live++; for (const c of n.children) stack.push(c); }
    }
    $("summary").textContent = `${state.roots.size} roots · ${nodes} agents · ${live} live · position ${state.position}`;
  }

  // -- filters ------------------------------------------------------------------------------

  function filters() {
    return { host: $("host-filter").value, status: $("status-filter").value, find: $("find").value.trim().toLowerCase() };
  }

  function matches(node, f) {
    if (f.host && node.host !== f.host) return false;
    if (f.status && node.status !== f.status) return false;
    if (f.find) {
      const id = node.conversation.toLowerCase();
      const name = (node.name || "").toLowerCase();
      if (!id.startsWith(f.find) && !name.includes(f.find)) return false;
    }
    return true;
  }

  // Show a node when it matches or a node below it does (as the CLI keeps a stopped node
  // with live children); while finding, open the way to each match.
  function applyFilters(only) {
    const f = filters();
    for (const li of only ? [only] : [...state.items.values()]) {
      filterNode(li.__node, f);
      if (f.find) openMatches(li.__node);
      paint(li);
    }
  }

  function filterNode(node, f) {
    let below = false;
    for (const c of node.children) if (filterNode(c, f)) below = true;
    node.__shown = matches(node, f) || below;
    node.__match = !!f.find && matches(node, f);
    node.__below = below;
    return node.__shown;
  }

  function openMatches(node) {
    if (!node.__below) return;
    if (!isOpen(node)) toggle(node);
    for (const c of node.children) openMatches(c);
  }

  function toggle(node) {
    const key = keyOf(node);
    if (state.toggled.has(key)) state.toggled.delete(key);
    else state.toggled.add(key);
  }

  function paint(li) {
    const node = li.__node;
    if (node.children.length && isOpen(node) && !li.querySelector(":scope > ul")) {
      drawChildren(li, node);
      li.querySelector(":scope > .row .twisty").textContent = "▾";
    }
    li.classList.toggle("hidden", !node.__shown);
    li.classList.toggle("match", !!node.__match);
    for (const ul of li.querySelectorAll(":scope > ul")) for (const c of ul.children) paint(c);
  }

  // -- live ---------------------------------------------------------------------------------

  function applyChange(change) {
    const started = performance.now();
    for (const gone of change.gone) dropRoot(keyOf(gone));
    for (const root of change.roots) {
      const li = putRoot(root);
      li.querySelector(":scope > .row").classList.add("flash");
    }
    state.position = change.position;
    state.latest = Math.max(state.latest, change.position);
    setSlider();
    summarize();
    if (state.selected) refreshPanel();
    stats.updates.push(performance.now() - started);
    performance.mark("lineage-update");
  }

  function listen() {
    if (state.source) state.source.close();
    const source = new EventSource("/events?since=" + state.latest);
    state.source = source;
    source.addEventListener("open", () => setConnection("live", "live"));
    source.addEventListener("error", () => setConnection("down", "reconnecting…"));
    source.addEventListener("change", (e) => {
      const change = JSON.parse(e.data);
      state.latest = Math.max(state.latest, change.position);
      if (state.live) applyChange(change);
      else setSlider();
    });
    source.addEventListener("reload", (e) => {
      state.latest = JSON.parse(e.data).position;
      if (state.live) load(null);
    });
  }

  function setConnection(cls, text) {
    const c = $("connection");
    c.className = "connection " + cls;
    c.textContent = text;
  }

  // -- time travel --------------------------------------------------------------------------

  function setSlider() {
    const slider = $("position-slider");
    slider.max = String(state.latest);
    if (state.live) slider.value = String(state.latest);
  }

  async function load(moment) {
    const query = moment === null ? "" : moment.position !== undefined ? "?position=" + moment.position : "?at=" + encodeURIComponent(moment.at);
    const fetchStarted = performance.now();
    const response = await fetch("/forest" + query, { headers: { Accept: "application/json" } });
    const data = await response.json();
    if (!response.ok) {
      showError(data.error || response.statusText);
      return;
    }
    $("message").classList.remove("error");
    state.live = data.live;
    state.position = data.position === null ? state.position : data.position;
    if (data.live) state.latest = Math.max(state.latest, data.position);
    state.asOf = data.live ? null : data.at ? Date.parse(data.at) : newestIn(data.roots);
    const drawn = drawForest(data);
    if (stats.firstRender === null) {
      stats.firstRender = { fetchAndDraw: performance.now() - fetchStarted, draw: drawn };
      performance.mark("lineage-first-render");
    }
    $("travel").classList.toggle("past", !data.live);
    $("moment").textContent = data.live ? "now (live)" : data.at ? "as of " + data.at : "as of position " + data.position;
    setSlider();
    if (!data.live && data.position !== null) $("position-slider").value = String(data.position);
    document.body.dataset.position = String(state.position);
    document.body.dataset.live = String(data.live);
  }

  function newestIn(roots) {
    let newest = 0;
    for (const r of roots) newest = Math.max(newest, newestActivity(r));
    return newest || Date.now();
  }

  function showError(text) {
    const m = $("message");
    m.textContent = text;
    m.classList.add("error");
  }

  // -- a node's panel -----------------------------------------------------------------------

  async function getJSON(path) {
    const response = await fetch(path, { headers: { Accept: "application/json" } });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  function select(node) {
    state.selected = { host: node.host, conversation: node.conversation };
    for (const r of forestEl.querySelectorAll(".row.selected")) r.classList.remove("selected");
    refreshPanel();
  }

  async function refreshPanel() {
    const sel = state.selected;
    const id = encodeURIComponent(sel.conversation);
    const host = "?host=" + encodeURIComponent(sel.host);
    const panel = $("panel");
    panel.hidden = false;
    document.body.classList.add("panel-open");
    $("panel-title").textContent = printable(sel.conversation) + (state.live ? "" : " (as it is now)");
    try {
      const [lineage, chain, agents] = await Promise.all([
        getJSON("/lineage/" + id + host), getJSON("/chain/" + id + host), getJSON("/agents/" + id + host),
      ]);
      if (state.selected !== sel) return;
      const dl = $("panel-lineage");
      dl.replaceChildren();
      const fields = [["root", lineage.root], ["parent", lineage.parent ?? (lineage.ambiguous ? "(ambiguous: not known)" : "—")],
        ["depth", lineage.depth], ["resolution", lineage.resolution], ["host", lineage.host],
        ["name", lineage.name], ["type", lineage.subagent && lineage.subagent.type], ["subagent id", lineage.subagent && lineage.subagent.id]];
      for (const [k, v] of fields) if (v !== null && v !== undefined) dl.append(el("dt", "", k), el("dd", "", printable(String(v))));
      const ol = $("panel-chain");
      ol.replaceChildren();
      for (const c of chain.conversations) ol.append(link(c, sel.host));
      if (!chain.complete) ol.append(el("li", "", chain.cycle ? "(cycle)" : chain.capped ? "(capped)" : "(stops short)"));
      const body = $("panel-family").tBodies[0];
      body.replaceChildren();
      for (const m of agents.filter((a) => a.root === lineage.root)) {
        const tr = el("tr", m.relation === "self" ? "self" : "");
        const cell = el("td");
        cell.append(link(m.conversation, sel.host, "span"));
        tr.append(cell, el("td", "", m.relation), el("td", "", m.status), el("td", "", (m.subagent && m.subagent.type) || ""));
        body.append(tr);
      }
    } catch (err) {
      $("panel-lineage").replaceChildren(el("dt", "", "error"), el("dd", "", err.message));
    }
  }

  function link(conversation, host, tag = "li") {
    const item = el(tag);
    const a = el("a", "", short(conversation));
    a.title = printable(conversation);
    a.addEventListener("click", () => select({ host, conversation }));
    item.append(a);
    return item;
  }

  // -- events -------------------------------------------------------------------------------

  forestEl.addEventListener("click", (e) => {
    const li = e.target.closest("li.node");
    if (!li) return;
    const node = li.__node;
    if (e.target.classList.contains("twisty")) {
      toggle(node);
      redrawNode(li);
      return;
    }
    if (e.target.classList.contains("id")) {
      copy(node.conversation, e.target);
      return;
    }
    select(node);
    li.querySelector(":scope > .row").classList.add("selected");
  });

  function copy(text, target) {
    const done = () => { target.classList.add("copied"); setTimeout(() => target.classList.remove("copied"), 1200); };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => {});
    else done();
  }

  for (const id of ["host-filter", "status-filter"]) $(id).addEventListener("change", () => applyFilters());
  let findTimer = 0;
  $("find").addEventListener("input", () => { clearTimeout(findTimer); findTimer = setTimeout(() => applyFilters(), 150); });
  $("controls").addEventListener("submit", (e) => e.preventDefault());
  $("expand-all").addEventListener("click", () => { state.openByDefault = true; state.toggled.clear(); for (const li of [...state.items.values()]) redrawNode(li); });
  $("collapse-all").addEventListener("click", () => { state.openByDefault = false; state.toggled.clear(); for (const li of [...state.items.values()]) redrawNode(li); });
  $("close-panel").addEventListener("click", () => {
    $("panel").hidden = true;
    document.body.classList.remove("panel-open");
    state.selected = null;
  });

  let slideTimer = 0;
  $("position-slider").addEventListener("input", (e) => {
    clearTimeout(slideTimer);
    const position = Number(e.target.value);
    $("moment").textContent = "as of position " + position + "…";
    slideTimer = setTimeout(() => (position >= state.latest ? load(null) : load({ position })), 150);
  });
  const goTime = () => { const at = $("time-field").value.trim(); if (at) load({ at }); };
  $("go-time").addEventListener("click", goTime);
  $("time-field").addEventListener("keydown", (e) => { if (e.key === "Enter") goTime(); });
  $("now").addEventListener("click", () => load(null));

  load(null).then(listen, (err) => showError("cannot load the forest: " + err.message));
})();
