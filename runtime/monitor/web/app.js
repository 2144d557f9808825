// Flowstate's job page: reads the runner's REST endpoints (Flink's shapes) and redraws
// every REFRESH_MS while the job runs. Plain DOM, no libraries, no network beyond the runner.
"use strict";

const REFRESH_MS = 1500;
const expanded = new Set(); // checkpoint ids whose subtask details are open
let jobPath = null;
let taskOrder = []; // the job's vertex ids, in the job's order

const $ = (id) => document.getElementById(id);

// el builds an element; text is set as text, never parsed as HTML.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function bytes(n) {
  if (n === undefined || n === null || n < 0) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 2 : 1)) + " " + units[i];
}

function ms(n) {
  if (n === undefined || n === null || n < 0) return "-";
  if (n < 1000) return n + " ms";
  const s = n / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
  const m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
  if (d > 0) return d + "d " + (h % 24) + "h";
  if (h > 0) return h + "h " + (m % 60) + "m";
  return m + "m " + Math.floor(s % 60) + "s";
}

function time(t) {
  if (!t || t < 0) return "-";
  const d = new Date(t);
  const p = (x, n) => String(x).padStart(n || 2, "0");
  return p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds()) + "." + p(d.getMilliseconds(), 3);
}

function rate(r) {
  if (r === undefined || r === null) return "-";
  return r >= 100 ? Math.round(r).toLocaleString("en-US") : r.toFixed(1);
}

function count(n) { return (n || 0).toLocaleString("en-US"); }

async function getJSON(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) {
    let msg = r.status + " " + r.statusText;
    try { msg = (await r.json()).errors.join("; "); } catch (e) { /* keep the status */ }
    throw new Error(path + ": " + msg);
  }
  return r.json();
}

function fill(tbody, rows, cols) {
  tbody.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colSpan: cols }, "none"))]));
}

function dl(target, pairs) {
  target.replaceChildren(...pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function drawJob(job) {
  document.title = job.name + " - Flowstate";
  $("job-name").textContent = job.name;
  const st = $("job-state");
  st.textContent = job.state;
  st.className = "badge " + job.state;
  $("job-uptime").textContent = job.uptime > 0 ? ms(job.uptime) : job.uptime < 0 ? "ended" : "-";
  $("job-restarts").textContent = job.numRestarts;
  $("job-type").textContent = job["flowstate-type"] || "custom";
  taskOrder = job.vertices.map((v) => v.id);

  fill($("operators").tBodies[0], job.vertices.map((v) => {
    const sizes = v.subtasks.map((s) => s["state-size"]).filter((s) => s >= 0);
    return el("tr", { "data-operator": v.id },
      el("td", {}, v.name),
      el("td", { class: "num" }, v.parallelism),
      el("td", { class: "num records-in" }, count(v.metrics["read-records"])),
      el("td", { class: "num records-out" }, count(v.metrics["write-records"])),
      el("td", { class: "num" }, rate(v["read-records-per-second"])),
      el("td", { class: "num" }, rate(v["write-records-per-second"])),
      el("td", { class: "num" }, sizes.length ? bytes(sizes.reduce((a, b) => a + b, 0)) : "-"));
  }), 7);

  const conns = [], splits = [];
  for (const v of job.vertices) {
    for (const s of v.subtasks) {
      const c = s.connector;
      if (!c) continue;
      const cm = c.commits;
      conns.push(el("tr", { "data-connector": v.id + "/" + s.subtask },
        el("td", {}, v.name),
        el("td", { class: "num" }, s.subtask),
        el("td", { class: "num pending" }, c.pendingRecords === undefined ? "-" : count(c.pendingRecords)),
        el("td", { class: "num" }, c.currentEmitEventTimeLag >= 0 ? ms(c.currentEmitEventTimeLag) : "-"),
        el("td", { class: "num" }, cm ? count(cm.commits) : "-"),
        el("td", { class: "num committed" }, cm ? count(cm.records) : "-"),
        el("td", { class: "num" }, cm ? count(cm.batches) : "-"),
        el("td", { class: "num" }, cm ? ms(cm["last-latency"]) : "-"),
        el("td", { class: "num" }, cm ? ms(cm["average-latency"]) : "-")));
      for (const sp of c.splits || []) splits.push([v.name, s.subtask, sp]);
    }
  }
  fill($("connectors").tBodies[0], conns, 9);
  splits.sort((a, b) => b[2].pendingRecords - a[2].pendingRecords);
  fill($("splits").tBodies[0], splits.slice(0, 20).map(([name, sub, sp]) => el("tr", { "data-split": sp.split },
    el("td", {}, sp.split),
    el("td", {}, name),
    el("td", { class: "num" }, sub),
    el("td", { class: "num" }, count(sp.pendingRecords)))), 4);

  fill($("plugins").tBodies[0], job.plugins.map((p) => el("tr", { "data-plugin": p.name },
    el("td", {}, p.name),
    el("td", {}, p.roles.join(", ")),
    el("td", {}, p.version || "-"),
    el("td", { class: "num" }, p.pid || "in-process"),
    el("td", { class: "num" }, p.restarts))), 5);
}

function drawConfig(cfg) {
  const rows = [
    ["Mode", cfg.mode.replace("_", " ")],
    ["Interval", cfg.interval > 0 ? ms(cfg.interval) : "only the final checkpoint"],
    ["Timeout", ms(cfg.timeout)],
    ["Tolerable failed checkpoints", cfg.tolerable_failed_checkpoints],
    ["Retained checkpoints", cfg.num_retained],
    ["Incremental", cfg.incremental ? "yes" : "no"],
    ["State backend", cfg.state_backend || "-"],
    ["Checkpoint storage", cfg.checkpoint_storage || "-"],
  ];
  $("config").tBodies[0].replaceChildren(...rows.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, v))));
}

