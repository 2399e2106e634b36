// The live page: one EventSource on /live/events, a button that posts an order
// through the api's POST /orders, and a hand-drawn SVG chart. No framework.
"use strict";
(function () {
  const WINDOW_MS = 5 * 60 * 1000; // what the chart shows
  const SERIES = { postgres: "Postgres commit", accelerated: "runtime 1", materialized: "runtime 2" };
  const $ = (sel, el) => (el || document).querySelector(sel);

  const state = {
    paths: [],          // [{name, title}]
    writeKey: false,    // POST /orders needs X-API-Key
    key: "",            // typed into the page; kept in memory only
    writes: new Map(),  // id -> write
    mine: null,         // {id, lsn, clicked} of this page's last order
    last: null,         // the last tick
  };

  // lsn parses a Postgres LSN "16/B374D848" into a BigInt, for comparisons.
  function lsn(s) {
    if (!s) return null;
    const [hi, lo] = s.split("/");
    return (BigInt("0x" + hi) << 32n) + BigInt("0x" + lo);
  }

  function bytes(n) {
    if (n === null || n === undefined) return "–";
    if (n === 0) return "caught up (0 B)";
    const units = ["B", "KiB", "MiB", "GiB"];
    let i = 0, v = n;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? v : v.toFixed(1)) + " " + units[i] + " behind";
  }

  function fmtMS(v) { return v < 10 ? v.toFixed(1) : Math.round(v).toString(); }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // --- cards -------------------------------------------------------------
  function buildCards() {
    const main = $("#paths");
    main.replaceChildren();
    for (const p of state.paths) {
      const card = el("section", { class: "path", id: "path-" + p.name, "data-path": p.name, "data-state": "unknown" });
      const h = el("h2");
      h.append(el("span", {}, p.title), el("span", { class: "badge" }, "…"));
      const dl = el("dl");
      dl.append(el("dt", {}, "position"), el("dd", { class: "pos" }, "–"),
        el("dt", {}, "lag"), el("dd", { class: "lag" }, "–"),
        el("dt", {}, "read in"), el("dd", { class: "read" }, "–"));
      const table = el("table", { class: "rank" });
      const head = el("tr");
      head.append(el("th", {}, "product"), el("th", { class: "n" }, "sold"));
      table.append(el("thead"), el("tbody"));
      table.tHead.append(head);
      card.append(h, dl, table, el("p", { class: "mine" }), el("ul", { class: "replicas" }), el("p", { class: "error" }));
      main.append(card);
    }
  }

  function renderTick(t) {
    $("#head").textContent = t.head || "unknown";
    for (const p of t.paths) {
      const card = document.getElementById("path-" + p.name);
      if (!card) continue;
      const reps = p.replicas || null;
      const anyUp = reps === null ? !p.error : reps.some(r => r.up);
      const st = anyUp && !p.error ? "up" : (anyUp ? "degraded" : "down");
      card.dataset.state = st;
      $(".badge", card).textContent = st;
      card.dataset.position = p.position || "";
      $(".pos", card).textContent = p.position || "–";
      $(".lag", card).textContent = p.name === "postgres" ? "the source of truth" : bytes(p.lag_bytes);
      $(".read", card).textContent = p.error ? "failed" : fmtMS(p.read_ms) + " ms";
      $(".error", card).textContent = p.error || "";
      if (!p.error) {
        const body = $("tbody", card);
        body.replaceChildren(...p.rows.map(r => {
          const tr = el("tr");
          tr.append(el("td", {}, r.name), el("td", { class: "n" }, String(r.count)));
          return tr;
        }));
        card.dataset.rows = p.rows.map(r => r.name + ":" + r.count).join(",");
      }
      const ul = $(".replicas", card);
      if (reps) {
        ul.replaceChildren(...reps.map(r => el("li", { class: "replica", "data-up": String(r.up), title: r.healthy ? (r.ejected ? "ejected after failed reads" : "serving") : "not serving" },
          r.addr + " · " + (r.up ? "up" : "down"))));
        if (reps.length === 0) ul.replaceChildren(el("li", { class: "replica", "data-up": "false" }, "no replica found"));
      }
    }
    markMine(t);
  }

  // --- this page's order ---------------------------------------------------
  function markMine(t) {
    const m = state.mine;
    if (!m) return;
    const w = state.writes.get(m.id);
    for (const p of state.paths) {
      const card = document.getElementById("path-" + p.name);
      const out = $(".mine", card);
      if (out.dataset.state === "visible") continue;
      let ms = w && w.visible ? w.visible[p.name] : undefined;
      let text;
      if (ms === undefined && w && !w.followed && t) {
        // Not followed by the api (it was busy following others): judge by the
        // positions the ticks carry, to the tick's precision.
        const ps = t.paths.find(x => x.name === p.name);
        if (ps && ps.position && lsn(ps.position) >= lsn(m.lsn)) {
          ms = performance.now() - m.clicked;
          text = "order #" + m.id + " visible by " + fmtMS(ms) + " ms (to a tick)";
        }
      }
      if (ms !== undefined) {
        out.dataset.state = "visible";
        out.dataset.ms = String(ms);
        out.textContent = text || ("order #" + m.id + " visible after " + fmtMS(ms) + " ms");
      } else if (w && w.errors && w.errors[p.name]) {
        out.dataset.state = "failed";
        out.textContent = "order #" + m.id + ": " + w.errors[p.name];
      } else {
        out.dataset.state = "waiting";
        out.textContent = "order #" + m.id + ": waiting…";
      }
    }
  }

  async function postOrder() {
    const btn = $("#post"), status = $("#order-status");
    btn.disabled = true;
    status.textContent = "posting…";
    const headers = {};
    if (state.writeKey) headers["X-API-Key"] = state.key;
    try {
      const clicked = performance.now();
      const resp = await fetch("/orders", { method: "POST", headers });
      const body = await resp.json().catch(() => ({}));
      if (resp.status !== 201) {
        status.textContent = "POST /orders answered " + resp.status + ": " + (body.error || resp.statusText);
        return;
      }
      const pos = resp.headers.get("Spice-Position");
      state.mine = { id: body.id, lsn: pos, clicked };
      for (const out of document.querySelectorAll(".mine")) { delete out.dataset.state; delete out.dataset.ms; }
      status.dataset.order = String(body.id);
      status.textContent = "order #" + body.id + ": " + body.count + " × product " + body.product_id + " at " + pos;
      markMine(state.last);
    } catch (e) {
      status.textContent = "POST /orders failed: " + e.message;
    } finally {
      updateButton();
    }
  }

  function updateButton() {
    $("#post").disabled = state.paths.length === 0 || (state.writeKey && state.key === "");
  }

  // --- chart -----------------------------------------------------------------
  function svg(tag, attrs, text) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmtAgo(ms) {
    return ms >= 90000 ? (ms / 60000).toFixed(1).replace(/\.0$/, "") + " min" : Math.round(ms / 1000) + " s";
  }

  function niceMax(v) {
    if (v <= 0) return 10;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function drawChart() {
    const box = $("#chart");
    const W = Math.max(box.clientWidth, 240), H = Math.max(box.clientHeight, 120);
    box.setAttribute("viewBox", "0 0 " + W + " " + H);
    const L = 44, R = 8, T = 8, B = 22;
    const now = Date.now();
    const ws = [...state.writes.values()].filter(w => Date.parse(w.at) >= now - WINDOW_MS).sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    // The time axis spans the orders shown: a minute at least, five at most.
    const span = Math.min(WINDOW_MS, Math.max(60000, ws.length ? now - Date.parse(ws[0].at) + 5000 : 0));
    const from = now - span;
    let top = 0;
    for (const w of ws) for (const k in SERIES) if (w.visible[k] !== undefined) top = Math.max(top, w.visible[k]);
    top = niceMax(top);
    const x = t => L + (t - from) / span * (W - L - R);
    const y = v => T + (1 - v / top) * (H - T - B);
    const kids = [];
    for (let i = 0; i <= 4; i++) {
      const v = top * i / 4;
      kids.push(svg("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      kids.push(svg("text", { class: "axis", x: L - 4, y: y(v) + 4, "text-anchor": "end" }, fmtMS(v)));
    }
    for (let m = 0; m <= 5; m++) {
      if (W < 480 && m % 2 === 1) continue; // a phone has room for every other label
      const ago = span * (5 - m) / 5;
      kids.push(svg("text", { class: "axis", x: x(now - ago), y: H - 6, "text-anchor": m === 0 ? "start" : (m === 5 ? "end" : "middle") }, m === 5 ? "now" : "-" + fmtAgo(ago)));
    }
    const legend = [];
    for (const k in SERIES) {
      const pts = ws.filter(w => w.visible[k] !== undefined).map(w => [x(Date.parse(w.at)), y(w.visible[k]), w.visible[k]]);
      if (pts.length > 1) kids.push(svg("polyline", { class: "s-" + k, points: pts.map(p => p[0].toFixed(1) + "," + p[1].toFixed(1)).join(" ") }));
      for (const p of pts) kids.push(svg("circle", { class: "s-" + k, cx: p[0].toFixed(1), cy: p[1].toFixed(1), r: 2.5 }));
      const vals = pts.map(p => p[2]).sort((a, b) => a - b);
      const li = el("li");
      li.append(el("span", { class: "sw", style: "background: var(--c-" + k + ")" }));
      li.append(document.createTextNode(SERIES[k] + (vals.length ? ": last " + fmtMS(pts[pts.length - 1][2]) + " ms, median " + fmtMS(vals[Math.floor(vals.length / 2)]) + " ms (" + vals.length + ")" : ": no order yet")));
      legend.push(li);
    }
    box.replaceChildren(...kids);
    $("#legend").replaceChildren(...legend);
  }

  // --- events ----------------------------------------------------------------
  function mergeWrites(list) {
    const cut = Date.now() - WINDOW_MS - 60000;
    for (const w of list || []) state.writes.set(w.id, w);
    for (const [id, w] of state.writes) if (Date.parse(w.at) < cut && (!state.mine || state.mine.id !== id)) state.writes.delete(id);
  }

  // The stream: EventSource reconnects by itself after a network error (the
  // api drops a viewer that stops reading, or restarts) and sends the last
  // tick it saw, so the hello says how many were missed. A refusal (503 when
  // the api serves as many pages as it will) closes it for good: the page asks
  // the api why, shows it, and tries again later.
  let lostAt = 0, retryMs = 5000;

  function since(t) { return ((Date.now() - t) / 1000).toFixed(0) + " s"; }

  function lost(conn, what) {
    conn.dataset.state = "lost";
    conn.textContent = what;
  }

  async function refused(conn) {
    let why = "the api refused the live stream";
    try {
      const ctl = new AbortController();
      const resp = await fetch("/live/events", { signal: ctl.signal, cache: "no-store" });
      if (resp.ok) {
        ctl.abort(); // a place is free again
        retryMs = 0;
      } else {
        why = resp.status + ": " + (await resp.text()).trim();
        const after = Number(resp.headers.get("Retry-After"));
        if (after > 0) retryMs = after * 1000;
      }
    } catch (e) {
      why = "the api cannot be reached (" + e.message + ")";
    }
    lost(conn, why + (retryMs ? " · trying again in " + Math.round(retryMs / 1000) + " s" : ""));
    setTimeout(connect, retryMs);
    retryMs = Math.min(Math.max(2 * retryMs, 5000), 60000);
  }

  function connect() {
    const conn = $("#conn");
    const es = new EventSource("/live/events");
    es.addEventListener("hello", e => {
      const h = JSON.parse(e.data);
      state.paths = h.paths;
      state.writeKey = h.write_key;
      $("#keybox").hidden = !h.write_key;
      state.writes.clear();
      mergeWrites(h.writes);
      buildCards();
      updateButton();
      drawChart();
      conn.dataset.state = "live";
      if (lostAt) {
        const missed = h.missed === undefined ? "" : ", " + h.missed + " updates missed";
        conn.textContent = "live · reconnected after " + since(lostAt) + missed;
        conn.title = "The stream was interrupted: the api disconnects a page that falls behind (a hidden tab, a slow network) or was restarting.";
      } else {
        conn.textContent = "live";
      }
      lostAt = 0;
      retryMs = 5000;
    });
    es.addEventListener("tick", e => {
      const t = JSON.parse(e.data);
      state.last = t;
      mergeWrites(t.writes);
      renderTick(t);
      if (t.writes.length) drawChart();
      conn.dataset.state = "live";
      if (!conn.textContent.startsWith("live · reconnected") || t.seq % 20 === 0) {
        conn.textContent = "live · tick " + t.seq;
        conn.title = "";
      }
    });
    es.onerror = () => {
      if (!lostAt) lostAt = Date.now();
      if (es.readyState === EventSource.CLOSED) {
        refused(conn);
        return;
      }
      lost(conn, "connection lost " + new Date(lostAt).toLocaleTimeString() + " · reconnecting…");
    };
  }

  $("#post").addEventListener("click", postOrder);
  $("#key").addEventListener("input", e => { state.key = e.target.value; updateButton(); });
  window.addEventListener("resize", drawChart);
  setInterval(drawChart, 5000); // the window slides
  connect();
})();
