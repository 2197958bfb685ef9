// Culprit dashboard: the charts, drawn as SVG from the JSON endpoints, and a
// keyboard shortcut. Everything else on the pages is plain HTML; without
// this script each chart's numbers are in the table next to it.
"use strict";
(function () {
  var SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, parent, text) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function title(parent, text) { el("title", {}, parent, text); }
  function html(tag, cls, parent, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function empty(box, text) {
    box.textContent = "";
    html("p", "empty", box, text);
    box.setAttribute("data-rendered", "empty");
  }
  // A round upper bound for an axis and a tick step.
  function niceMax(v) {
    if (v <= 0) return { max: 1, step: 1 };
    var raw = v / 5, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = [1, 2, 5, 10].filter(function (k) { return k * p >= raw; })[0];
    var step = Math.max(1, m * p);  // counts are whole numbers
    return { max: Math.ceil(v / step) * step, step: step };
  }
  function width(box) { return Math.max(480, Math.floor(box.clientWidth - 16)); }

  // Verdicts per bucket, stacked by outcome category.
  function stacked(box, data) {
    var buckets = data.buckets, series = data.series.filter(function (s) { return s.total > 0; });
    if (!buckets.length || !series.length) return empty(box, "No verdicts in this window.");
    var W = width(box), H = 280, ml = 44, mr = 12, mt = 10, mb = 34;
    var pw = W - ml - mr, ph = H - mt - mb;
    var totals = buckets.map(function (_, i) {
      return series.reduce(function (a, s) { return a + s.counts[i]; }, 0);
    });
    var top = niceMax(Math.max.apply(null, totals));
    box.textContent = "";
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, "aria-hidden": "true", focusable: "false" }, box);
    var grid = el("g", { "class": "grid" }, svg), axis = el("g", { "class": "axis" }, svg);
    for (var v = 0; v <= top.max + 1e-9; v += top.step) {
      var y = mt + ph - (v / top.max) * ph;
      el("line", { x1: ml, x2: W - mr, y1: y, y2: y }, grid);
      el("text", { x: ml - 6, y: y + 4, "text-anchor": "end" }, axis, String(Math.round(v * 100) / 100));
    }
    var slot = pw / buckets.length, bw = Math.max(1, Math.min(42, slot * 0.78));
    var every = Math.max(1, Math.ceil(buckets.length / Math.max(1, Math.floor(pw / 74))));
    var bars = el("g", {}, svg), drawn = 0;
    buckets.forEach(function (b, i) {
      var x = ml + i * slot + (slot - bw) / 2, base = mt + ph;
      series.forEach(function (s) {
        var n = s.counts[i];
        if (!n) return;
        var h = (n / top.max) * ph;
        base -= h;
        var r = el("rect", { "class": "bar f-" + s.category, x: x, y: base, width: bw, height: Math.max(h, 0.5) }, bars);
        title(r, b + ": " + n + " " + s.label);
        drawn++;
      });
      if (i % every === 0) el("text", { x: ml + i * slot + slot / 2, y: H - mb + 16, "text-anchor": "middle" }, axis, b.slice(5));
    });
    el("line", { x1: ml, x2: W - mr, y1: mt + ph, y2: mt + ph }, axis);
    var legend = html("ul", "legend", box);
    series.forEach(function (s) {
      var li = html("li", "", legend);
      html("span", "swatch f-" + s.category, li);
      li.appendChild(document.createTextNode(s.label + " (" + s.total + ")"));
    });
    box.setAttribute("data-rendered", String(drawn));
  }

  // The share of failed attempts left unattributed, per bucket.
  function share(box, data) {
    var pts = data.points, known = pts.filter(function (p) { return p.share !== null; });
    if (!known.length) return empty(box, "No failed attempts in this window.");
    var W = width(box), H = 170, ml = 44, mr = 12, mt = 10, mb = 30;
    var pw = W - ml - mr, ph = H - mt - mb;
    box.textContent = "";
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, "aria-hidden": "true", focusable: "false" }, box);
    var grid = el("g", { "class": "grid" }, svg), axis = el("g", { "class": "axis" }, svg);
    [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
      var y = mt + ph - v * ph;
      el("line", { x1: ml, x2: W - mr, y1: y, y2: y }, grid);
      el("text", { x: ml - 6, y: y + 4, "text-anchor": "end" }, axis, Math.round(v * 100) + "%");
    });
    var slot = pw / pts.length;
    function X(i) { return ml + i * slot + slot / 2; }
    function Y(s) { return mt + ph - s * ph; }
    // Segments between buckets that had failures; a bucket without any breaks the line.
    var d = "", area = "", run = [];
    function flush() {
      if (!run.length) return;
      d += run.map(function (p, k) { return (k ? "L" : "M") + X(p.i) + " " + Y(p.s); }).join(" ") + " ";
      area += "M" + X(run[0].i) + " " + Y(0) + " " + run.map(function (p) { return "L" + X(p.i) + " " + Y(p.s); }).join(" ") +
        " L" + X(run[run.length - 1].i) + " " + Y(0) + " Z ";
      run = [];
    }
    pts.forEach(function (p, i) { if (p.share === null) flush(); else run.push({ i: i, s: p.share }); });
    flush();
    el("path", { "class": "share-area", d: area }, svg);
    el("path", { "class": "share-line", d: d }, svg);
    var drawn = 0;
    pts.forEach(function (p, i) {
      if (p.share === null) return;
      var c = el("circle", { "class": "share-dot", cx: X(i), cy: Y(p.share), r: 4 }, svg);
      title(c, p.bucket + ": " + p.unattributed + " of " + p.failures + " failed attempts unattributed (" +
        Math.round(p.share * 1000) / 10 + "%)");
      drawn++;
    });
    var every = Math.max(1, Math.ceil(pts.length / Math.max(1, Math.floor(pw / 74))));
    pts.forEach(function (p, i) {
      if (i % every === 0) el("text", { x: X(i), y: H - mb + 16, "text-anchor": "middle" }, axis, p.bucket.slice(5));
    });
    box.setAttribute("data-rendered", String(drawn));
  }

  function parseTime(s) { return s ? Date.parse(s) : null; }
  function clock(ms) { return new Date(ms).toISOString().slice(11, 19); }

  // Symptoms per node on a time axis; the root cause outlined. By default
  // the axis spans the cause and its cascade (`focus` in the data), which is
  // where the story is; a button switches to the whole job. Symptoms outside
  // the span are pinned to its edge as arrows.
  function timeline(box, data) {
    var syms = data.symptoms.filter(function (s) { return s.first || s.last; });
    if (!syms.length) return empty(box, "No symptom has a time.");
    var whole = box.getAttribute("data-range") === "whole";
    function first(s) { return parseTime(s.first || s.last); }
    function last(s) { return parseTime(s.last || s.first); }
    var focus = syms.filter(function (s) { return s.focus; });
    if (!focus.length || whole) focus = syms;
    var t0 = Infinity, t1 = -Infinity;
    focus.forEach(function (s) { t0 = Math.min(t0, first(s)); t1 = Math.max(t1, last(s)); });
    var ws = parseTime(data.start), we = parseTime(data.end);
    if (whole) {
      if (ws !== null) t0 = Math.min(t0, ws);
      if (we !== null) t1 = Math.max(t1, we);
    }
    var spread = Math.max(t1 - t0, 10000);
    var pad = spread * 0.04;
    var mid = (t0 + t1) / 2;
    t0 = Math.min(t0, mid - spread / 2) - pad; t1 = Math.max(t1, mid + spread / 2) + pad;
    var rows = data.rows;
    var W = width(box), ml = 120, mr = 24, mt = 24, mb = 30, laneH = 14, gap = 8;
    var pw = W - ml - mr;
    function X(t) { return ml + ((Math.min(Math.max(t, t0), t1) - t0) / (t1 - t0)) * pw; }
    var layout = {};
    rows.forEach(function (r) { layout[r] = { lanes: [] }; });
    var order = syms.slice().sort(function (a, b) { return first(a) - first(b) || (a.id < b.id ? -1 : 1); });
    order.forEach(function (s) {
      var L = layout[s.row].lanes;
      s._before = last(s) < t0; s._after = first(s) > t1;
      var x0 = X(first(s)), x1 = Math.max(X(last(s)), x0 + 8);
      if (s._before) { x0 = ml - 2; x1 = ml + 8; }
      if (s._after) { x0 = ml + pw - 8; x1 = ml + pw + 2; }
      for (var k = 0; k < L.length; k++) if (L[k] + 3 <= x0) break;
      L[k] = x1;
      s._lane = k; s._x0 = x0; s._x1 = x1;
    });
    var y = mt;
    rows.forEach(function (r) {
      layout[r].y = y;
      layout[r].h = Math.max(1, layout[r].lanes.length) * (laneH + 3) + 5;
      y += layout[r].h + gap;
    });
    var H = y + mb;
    box.textContent = "";
    var bar = html("div", "chart-tools", box);
    var toggle = html("button", "secondary", bar, whole ? "Zoom to the symptoms" : "Show the whole job");
    toggle.type = "button";
    toggle.addEventListener("click", function () {
      box.setAttribute("data-range", whole ? "focus" : "whole");
      timeline(box, data);
      box.querySelector("button").focus();
    });
    var around = data.status === "ambiguous" ? "around the candidates" : data.status === "attributed" ? "around the cause" : "around the symptoms";
    html("span", "muted", bar, (whole ? "the whole job" : around) + ": " + clock(t0) + " – " + clock(t1) + " UTC");
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "group", "aria-label": "Symptoms by node over time" }, box);
    if (ws !== null && we !== null && we > t0 && ws < t1) {
      el("rect", { "class": "tl-window", x: X(ws), y: mt - 4, width: Math.max(0, X(we) - X(ws)), height: y - mt }, svg);
    }
    var axis = el("g", { "class": "axis" }, svg);
    rows.forEach(function (r) {
      var L = layout[r];
      el("rect", { "class": "tl-row", x: ml, y: L.y, width: pw, height: L.h, rx: 4 }, svg);
      el("text", { x: ml - 8, y: L.y + L.h / 2 + 4, "text-anchor": "end" }, svg, r);
    });
    [[ws, "job start"], [we, "job end"]].forEach(function (e) {
      if (e[0] === null || e[0] < t0 || e[0] > t1) return;
      el("line", { "class": "tl-edge", x1: X(e[0]), x2: X(e[0]), y1: mt - 6, y2: y - gap }, svg);
      el("text", { "class": "muted", x: X(e[0]), y: mt - 10, "text-anchor": "middle" }, svg, e[1]);
    });
    // Ticks at round instants (every 1, 2, 5, 10, 15 or 30 s, min or h, or
    // days), as many as fit 110 px apart: evenly spaced, and each label an
    // exact time rather than a rounded fraction of the span.
    var steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
    var room = Math.max(2, Math.floor(pw / 110)), week = 604800000;
    var step = Math.ceil((t1 - t0) / room / week) * week;  // beyond the table: whole weeks
    for (var si = 0; si < steps.length; si++)
      if ((t1 - t0) / (steps[si] * 1000) <= room) { step = steps[si] * 1000; break; }
    var axisY = y - gap + 2;
    for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      el("line", { "class": "tick", x1: X(t), x2: X(t), y1: axisY, y2: axisY + 4 }, axis);
      var label = step >= 86400000 ? new Date(t).toISOString().slice(5, 10)
                : step >= 60000 ? new Date(t).toISOString().slice(11, 16) : clock(t);
      el("text", { x: X(t), y: H - mb + 18, "text-anchor": "middle" }, axis, label);
    }
    el("line", { x1: ml, x2: ml + pw, y1: axisY, y2: axisY }, axis);
    var drawn = 0, causes = [];
    order.forEach(function (s) {
      var L = layout[s.row], top = L.y + 4 + s._lane * (laneH + 3);
      var a = el("a", { href: "#" + s.anchor }, svg);
      var cls = s.cause ? "tl-cause" : s.candidate && data.status === "ambiguous" ? "tl-candidate" : "tl-" + s.state;
      if (s._before || s._after) {
        var x = s._before ? ml + 1 : ml + pw - 1, d = s._before ? 9 : -9;
        el("path", { "class": cls + " tl-off", d: "M" + x + " " + (top + laneH / 2) + " l" + d + " -6 v12 Z" }, a);
      } else {
        el("rect", { "class": cls, x: s._x0, y: top, width: s._x1 - s._x0, height: laneH, rx: 3 }, a);
      }
      title(a, (s.cause ? "ROOT CAUSE: " : "") + s.kind + " on " + s.row + " ×" + s.count + ", " + s.state +
        (s.reason ? " (" + s.rule + ": " + s.reason + ")" : "") + "\n" + (s.first || "") + (s.last && s.last !== s.first ? " – " + s.last : "") +
        (s._before ? "\n(before the span shown)" : s._after ? "\n(after the span shown)" : ""));
      if (s.cause) causes.push(s);
      drawn++;
    });
    // Label the cause, or an ambiguous verdict's candidates, beside the mark,
    // over everything else: the bars an operator must tell apart.
    var named = causes.length ? causes : data.status === "ambiguous" ? order.filter(function (s) { return s.candidate && !s._before && !s._after; }) : [];
    named.forEach(function (s) {
      var L = layout[s.row], cy = L.y + 4 + s._lane * (laneH + 3) + laneH / 2 + 4;
      var right = s._x1 + 6 + 200 < W;
      el("text", { "class": "tl-label", x: right ? s._x1 + 6 : s._x0 - 6, y: cy, "text-anchor": right ? "start" : "end" }, svg,
        (s.cause ? "root cause: " : "candidate: ") + s.kind);
    });
    var legend = html("ul", "legend", box);
    [["tl-cause", "root cause"], ["tl-active", "active"], ["tl-candidate", "ambiguous candidate"], ["tl-demoted", "demoted"], ["tl-scrubbed", "scrubbed"]].forEach(function (k) {
      var present = {
        "tl-cause": syms.some(function (s) { return s.cause; }),
        "tl-active": syms.some(function (s) { return s.state === "active" && !s.cause && !(s.candidate && data.status === "ambiguous"); }),
        "tl-candidate": data.status === "ambiguous" && syms.some(function (s) { return s.candidate; }),
        "tl-demoted": syms.some(function (s) { return s.state === "demoted"; }),
        "tl-scrubbed": syms.some(function (s) { return s.state === "scrubbed"; })
      };
      if (!present[k[0]]) return;
      var li = html("li", "", legend);
      html("span", "swatch " + k[0], li);
      li.appendChild(document.createTextNode(k[1]));
    });
    box.setAttribute("data-rendered", String(drawn));
  }

  var charts = { stacked: stacked, share: share, timeline: timeline };

  function load(box) {
    var draw = charts[box.getAttribute("data-chart")];
    if (!draw) return;
    box.setAttribute("aria-busy", "true");
    fetch(box.getAttribute("data-src"), { headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (data) { draw(box, data); })
      .catch(function (e) { empty(box, "The chart could not be loaded (" + e.message + "); the table below has its numbers."); box.setAttribute("data-rendered", "error"); })
      .then(function () { box.removeAttribute("aria-busy"); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var boxes = document.querySelectorAll("[data-chart]");
    for (var i = 0; i < boxes.length; i++) load(boxes[i]);
    // "/" jumps to the job-id search, as on most sites with one search box.
    var search = document.querySelector("[data-shortcut='/']");
    if (search) document.addEventListener("keydown", function (e) {
      var t = e.target.tagName;
      if (e.key === "/" && t !== "INPUT" && t !== "SELECT" && t !== "TEXTAREA" && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        search.focus();
      }
    });
    // A filter form leaves its unset fields out of the URL (the server reads
    // an empty value as unset too, so without this script nothing changes
    // but the URL's length). They are enabled again when the page comes back
    // from the browser's history.
    var forms = document.querySelectorAll("form[method=get]");
    function unsetFields(f) {
      return Array.prototype.filter.call(f.elements, function (e) {
        return e.name && e.type !== "checkbox" && (e.value === "" || (e.name === "role" && e.value === "any"));
      });
    }
    Array.prototype.forEach.call(forms, function (f) {
      f.addEventListener("submit", function () { unsetFields(f).forEach(function (e) { e.disabled = true; }); });
    });
    window.addEventListener("pageshow", function () {
      Array.prototype.forEach.call(forms, function (f) {
        Array.prototype.forEach.call(f.elements, function (e) { e.disabled = false; });
      });
    });
    // Redraw the charts at the new width when the window is resized.
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { for (var i = 0; i < boxes.length; i++) load(boxes[i]); }, 250);
    });
  });
})();