function drawCheckpoints(cp) {
  const c = cp.counts;
  dl($("counts"), [["Completed", c.completed], ["Failed", c.failed], ["In progress", c.in_progress],
    ["Total", c.total], ["Restored", c.restored]]);
  const lc = cp.latest.completed;
  if (lc) dl($("latest-completed"), [["ID", lc.id], ["Completed", time(lc.trigger_timestamp + lc.end_to_end_duration)],
    ["End to end", ms(lc.end_to_end_duration)], ["Full size", bytes(lc.state_size)],
    ["Checkpointed", bytes(lc.checkpointed_size)], ["Path", lc.external_path || "-"]]);
  const lf = cp.latest.failed;
  if (lf) dl($("latest-failed"), [["ID", lf.id], ["Failed", time(lf.failure_timestamp)], ["Reason", lf.failure_message || "-"]]);
  const lr = cp.latest.restored;
  if (lr) dl($("latest-restored"), [["ID", lr.id], ["At", time(lr.restore_timestamp)],
    ["Kind", lr.is_savepoint ? "savepoint" : "checkpoint"], ["Path", lr.external_path || "-"]]);

  const s = cp.summary;
  const line = (name, x, f) => el("tr", {}, el("td", {}, name), el("td", { class: "num" }, f(x.min)),
    el("td", { class: "num" }, f(x.avg)), el("td", { class: "num" }, f(x.max)),
    el("td", { class: "num" }, f(Math.round(x.p50))), el("td", { class: "num" }, f(Math.round(x.p99))));
  fill($("summary").tBodies[0], c.completed ? [line("End to end duration", s.end_to_end_duration, ms),
    line("Checkpointed size", s.checkpointed_size, bytes), line("Full size", s.state_size, bytes)] : [], 6);

  const body = $("history").tBodies[0];
  const rows = [];
  for (const h of cp.history) {
    const kind = h.checkpoint_type.toLowerCase().replace("_", " ");
    rows.push(el("tr", { class: "cp-row " + h.status, "data-checkpoint-id": h.id, "data-status": h.status,
      onclick: () => toggle(h.id) },
      el("td", { class: "num" }, h.id),
      el("td", {}, el("span", { class: "badge " + h.status }, h.status.replace("_", " "))),
      el("td", {}, kind),
      el("td", { class: "num" }, h.num_acknowledged_subtasks + "/" + h.num_subtasks),
      el("td", {}, time(h.trigger_timestamp)),
      el("td", {}, time(h.latest_ack_timestamp)),
      el("td", { class: "num" }, ms(h.end_to_end_duration)),
      el("td", { class: "num" }, bytes(h.checkpointed_size)),
      el("td", { class: "num" }, bytes(h.state_size)),
      el("td", { class: "failure" }, h.failure_message || "")));
    if (expanded.has(h.id)) {
      const cell = el("td", { colSpan: 10 }, el("span", { class: "empty" }, "loading…"));
      rows.push(el("tr", { class: "detail", "data-detail-for": h.id }, cell));
      drawDetails(h, cell);
    }
  }
  fill(body, rows, 10);
  drawChart(cp.history.slice().reverse());
}

function toggle(id) {
  if (expanded.has(id)) expanded.delete(id); else expanded.add(id);
  refresh();
}

