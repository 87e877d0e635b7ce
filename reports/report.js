/* report.js - the interactive parts of a clockprof HTML report: sortable
 * tables, the reads-per-request histogram, the before/after (dumbbell)
 * chart of a verdict, and the flame graphs (run and differential).
 *
 * Rules this file keeps, because the report shows names taken from the
 * profiled program: data comes only from the JSON block #cp-data; names
 * reach the page only through textContent or setAttribute (never
 * innerHTML or markup built from strings); no eval, no inline handlers
 * (the page's Content-Security-Policy allows only this script by hash);
 * nothing is fetched. Everything here is an addition: the tables written
 * by clockprof already carry every figure without JavaScript. */
(function () {
  "use strict";

  var started = performance.now();
  /* The SVG namespace, taken from an element the HTML parser made, so the
   * report holds no URL at all (tests check that it holds none). */
  var SVGNS = (function () {
    var box = document.createElement("div");
    box.innerHTML = "<svg></svg>"; /* a constant: no data goes through here */
    return box.firstChild.namespaceURI;
  })();
  var dataNode = document.getElementById("cp-data");
  var data = dataNode ? JSON.parse(dataNode.textContent) : {};
  var tip = document.getElementById("tooltip");

  /* --- small helpers ------------------------------------------------- */

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return "n/a";
    var a = Math.abs(v);
    if (a >= 1e15 || (a > 0 && a < 0.001)) return v.toPrecision(3);
    if (a >= 1000 || Number.isInteger(v)) /* toLocaleString's first call costs ~15 ms */
      return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return String(Number(v.toFixed(a >= 100 ? 1 : a >= 10 ? 2 : 3)));
  }

  function pct(v) {
    if (!isFinite(v)) return "n/a";
    return (v * 100).toFixed(v * 100 >= 10 ? 1 : 2) + "%";
  }

  function signedPct(v) {
    if (v === null || v === undefined || !isFinite(v)) return "n/a";
    return (v > 0 ? "+" : "") + v.toFixed(2) + "%";
  }

  function titled(root, id, text) {
    var t = svg("title", { id: id }, text);
    root.appendChild(t);
    root.setAttribute("role", "img");
    root.setAttribute("aria-labelledby", id);
  }

  function showTip(ev, lines) {
    if (!tip) return;
    tip.textContent = "";
    lines.forEach(function (line, i) {
      tip.appendChild(el(i === 0 ? "strong" : "div", {}, line));
    });
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 8) x = Math.max(8, ev.clientX - w - 14);
    if (y + h > window.innerHeight - 8) y = Math.max(8, ev.clientY - h - 14);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  function hideTip() {
    if (tip) tip.hidden = true;
  }

  function onResize(fn) {
    var timer = null, width = window.innerWidth;
    window.addEventListener("resize", function () {
      if (window.innerWidth === width) return;
      width = window.innerWidth;
      clearTimeout(timer);
      timer = setTimeout(fn, 150);
    });
  }

  /* --- sortable tables ----------------------------------------------- */

  function cellKey(cell) {
    if (!cell) return { num: false, v: "" };
    var dv = cell.getAttribute("data-v");
    if (dv !== null) {
      var n = dv === "" ? NaN : Number(dv);
      return { num: true, v: isNaN(n) ? -Infinity : n };
    }
    return { num: false, v: cell.textContent.trim().toLowerCase() };
  }

  function makeSortable(table) {
    var head = table.tHead, body = table.tBodies[0];
    if (!head || !body || body.rows.length < 2) return;
    var ths = head.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      var button = el("button", { type: "button", class: "sort" });
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(ths, function (o) {
          o.setAttribute("aria-sort", "none");
        });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        var keyed = rows.map(function (r, i) {
          return { r: r, k: cellKey(r.cells[col]), i: i };
        });
        keyed.sort(function (a, b) {
          var c;
          if (a.k.num && b.k.num) c = a.k.v - b.k.v;
          else c = String(a.k.v).localeCompare(String(b.k.v));
          if (!asc) c = -c;
          return c || a.i - b.i;
        });
        var frag = document.createDocumentFragment();
        keyed.forEach(function (x) { frag.appendChild(x.r); });
        body.appendChild(frag);
      });
    });
  }

  /* --- reads-per-request histogram ----------------------------------- */

  function histogram(fig, hist) {
    var plot = fig.querySelector(".plot");
    if (!plot || !hist || !hist.length) return;
    var W = 560, H = 240, L = 56, R = 12, T = 12, B = 44;
    var maxN = 0, total = 0;
    hist.forEach(function (p) { maxN = Math.max(maxN, p[1]); total += p[1]; });
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, class: "hist" });
    titled(root, fig.id + "-title",
      "Histogram of clock reads per request: " + hist.length +
      " distinct values over " + fmt(total) + " requests");
    /* A few distinct values would make bars hundreds of pixels wide (one
     * value: one bar across the whole chart); they are capped and the
     * group is centred. */
    var band = Math.min((W - L - R) / hist.length, 44), gap = band > 6 ? 2 : 0;
    var x0 = L + ((W - L - R) - band * hist.length) / 2;
    var y = function (n) { return T + (H - T - B) * (1 - n / (maxN || 1)); };
    [0, 0.5, 1].forEach(function (f) {
      var yy = y(maxN * f);
      root.appendChild(svg("line", { x1: L, x2: W - R, y1: yy, y2: yy, class: "grid" }));
      root.appendChild(svg("text", { x: L - 6, y: yy + 4, class: "tick", "text-anchor": "end" },
        fmt(maxN * f)));
    });
    var step = Math.ceil(hist.length / 12);
    hist.forEach(function (p, i) {
      var x = x0 + i * band;
      var bar = svg("rect", {
        x: x + gap / 2, y: y(p[1]), width: Math.max(band - gap, 0.5),
        height: Math.max(H - B - y(p[1]), p[1] > 0 ? 1 : 0), class: "bar"
      });
      bar.appendChild(svg("title", {}, fmt(p[0]) + " reads: " + fmt(p[1]) +
        " requests (" + pct(p[1] / total) + ")"));
      root.appendChild(bar);
      if (i % step === 0)
        root.appendChild(svg("text", { x: x + band / 2, y: H - B + 16, class: "tick",
          "text-anchor": "middle" }, fmt(p[0])));
    });
    root.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 8, class: "axis",
      "text-anchor": "middle" }, "clock reads in the request"));
    root.appendChild(svg("text", { x: 14, y: (T + H - B) / 2, class: "axis",
      "text-anchor": "middle", transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" },
      "requests"));
    plot.appendChild(root);
  }

  /* --- before/after (dumbbell) chart of a verdict -------------------- */

  /* The bound as a ratio to the base, in the measure's bad direction. */
  function boundRatio(m) {
    if (typeof m.bound !== "string" || !m.base || !m.base.median) return null;
    var s = m.bound.trim(), rel = /%$/.test(s), n = parseFloat(s);
    if (!isFinite(n)) return null;
    n = Math.abs(n);
    var up = m.better !== "higher";
    var d = rel ? n / 100 : n / Math.abs(m.base.median);
    var r = up ? 1 + d : 1 - d;
    return r > 0 ? r : null;
  }

  /* Words where a sign could be mistaken for a missing glyph ("?"). */
  var STATUS_MARK = { regressed: "▲ ", improved: "▼ ", within: "", inconclusive: "unsure: ",
    added: "new: ", removed: "gone: " };

  function dumbbell(fig, measures) {
    var plot = fig.querySelector(".plot");
    if (!plot || !measures || !measures.length) return;
    var rows = measures.filter(function (m) {
      return m.base && m.head && m.base.median > 0 && m.head.median >= 0;
    });
    var skipped = measures.length - rows.length;
    var lo = 1, hi = 1;
    rows.forEach(function (m) {
      var r = Math.max(m.head.median / m.base.median, 1e-3);
      m._r = r;
      lo = Math.min(lo, r); hi = Math.max(hi, r);
      if (m.change_pct && isFinite(m.change_pct.lo) && isFinite(m.change_pct.hi)) {
        m._lo = Math.max(1 + m.change_pct.lo / 100, 1e-3);
        m._hi = Math.max(1 + m.change_pct.hi / 100, 1e-3);
        lo = Math.min(lo, m._lo); hi = Math.max(hi, m._hi);
      }
      m._b = boundRatio(m);
      if (m._b) { lo = Math.min(lo, m._b); hi = Math.max(hi, m._b); }
    });
    var span = Math.max(Math.log(hi) - Math.log(lo), Math.log(1.1));
    var mid = (Math.log(hi) + Math.log(lo)) / 2;
    var l0 = mid - span * 0.55, l1 = mid + span * 0.55;
    var W = 900, LBL = 300, RT = 170, ROW = 20, T = 34, B = 14;
    var H = T + rows.length * ROW + B;
    /* Everything is drawn inside the plot area [LBL, W - RT]: an interval
     * or a mark beyond it is cut at its edge, not drawn over the names. */
    var X = function (r) {
      var x = LBL + (W - LBL - RT) * (Math.log(r) - l0) / (l1 - l0);
      return Math.min(Math.max(x, LBL), W - RT);
    };
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, class: "dumbbell",
      "data-plot-x0": LBL, "data-plot-x1": W - RT });
    titled(root, "dumbbell-title", "Before and after: head median relative to base median for " +
      rows.length + " measures" + (skipped ? " (" + skipped + " without both sides not drawn)" : ""));
    /* Ticks: near 1 the percentages, farther out the powers of ten and
     * their halves and fifths, so a wide range still gets several. */
    var ticks = [1, 0.95, 1.05, 0.9, 1.1, 0.8, 1.25, 0.5, 1.5, 2, 3], drawn = [];
    for (var e = -6; e <= 6; e++)
      [1, 2, 5].forEach(function (k) { ticks.push(k * Math.pow(10, e)); });
    function tickLabel(t) {
      if (t === 1) return "base";
      if (t >= 0.5 && t <= 3) return (t > 1 ? "+" : "") + Math.round((t - 1) * 100) + "%";
      return "×" + (t >= 1 ? fmt(t) : String(Number(t.toPrecision(2))));
    }
    ticks.forEach(function (t) {
      var raw = LBL + (W - LBL - RT) * (Math.log(t) - l0) / (l1 - l0);
      if (raw < LBL || raw > W - RT) return;
      if (drawn.some(function (d) { return Math.abs(d - raw) < 40; })) return;
      drawn.push(raw);
      root.appendChild(svg("line", { x1: raw, x2: raw, y1: T - 6, y2: H - B, class: t === 1 ? "one" : "grid" }));
      root.appendChild(svg("text", { x: raw, y: T - 10, class: "tick", "text-anchor": "middle" }, tickLabel(t)));
    });
    rows.forEach(function (m, i) {
      var y = T + i * ROW + ROW / 2, st = m.status || "unknown";
      var g = svg("g", { class: "row st-" + st });
      g.appendChild(svg("rect", { x: 0, y: y - ROW / 2, width: W, height: ROW, class: "hit" }));
      g.appendChild(svg("text", { x: LBL - 8, y: y + 4, class: "name", "text-anchor": "end" },
        m.name.length > 44 ? m.name.slice(0, 43) + "…" : m.name));
      if (m._lo) g.appendChild(svg("line", { x1: X(m._lo), x2: X(m._hi), y1: y, y2: y, class: "ci" }));
      g.appendChild(svg("line", { x1: X(1), x2: X(m._r), y1: y, y2: y, class: "bar" }));
      if (m._b) g.appendChild(svg("line", { x1: X(m._b), x2: X(m._b), y1: y - 7, y2: y + 7, class: "bound" }));
      g.appendChild(svg("circle", { cx: X(1), cy: y, r: 4, class: "base" }));
      var hx = X(m._r), mark;
      if (m.direction === "worse")
        mark = svg("path", { d: "M" + hx + " " + (y - 6) + "l6 10h-12z", class: "head" });
      else if (m.direction === "better")
        mark = svg("path", { d: "M" + hx + " " + (y + 6) + "l6 -10h-12z", class: "head" });
      else
        mark = svg("circle", { cx: hx, cy: y, r: 4.5, class: "head" });
      g.appendChild(mark);
      g.appendChild(svg("text", { x: W - RT + 8, y: y + 4, class: "val" },
        (STATUS_MARK[st] || "") + fmt(m.base.median) + " → " + fmt(m.head.median)));
      var lines = [m.name, st + (m.bound ? " (bound " + m.bound + ")" : ""),
        "base " + fmt(m.base.median) + " → head " + fmt(m.head.median) + " " + (m.unit || ""),
        "change " + (m.change_pct ? signedPct(m.change_pct.point) + " [" +
          signedPct(m.change_pct.lo) + ", " + signedPct(m.change_pct.hi) + "]" : "n/a")];
      if (m.reason) lines.push(m.reason);
      g.addEventListener("mousemove", function (ev) { showTip(ev, lines); });
      g.addEventListener("mouseleave", hideTip);
      root.appendChild(g);
    });
    var legend = el("p", { class: "legend" });
    legend.textContent = "○ base (1×)   ▲ head worse   ▼ head better   ● head unchanged   " +
      "grey band: the change's interval   ┆ bound";
    plot.appendChild(root);
    plot.appendChild(legend);
  }

  /* --- flame graphs -------------------------------------------------- */

  function hashName(s) {
    var h = 0;
    for (var i = 0; i < s.length && i < 40; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return Math.abs(h);
  }

  /* Compares two stack rows by their frames (after `skip` counts). */
  function rowOrder(skip) {
    return function (a, b) {
      for (var i = skip; i < a.length && i < b.length; i++)
        if (a[i] !== b[i]) return a[i] - b[i];
      return a.length - b.length;
    };
  }

  /* Merges the stacks into a tree; v[side] sums the counts. clockprof
   * writes the rows sorted by frames, so rows sharing a prefix are
   * adjacent and each row only extends the previous row's path (no
   * lookups); rows from elsewhere are sorted first. */
  function buildTree(fd, sides) {
    var names = fd.names, lnames = names.map(function (n) { return n.toLowerCase(); });
    var rows = fd.stacks, order = rowOrder(sides);
    for (var r = 1; r < rows.length; r++)
      if (order(rows[r - 1], rows[r]) > 0) { rows = rows.slice().sort(order); break; }
    var root = { name: "all", lname: "all", id: -1, v: [0, 0], children: [], parent: null, depth: 0 };
    var path = [root], prev = null, order = [root];
    rows.forEach(function (row) {
      var c0 = row[0], c1 = sides === 2 ? row[1] : 0, n = row.length - sides, k = 0, i;
      while (prev && k < n && k + sides < prev.length && prev[k + sides] === row[k + sides]) k++;
      path.length = k + 1;
      for (i = k; i < n; i++) {
        var id = row[i + sides], parent = path[i];
        var kid = { name: names[id], lname: lnames[id], id: id, v: [0, 0], children: [],
          parent: parent, depth: i + 1 };
        parent.children.push(kid);
        path.push(kid);
        order.push(kid);
      }
      for (i = 0; i <= n; i++) { path[i].v[0] += c0; path[i].v[1] += c1; }
      prev = row;
    });
    /* The rows are in order, so the nodes were made in preorder: each
     * subtree is the run order[i] .. order[end[i] - 1]. Searches scan
     * these arrays instead of walking the tree. */
    var ids = new Int32Array(order.length), end = new Int32Array(order.length);
    for (var j = order.length - 1; j >= 0; j--) {
      var o = order[j];
      o.idx = j;
      ids[j] = o.id;
      if (end[j] < j + 1) end[j] = j + 1;
    }
    for (j = order.length - 1; j > 0; j--) {
      var up = order[j].parent.idx;
      if (end[up] < end[j]) end[up] = end[j];
    }
    root.flat = { order: order, ids: ids, end: end };
    return root;
  }

  function Flame(fig, fd, diff) {
    this.fig = fig;
    this.diff = diff;
    this.fd = fd;
    this.root = buildTree(fd, diff ? 2 : 1);
    this.side = diff ? 1 : 0;
    this.zoom = this.root;
    this.term = "";
    this.div = diff ? fd.div : [fd.div || 1, 1];
    this.unit = fd.unit || "reads";
    this.plot = fig.querySelector(".plot");
    this.controls();
    this.reserved = 0;
    this.render();
  }

  /* Children are put in order (widest first) only when drawn. */
  Flame.prototype.kids = function (n) {
    var side = this.side;
    if (n.sorted !== side) {
      n.children.sort(function (a, b) {
        return b.v[side] - a.v[side] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      });
      n.sorted = side;
    }
    return n.children;
  };

  Flame.prototype.controls = function () {
    var self = this, bar = el("div", { class: "flame-controls" });
    var label = el("label", {}, "Search ");
    this.search = el("input", { type: "search", placeholder: "function name", class: "flame-search",
      "aria-label": "search frames", autocomplete: "off", spellcheck: "false" });
    label.appendChild(this.search);
    bar.appendChild(label);
    this.reset = el("button", { type: "button", class: "flame-reset" }, "Reset zoom");
    bar.appendChild(this.reset);
    if (this.diff) {
      this.sideSel = el("select", { class: "flame-side", "aria-label": "size frames by" });
      this.sideSel.appendChild(el("option", { value: "1" }, "width: head"));
      this.sideSel.appendChild(el("option", { value: "0" }, "width: base"));
      bar.appendChild(this.sideSel);
      this.sideSel.addEventListener("change", function () {
        self.side = Number(self.sideSel.value);
        self.render();
      });
    }
    this.status = el("span", { class: "flame-status", role: "status", "aria-live": "polite" });
    bar.appendChild(this.status);
    this.plot.appendChild(bar);
    this.holder = el("div", { class: "flame-svg" });
    this.plot.appendChild(this.holder);
    /* A search changes only which drawn frames are marked: no redraw. */
    var timer = null;
    this.search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        self.term = self.search.value.trim().toLowerCase();
        self.applySearch();
      }, 120);
    });
    this.search.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") {
        clearTimeout(timer);
        self.term = self.search.value.trim().toLowerCase();
        self.applySearch();
      }
    });
    this.reset.addEventListener("click", function () {
      self.zoom = self.root;
      self.render();
    });
    onResize(function () { self.width = 0; self.render(); });
  };

  Flame.prototype.value = function (n) { return n.v[this.side]; };

  Flame.prototype.perUnit = function (n, side) { return n.v[side] / this.div[side]; };

  /* Sum of the top-most matching frames, so nested matches count once,
   * and how many frames match: one pass over the tree in preorder,
   * remembered for the last term and side. */
  Flame.prototype.matched = function () {
    var term = this.term, side = this.side, total = 0, frames = 0;
    if (!term) return null;
    var key = side + "\u0000" + term;
    if (this.memo && this.memo.key === key) return this.memo.m;
    var hits = this.nameHits(), flat = this.root.flat, ids = flat.ids, end = flat.end, skip = 0;
    for (var i = 1; i < ids.length; i++) {
      if (hits[ids[i]] !== 1) continue;
      frames++;
      if (i >= skip) {
        total += flat.order[i].v[side];
        skip = end[i];
      }
    }
    this.memo = { key: key, m: { value: total, frames: frames } };
    return this.memo.m;
  };

  Flame.prototype.fill = function (n) {
    if (this.diff) {
      var b = this.perUnit(n, 0), h = this.perUnit(n, 1), d = h - b;
      var rel = Math.max(b, h) > 0 ? d / Math.max(b, h) : 0;
      var a = Math.abs(rel);
      if (a < 0.02) return { fill: "url(#fp-same)", cls: "same", mark: "" };
      var lvl = a < 0.2 ? 1 : a < 0.5 ? 2 : 3;
      return d > 0 ? { fill: "url(#fp-more" + lvl + ")", cls: "more", mark: "▲ " }
                   : { fill: "url(#fp-less" + lvl + ")", cls: "less", mark: "▼ " };
    }
    var hsh = hashName(n.name);
    return { fill: "hsl(" + (8 + hsh % 42) + "," + (70 + hsh % 25) + "%," + (52 + (hsh >> 3) % 14) + "%)",
      cls: "", mark: "" };
  };

  Flame.prototype.defs = function (root) {
    var defs = svg("defs", {});
    function pattern(id, bg, fg, kind) {
      var p = svg("pattern", { id: id, patternUnits: "userSpaceOnUse", width: 6, height: 6 });
      p.appendChild(svg("rect", { width: 6, height: 6, fill: bg }));
      if (kind === "hatch")
        p.appendChild(svg("path", { d: "M-1 7L7 -1M-1 1L1 -1M5 7L7 5", stroke: fg, "stroke-width": 1 }));
      else if (kind === "dots")
        p.appendChild(svg("circle", { cx: 3, cy: 3, r: 0.9, fill: fg }));
      defs.appendChild(p);
    }
    pattern("fp-same", "#e4e4e0", "#e4e4e0", "none");
    var more = ["#f6c3b5", "#ee8f78", "#dc5a41"], less = ["#c2d6f0", "#8fb2e3", "#5b89cf"];
    for (var i = 0; i < 3; i++) {
      pattern("fp-more" + (i + 1), more[i], "rgba(90,20,10,0.35)", "hatch");
      pattern("fp-less" + (i + 1), less[i], "rgba(10,30,90,0.45)", "dots");
    }
    root.appendChild(defs);
  };

  /* For each distinct name, 1 when it contains the search term: names
   * repeat across the tree, so each is searched once per term. */
  Flame.prototype.nameHits = function () {
    if (this.hitsTerm !== this.term) {
      var lnames = this.lnames || (this.lnames = this.fd.names.map(function (x) { return x.toLowerCase(); }));
      var term = this.term, hits = new Uint8Array(lnames.length);
      for (var i = 0; i < lnames.length; i++) hits[i] = lnames[i].indexOf(term) >= 0 ? 1 : 0;
      this.hits = hits;
      this.hitsTerm = term;
    }
    return this.hits;
  };

  /* Whether a drawn frame (or a block of frames too narrow to draw) has
   * a name containing the search term. */
  Flame.prototype.isMatch = function (n) {
    if (!this.term) return false;
    var hits = this.nameHits();
    if (n.rest) return n.rest.some(function (k) { return hits[k.id] === 1; });
    return n.id >= 0 && hits[n.id] === 1;
  };

  /* Marks the drawn frames that match the search, touching only those
   * whose mark changes, and says what matched. */
  Flame.prototype.applySearch = function () {
    var nodes = this.nodes || [];
    for (var i = 0; i < nodes.length; i++) {
      var m = this.isMatch(nodes[i]);
      if (m === this.marked[i]) continue;
      this.marked[i] = m;
      var r = this.rects[i], t = this.texts[i];
      r.classList.toggle("match", m);
      r.setAttribute("fill", m ? "#c43bd1" : this.fills[i]);
      if (t) t.classList.toggle("match", m);
    }
    this.say();
  };

  Flame.prototype.say = function () {
    var side = this.side, total = this.root.v[side], zoom = this.zoom;
    var m = this.matched(), unitTotal = this.diff ? "" : " reads";
    if (m)
      this.status.textContent = "matched: " + pct(total ? m.value / total : 0) + " of " +
        (this.diff ? (side ? "head" : "base") + " reads" : "reads") + " (" + fmt(m.value) +
        unitTotal + " in " + m.frames + " frames)";
    else
      this.status.textContent = this.nodes.length + " frames drawn" + (zoom.parent ? "; zoomed to " +
        zoom.name : "") + "; click a frame to zoom";
  };

  /* Frames narrower than MIN_PX are not drawn one by one: a run of them
   * side by side is drawn as one grey block (hover says how many; a click
   * zooms to their parent, where they are wider). That narrow, they could
   * not be told apart or pointed at anyway, and drawing tens of thousands
   * of them made every zoom as slow as opening the report. */
  var MIN_PX = 2;

  Flame.prototype.render = function () {
    var self = this, side = this.side, H = 18;
    /* Read once (and again after a resize): reading it makes the browser
     * lay out the whole page, which took longer than drawing. */
    if (!this.width) this.width = Math.max(this.holder.clientWidth || this.plot.clientWidth || 960, 320);
    var W = this.width;
    var zoom = this.zoom, zv = zoom.v[side];
    if (!(zv > 0)) { zoom = this.zoom = this.root; zv = zoom.v[side]; }
    var root = svg("svg", { width: W, class: "flame" + (this.diff ? " diff" : ""),
      "data-zoom": zoom.parent ? zoom.name : "all" });
    titled(root, this.fig.id + "-title", (this.diff ? "Differential flame graph" : "Flame graph") +
      " of clock-read stacks" + (zoom.parent ? ", zoomed to " + zoom.name : ""));
    if (this.diff) this.defs(root);
    var frames = svg("g", {});
    var nodes = [], rects = [], texts = [], fills = [], maxDepth = 0;
    /* One <rect class="frame"> per drawn frame, followed by its label
     * when there is room. Its height comes from the style sheet, its
     * index into nodes is a property: fewer attributes to set. */
    function draw(n, x, w, depth, ancestor) {
      var y = depth * H, f = n.rest ? { fill: "#c9c9c4", cls: "rest", mark: "" } : self.fill(n);
      var r = document.createElementNS(SVGNS, "rect");
      r.setAttribute("class", "frame" + (f.cls ? " " + f.cls : "") + (ancestor ? " ancestor" : ""));
      r.cpIndex = nodes.length;
      if (!n.rest) r.setAttribute("data-name", n.name);
      r.setAttribute("x", x.toFixed(1));
      r.setAttribute("y", y);
      r.setAttribute("width", Math.max(w - 0.5, 0.5).toFixed(1));
      var fill = ancestor ? "#d8d8d4" : f.fill;
      r.setAttribute("fill", fill);
      fills.push(fill);
      frames.appendChild(r);
      var fit = Math.floor((w - 6) / 6.6), t = null;
      if (fit >= 3 && !n.rest) {
        var label = f.mark + n.name;
        if (label.length > fit) label = label.slice(0, fit - 1) + "…";
        t = document.createElementNS(SVGNS, "text");
        if (ancestor) t.setAttribute("class", "ancestor");
        t.setAttribute("x", (x + 3).toFixed(1));
        t.setAttribute("y", y + 13);
        t.textContent = label;
        frames.appendChild(t);
      }
      nodes.push(n);
      rects.push(r);
      texts.push(t);
      if (depth > maxDepth) maxDepth = depth;
    }
    var chain = [], a = zoom;
    while (a) { chain.unshift(a); a = a.parent; }
    chain.forEach(function (n, d) { if (n !== zoom) draw(n, 0, W, d, true); });
    var base = chain.length - 1, scale = W / zv;
    (function walk(n, x, depth) {
      draw(n, x, n.v[side] * scale, depth, false);
      var cx = x, kids = self.kids(n), rest = null, restX = 0, restV = [0, 0];
      function flush() {
        if (rest && (cx - restX) >= MIN_PX)
          draw({ rest: rest, parent: n, v: restV, name: rest.length + " narrow frames" },
               restX, cx - restX, depth + 1, false);
        rest = null;
      }
      for (var i = 0; i < kids.length; i++) {
        var c = kids[i], cw = c.v[side] * scale;
        if (!(cw > 0)) continue;
        if (cw >= MIN_PX) {
          flush();
          walk(c, cx, depth + 1);
        } else {
          if (!rest) { rest = []; restX = cx; restV = [0, 0]; }
          rest.push(c);
          restV[0] += c.v[0]; restV[1] += c.v[1];
        }
        cx += cw;
      }
      flush();
    })(zoom, 0, base);
    /* The holder never shrinks; a redraw that needs no more room than the
     * tallest so far does not move the rest of the page, so nothing
     * outside the flame graph is laid out again. */
    var need = (maxDepth + 1) * H + 2 + 2;
    if (need > this.reserved) {
      this.reserved = need;
      this.holder.style.height = need + "px";
    }
    root.setAttribute("height", (maxDepth + 1) * H + 2);
    root.setAttribute("viewBox", "0 0 " + W + " " + ((maxDepth + 1) * H + 2));
    root.appendChild(frames);
    this.nodes = nodes;
    this.rects = rects;
    this.texts = texts;
    this.fills = fills;
    this.marked = [];
    root.addEventListener("mousemove", function (ev) {
      var g = ev.target;
      if (!g.classList || !g.classList.contains("frame")) { hideTip(); return; }
      showTip(ev, self.describe(nodes[g.cpIndex]));
    });
    root.addEventListener("mouseleave", hideTip);
    root.addEventListener("click", function (ev) {
      var g = ev.target;
      if (!g.classList || !g.classList.contains("frame")) return;
      var n = nodes[g.cpIndex];
      self.zoom = n.rest ? n.parent : n;
      hideTip();
      self.render();
    });
    this.holder.textContent = "";
    this.holder.appendChild(root);
    this.reset.disabled = zoom === this.root;
    this.applySearch();
  };

  Flame.prototype.describe = function (n) {
    var total = this.root.v[this.side], lines = [n.parent ? n.name : "all clock reads"];
    if (n.rest) {
      lines.push(fmt(n.v[this.side]) + " reads, " + pct(total ? n.v[this.side] / total : 0) +
        " of " + (this.diff ? (this.side ? "head" : "base") + " reads" : "all"));
      lines.push("each under " + MIN_PX + " px wide; click to zoom into " +
        (n.parent.parent ? n.parent.name : "all"));
      return lines;
    }
    if (this.diff) {
      var b = this.perUnit(n, 0), h = this.perUnit(n, 1), d = h - b;
      lines.push("base " + fmt(b) + " " + this.unit + " (" + fmt(n.v[0]) + " reads)");
      lines.push("head " + fmt(h) + " " + this.unit + " (" + fmt(n.v[1]) + " reads)");
      lines.push((d > 0 ? "▲ more in head: +" : d < 0 ? "▼ less in head: " : "= same: ") + fmt(d) +
        " " + this.unit + (b > 0 ? " (" + signedPct(100 * d / b) + ")" : ""));
      lines.push(pct(total ? n.v[this.side] / total : 0) + " of " + (this.side ? "head" : "base") + " reads");
    } else {
      lines.push(fmt(n.v[0]) + " reads, " + pct(total ? n.v[0] / total : 0) + " of all");
      if (this.div[0] !== 1) lines.push(fmt(n.v[0] / this.div[0]) + " " + this.unit);
      if (this.zoom !== this.root && this.zoom.v[0] > 0)
        lines.push(pct(n.v[0] / this.zoom.v[0]) + " of the zoomed frame");
    }
    return lines;
  };

  /* --- start --------------------------------------------------------- */

  var flames = [];
  function guard(what, fn) {
    try { fn(); } catch (e) {
      var note = el("p", { class: "note" }, "This " + what + " could not be drawn (" + e.message +
        "); the table has the same figures.");
      document.querySelector("main").insertBefore(note, document.querySelector("main").firstChild);
      throw e;
    }
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("figure[data-chart=hist]").forEach(function (fig) {
    var run = (data.runs || [])[Number(fig.getAttribute("data-run"))];
    guard("histogram", function () { histogram(fig, run && run.hist); });
  });
  document.querySelectorAll("figure[data-chart=dumbbell]").forEach(function (fig) {
    guard("chart", function () { dumbbell(fig, data.verdict && data.verdict.measures); });
  });
  document.querySelectorAll("figure[data-flame]").forEach(function (fig) {
    guard("flame graph", function () {
      if (fig.getAttribute("data-flame") === "diff") {
        if (data.diff) flames.push(new Flame(fig, data.diff, true));
      } else {
        var run = (data.runs || [])[Number(fig.getAttribute("data-run"))];
        if (run && run.flame) flames.push(new Flame(fig, run.flame, false));
      }
    });
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") hideTip();
  });
  document.documentElement.classList.add("js");
  /* For the tests and `make bench`: script time, and time from navigation
   * start until the first frame after drawing. */
  document.documentElement.setAttribute("data-script-ms", (performance.now() - started).toFixed(1));
  requestAnimationFrame(function () {
    setTimeout(function () {
      document.documentElement.setAttribute("data-rendered-ms", performance.now().toFixed(1));
    }, 0);
  });
})();