async function drawDetails(h, cell) {
  const parts = [];
  const rank = (t) => (taskOrder.indexOf(t) + 1) || taskOrder.length + 1;
  for (const task of Object.keys(h.tasks).sort((a, b) => rank(a) - rank(b))) {
    const d = await getJSON(jobPath + "/checkpoints/details/" + h.id + "/subtasks/" + encodeURIComponent(task));
    const rows = d.subtasks.map((s) => s.status === "completed"
      ? el("tr", {}, el("td", { class: "num" }, s.index), el("td", {}, time(s.ack_timestamp)),
        el("td", { class: "num" }, ms(s.end_to_end_duration)), el("td", { class: "num" }, ms(s.checkpoint.sync)),
        el("td", { class: "num" }, ms(s.checkpoint.async)), el("td", { class: "num" }, ms(s.alignment.duration)),
        el("td", { class: "num" }, ms(s.start_delay || 0)), el("td", { class: "num" }, bytes(s.checkpointed_size)),
        el("td", { class: "num" }, bytes(s.state_size)))
      : el("tr", {}, el("td", { class: "num" }, s.index), el("td", { class: "empty", colSpan: 8 }, "pending or failed")));
    parts.push(el("h3", {}, task), el("table", { class: "grid" },
      el("thead", {}, el("tr", {}, ...["Subtask", "Acknowledged", "End to end", "Sync", "Async", "Alignment",
        "Start delay", "Checkpointed", "Full size"].map((t) => el("th", {}, t)))),
      el("tbody", {}, ...rows)));
  }
  cell.replaceChildren(...(parts.length ? parts : [el("span", { class: "empty" }, "no subtask has acknowledged")]));
}

// drawChart draws the end-to-end duration of each checkpoint as a bar (red when it failed)
// and the full size of the completed ones as a line, oldest left.
function drawChart(hist) {
  const svg = $("chart");
  const W = 900, H = 220, L = 60, R = 70, T = 12, B = 26;
  const ns = "http://www.w3.org/2000/svg";
  const s = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const parts = [s("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B })];
  if (!hist.length) {
    parts.push(s("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, "no checkpoints yet"));
    svg.replaceChildren(...parts);
    return;
  }
  // The duration axis is scaled to the checkpoints that did not fail, so one that failed
  // after a long timeout does not flatten the rest: its bar is cut at the top and labelled.
  const ok = hist.filter((h) => h.status !== "FAILED");
  const maxDur = Math.max(1, ...(ok.length ? ok : hist).map((h) => h.end_to_end_duration));
  const maxSize = Math.max(1, ...hist.map((h) => h.status === "COMPLETED" ? h.state_size : 0));
  const slot = (W - L - R) / hist.length;
  const y = (v, max) => H - B - (v / max) * (H - T - B);
  for (const [v, f] of [[maxDur, ms], [maxDur / 2, ms]]) {
    parts.push(s("text", { x: L - 6, y: y(v, maxDur) + 4, "text-anchor": "end" }, f(Math.round(v))));
  }
  for (const [v, f] of [[maxSize, bytes], [maxSize / 2, bytes]]) {
    parts.push(s("text", { x: W - R + 6, y: y(v, maxSize) + 4 }, f(Math.round(v))));
  }
  const points = [];
  hist.forEach((h, i) => {
    const x = L + i * slot;
    const d = Math.max(0, h.end_to_end_duration);
    let top = h.status === "FAILED" && d === 0 ? H - B - 4 : y(Math.min(d, maxDur), maxDur);
    if (d > maxDur) {
      top = T + 12;
      parts.push(s("text", { x: x + slot / 2, y: T + 8, "text-anchor": "middle" }, ms(d)));
    }
    parts.push(s("rect", { class: "bar" + (h.status === "FAILED" ? " failed" : ""), x: x + slot * 0.2,
      y: top, width: Math.max(1, slot * 0.6), height: H - B - top, "data-checkpoint-id": h.id }));
    if (hist.length <= 30 || i % Math.ceil(hist.length / 30) === 0) {
      parts.push(s("text", { x: x + slot / 2, y: H - B + 14, "text-anchor": "middle" }, h.id));
    }
    if (h.status === "COMPLETED") points.push([x + slot / 2, y(h.state_size, maxSize)]);
  });
  if (points.length) {
    parts.push(s("polyline", { class: "size", points: points.map((p) => p.join(",")).join(" ") }));
    for (const [px, py] of points) parts.push(s("circle", { class: "dot", cx: px, cy: py, r: 3 }));
  }
  svg.replaceChildren(...parts);
}

let timer = null;

async function refresh() {
  clearTimeout(timer);
  let running = true;
  try {
    if (!jobPath) {
      const ov = await getJSON("jobs/overview");
      if (!ov.jobs.length) throw new Error("the runner reports no job");
      jobPath = "jobs/" + encodeURIComponent(ov.jobs[0].jid);
    }
    const [job, cp, cfg] = await Promise.all([getJSON(jobPath), getJSON(jobPath + "/checkpoints"),
      getJSON(jobPath + "/checkpoints/config")]);
    drawJob(job);
    drawCheckpoints(cp);
    drawConfig(cfg);
    running = !["FINISHED", "CANCELED", "FAILED"].includes(job.state);
    $("error").hidden = true;
    $("refreshed").textContent = (running ? "refreshed " : "job ended; last refreshed ") + time(job.now);
  } catch (e) {
    $("error").textContent = "Cannot reach the runner: " + e.message;
    $("error").hidden = false;
  }
  if (running) timer = setTimeout(refresh, REFRESH_MS);
}

refresh();
