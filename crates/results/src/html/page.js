// Draws the charts of a pgbench-report page with uPlot from the JSON in #data.
// Each run is one colour; several runs overlay in every chart, named in its legend.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var runs = data.runs;
  var colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  var WIDTH = 1080, HEIGHT = 300;
  window.pgbenchCharts = [];

  function note(el, text) {
    var p = document.createElement("p");
    p.className = "note";
    p.textContent = text;
    el.appendChild(p);
  }

  // The warm-up's span (the longest of the files'), shaded on every chart over time.
  // The series count from the measured window's start, the warm-up's seconds before
  // it (at negative seconds).
  var warmup = 0, xMax = 0, xMin = null;
  runs.forEach(function (r) {
    if (r.warmup) warmup = Math.max(warmup, r.warmup.length_s);
    // The first interval's start, where its step begins.
    if (r.t.length > 0) xMin = xMin === null ? r.t_start : Math.min(xMin, r.t_start);
    [r.t, r.warmup ? r.warmup.t : [], r.server ? r.server.t : []].forEach(function (t) {
      t.forEach(function (x) { xMax = Math.max(xMax, x); });
    });
  });
  var WARM = [226, 228, 240];
  // --reconnect's outages, shaded behind the series of every chart over time.
  var OUTAGE = [250, 214, 214];
  function rgb(c) { return "rgb(" + c.join(",") + ")"; }
  function hex(h) { return [1, 3, 5].map(function (i) { return parseInt(h.substr(i, 2), 16); }); }
  function colourOf(r) { return colours[runs.indexOf(r) % colours.length]; }
  // A run's colour halfway to white: its warm-up's lines, apart from the measured
  // ones where a dash already says something else (p99).
  function lighter(h) { return rgb(hex(h).map(function (v) { return Math.round(v + (255 - v) / 2); })); }

  // The scales of a chart over time: with a warm-up, every such chart spans the
  // same seconds from the warm-up's start, so the warm-up and the window line up.
  function overTime(y) {
    var x = warmup > 0 ? { time: false, range: [-warmup, xMax] }
      : xMin !== null && xMin < xMax ? { time: false, range: [xMin, xMax] } : { time: false };
    return y ? { x: x, y: y } : { x: x };
  }

  // Marks on a chart over time: the warm-up's span (behind the series) and the
  // seconds in which a checkpoint began in `withCheckpoints`' runs (over them, in
  // each run's colour, or `colour`'s).
  function marks(withCheckpoints, colour) {
    var m = [];
    if (warmup > 0) m.push({ kind: "warmup", x0: -warmup, x1: 0, colour: WARM, tolerance: 6 });
    runs.forEach(function (r) {
      (r.outages || []).forEach(function (o) {
        m.push({ kind: "outage", x0: o[0], x1: o[1] === null ? xMax : o[1], colour: OUTAGE, tolerance: 6 });
      });
    });
    // Where each stage of a staged run begins, named, in the run's colour.
    runs.forEach(function (r) {
      (r.stages || []).forEach(function (s) {
        m.push({ kind: "stage", x0: s[0], x1: s[0], colour: hex(colourOf(r)), tolerance: 40, text: s[1] });
      });
    });
    (withCheckpoints || []).forEach(function (r) {
      r.server.checkpoints.forEach(function (x) {
        m.push({ kind: "checkpoint", x0: x, x1: x, colour: colour || hex(colourOf(r)), tolerance: 40 });
      });
    });
    return m;
  }
  var LINES = ["checkpoint", "stage", "peak", "knee", "found"];
  function hooks(m) {
    var each = function (kind, f) {
      return function (u) {
        var ctx = u.ctx, b = u.bbox;
        ctx.save();
        m.filter(function (k) { return k.kind === kind; }).forEach(function (k) {
          f(ctx, b, u.valToPos(k.x0, "x", true), u.valToPos(k.x1, "x", true), k);
        });
        ctx.restore();
      };
    };
    return {
      drawClear: ["warmup", "outage"].map(function (kind) {
        return each(kind, function (ctx, b, x0, x1, k) {
          x0 = Math.max(b.left, x0);
          // An outage shorter than a pixel still shows.
          x1 = Math.max(x0 + devicePixelRatio, Math.min(b.left + b.width, x1));
          ctx.fillStyle = rgb(k.colour);
          ctx.fillRect(x0, b.top, x1 - x0, b.height);
        });
      }),
      // The lines (checkpoints; a sweep's peak and knee, a search's rate found), then
      // their names: each to the right of its line (to the left where the plot ends
      // first), on the first row where it overlaps no name already placed. Marks at
      // values close together had their names drawn over each other.
      draw: [function (u) {
        var ctx = u.ctx, b = u.bbox, dpr = devicePixelRatio, gap = 4 * dpr;
        var lines = m.filter(function (k) { return LINES.indexOf(k.kind) >= 0; });
        lines.sort(function (p, q) { return LINES.indexOf(p.kind) - LINES.indexOf(q.kind); });
        var placed = [];
        var xs = lines.map(function (k) { return Math.round(u.valToPos(k.x0, "x", true)); }).sort(function (p, q) { return p - q; });
        ctx.save();
        ctx.font = 11 * dpr + "px sans-serif";
        // uPlot leaves the alignment of its last axis' labels (right): a name drawn
        // with it ran leftwards over its line and its neighbours'.
        ctx.textAlign = "left";
        ctx.textBaseline = "alphabetic";
        lines.forEach(function (k) {
          var x = Math.round(u.valToPos(k.x0, "x", true));
          ctx.strokeStyle = rgb(k.colour);
          // 2 px on whole pixels: crisp, not blended into the fills under it.
          ctx.lineWidth = 2 * dpr;
          ctx.setLineDash([4 * dpr, 3 * dpr]);
          ctx.beginPath();
          ctx.moveTo(x, b.top);
          ctx.lineTo(x, b.top + b.height);
          ctx.stroke();
          if (!k.text) return;
          var w = ctx.measureText(k.text).width;
          // Past the other lines that would cross it (marks a few pixels apart).
          var start = x;
          xs.forEach(function (o) { if (o > start && o - start < gap + w) start = o; });
          var left = start + gap + w <= b.left + b.width ? start + gap : x - gap - w;
          var row = 0;
          var clash = function (p) { return p.row === row && left < p.right + gap && p.left < left + w + gap; };
          while (placed.some(clash)) row++;
          placed.push({ text: k.text, row: row, left: left, right: left + w, top: b.top + 13 * row * dpr, height: 13 * dpr });
          ctx.fillStyle = rgb(k.colour);
          ctx.fillText(k.text, left, b.top + (12 + 13 * row) * dpr);
        });
        ctx.restore();
        // Where the names went, in CSS pixels of the plot's canvas (for tests).
        u.pgbenchLabels = placed.map(function (p) {
          return { text: p.text, left: p.left / dpr, top: p.top / dpr, width: (p.right - p.left) / dpr, height: p.height / dpr };
        });
      }]
    };
  }

  // tables: one [xs, ys...] per run, aligned on a common x by uPlot.join.
  function draw(id, tables, series, xAxis, yAxis, scales, empty, padding, chartMarks) {
    var el = document.getElementById(id);
    if (!el) return;
    if (tables.length === 0) {
      note(el, empty);
      return;
    }
    var aligned = tables.length === 1 ? tables[0] : uPlot.join(tables);
    var opts = {
      width: WIDTH,
      height: HEIGHT,
      scales: scales || { x: { time: false } },
      series: [{ label: xAxis.label }].concat(series),
      axes: [xAxis, yAxis],
      legend: { live: false },
      padding: padding || [12, 12, 0, 0],
      cursor: { drag: { x: true, y: false } },
      hooks: hooks(chartMarks || [])
    };
    var u = new uPlot(opts, aligned, el);
    window.pgbenchCharts.push({ id: id, plot: u, series: series.length, marks: chartMarks || [] });
  }

  function line(label, colour, dash) {
    var s = { label: label, stroke: colour, width: 1.5, spanGaps: false, points: { show: false } };
    if (dash) s.dash = [6, 4];
    return s;
  }

  // An interval's figure, drawn across its interval: its point is at the interval's
  // end, and the step runs back to the previous point (the first back to `start`,
  // where its interval began), so that failures and a p99 spike fall under the
  // outage (or checkpoint) they belong to. The data stay the intervals' ends.
  var stepped = uPlot.paths.stepped({ align: -1 });
  function interval(label, colour, dash, start) {
    var s = line(label, colour, dash);
    s.paths = function (u, sidx, i0, i1) {
      var p = stepped(u, sidx, i0, i1);
      var xs = u.data[0], ys = u.data[sidx], k = i0;
      while (k <= i1 && (ys[k] === null || ys[k] === undefined)) k++;
      if (k > i1 || start === undefined || start >= xs[k] || !p || !p.stroke) return p;
      var y = u.valToPos(ys[k], "y", true);
      var first = new Path2D();
      first.moveTo(u.valToPos(start, "x", true), y);
      first.lineTo(u.valToPos(xs[k], "x", true), y);
      first.addPath(p.stroke);
      p.stroke = first;
      return p;
    };
    return s;
  }

  function present(values) {
    return values.some(function (v) { return v !== null && v !== undefined; });
  }

  var secs = { label: warmup > 0 ? "seconds since the measured window began (shaded: the warm-up)" : "seconds since start" };
  var timed = runs.filter(function (r) { return r.t.length > 0; });

  var withServer = runs.filter(function (r) { return r.server; });
  var warmed = runs.filter(function (r) { return r.warmup && r.warmup.t.length > 0; });
  // Each run's tps, then the warm-up's (dashed, lighter), where it has one.
  var tpsTables = timed.map(function (r) { return [r.t, r.tps]; });
  var tpsSeries = timed.map(function (r) { return interval(r.label, colourOf(r), false, r.t_start); });
  warmed.forEach(function (r) {
    tpsTables.push([r.warmup.t, r.warmup.tps]);
    tpsSeries.push(interval(r.label + " warm-up", lighter(colourOf(r)), true, -r.warmup.length_s));
  });
  draw("chart-tps", tpsTables, tpsSeries,
    secs, { label: "transactions per second", size: 70 }, overTime(),
    "No time series in these files (pgbench-rs records one on every run; for stock pgbench, import its progress: lines or logs).",
    null, marks(withServer));

  // Each run's p50 (solid) and p99 (dashed), or its average; then the warm-up's the
  // same way, lighter.
  var latTables = [], latSeries = [];
  function latency(name, s, c, start) {
    if (present(s.percentiles[0])) {
      latTables.push([s.t, s.percentiles[0], s.percentiles[2]]);
      latSeries.push(interval(name + " p50", c, false, start), interval(name + " p99", c, true, start));
    } else if (present(s.latency_avg)) {
      latTables.push([s.t, s.latency_avg]);
      latSeries.push(interval(name + " average", c, false, start));
    }
  }
  timed.forEach(function (r) { latency(r.label, r, colourOf(r), r.t_start); });
  warmed.forEach(function (r) { latency(r.label + " warm-up", r.warmup, lighter(colourOf(r)), -r.warmup.length_s); });
  draw("chart-latency", latTables, latSeries, secs, { label: "latency (ms)", size: 70 }, overTime(),
    "No latencies over time in these files.", null, marks());

  var spec = runs.filter(function (r) { return r.spectrum_x.length > 1; });
  var decades = function (u, axis, min, max) {
    var out = [];
    for (var v = 1; v <= max * 1.0001; v *= 10) if (v >= min / 1.0001) out.push(v);
    return out;
  };
  // 1 / (1 - q) = 10^k is the percentile with k - 2 decimals of nines: 99.9% at 1000.
  var pct = function (u, vals) {
    return vals.map(function (v) {
      var decimals = Math.max(0, Math.round(Math.log10(v)) - 2);
      return (v <= 1 ? "0" : (100 * (1 - 1 / v)).toFixed(decimals)) + "%";
    });
  };
  draw("chart-spectrum",
    spec.map(function (r) { return [r.spectrum_x, r.spectrum_ms]; }),
    spec.map(function (r) { return line(r.label, colours[runs.indexOf(r) % colours.length]); }),
    { label: "percentile (log scale of 1 / (1 - percentile))", splits: decades, values: pct, space: 60 },
    { label: "latency (ms, log scale)", size: 70 },
    { x: { time: false, distr: 3, log: 10 }, y: { distr: 3, log: 10 } },
    "No latency histogram in these files (for stock pgbench, import its -l logs).",
    [12, 36, 0, 0]);

  if (data.failures) {
    var fTables = [], fSeries = [];
    timed.forEach(function (r) {
      var c = colours[runs.indexOf(r) % colours.length];
      if (present(r.failures) || present(r.retries)) {
        fTables.push([r.t, r.failures, r.retries]);
        fSeries.push(interval(r.label + " failures", c, false, r.t_start),
          interval(r.label + " retries", c, true, r.t_start));
      }
    });
    draw("chart-failures", fTables, fSeries, secs, { label: "per interval", size: 70 }, overTime(),
      "No failures or retries over time in these files.", null, marks());
  }

  // Server panels: one line a run for the WAL rate and hit ratio; the wait events
  // stacked, one chart a run (largest share at the bottom).
  var WAIT_COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
  var OTHER = "#bab0ac";
  if (withServer.length > 0) {
    var perRun = function (field) {
      return withServer.map(function (r) { return [r.server.t, r.server[field]]; });
    };
    var lines = withServer.map(function (r) { return line(r.label, colourOf(r)); });
    draw("chart-server-wal", perRun("wal_mb_s"), lines, secs, { label: "WAL (MB/s)", size: 70 },
      overTime(), "No WAL figures in these files.", null, marks(withServer));
    draw("chart-server-hits", perRun("hit_ratio"), lines, secs, { label: "buffer hit ratio (%)", size: 70 },
      overTime(), "No buffer figures in these files.", null, marks(withServer));
    withServer.forEach(function (r) {
      var w = r.server.waits, acc = r.server.t.map(function () { return 0; }), stacked = [];
      w.forEach(function (s) {
        acc = acc.map(function (v, k) { return v === null || s.share[k] === null ? null : v + s.share[k]; });
        stacked.push(acc);
      });
      // Drawn from the top down, each filled to 0 over the one above it.
      var order = stacked.map(function (_, k) { return k; }).reverse();
      var series = order.map(function (k) {
        var c = w[k].label === "other" ? OTHER : WAIT_COLOURS[k % WAIT_COLOURS.length];
        return { label: w[k].label, stroke: c, fill: c, width: 1, fillTo: 0, points: { show: false } };
      });
      var table = [r.server.t].concat(order.map(function (k) { return stacked[k]; }));
      draw("chart-server-waits-" + runs.indexOf(r), w.length > 0 ? [table] : [], series, secs,
        { label: "% of sampled backends", size: 70 }, overTime({ range: [0, 100] }),
        "No backends sampled in this run.", null, marks([r], [17, 17, 17]));
    });
  }
  // Sweeps and searches: each file's tps, p99 (and a workload's figure) against the swept value, the
  // 95% interval of a repeated value shaded between its bounds; marked: the peak and
  // the knee of a sweep, the rate a search found (lines behind the series' names).
  var curves = data.curves || [];
  var KNEE = [17, 17, 17], PEAK = [127, 127, 127];
  function curveMarks() {
    var m = [];
    function add(kind, x, colour, tolerance, text) {
      if (x === null || x === undefined) return;
      m.push({ kind: kind, x0: x, x1: x, colour: colour, tolerance: tolerance, text: text });
    }
    curves.forEach(function (c) {
      var who = curves.length > 1 ? c.label + ": " : "";
      add("peak", c.peak, PEAK, 12, who + "peak");
      add("knee", c.knee, KNEE, 40, who + (c.knee_scaling ? "knee (still scaling)" : "knee"));
      add("found", c.found, KNEE, 40, who + "rate found");
    });
    return m;
  }
  function drawCurves(id, pick, yLabel) {
    var el = document.getElementById(id);
    var having = curves.filter(function (c) { return pick(c) && pick(c).mean.some(function (v) { return v !== null; }); });
    if (!el || having.length === 0) return;
    var numeric = having.every(function (c) { return c.numeric; });
    var xs = [].concat.apply([], having.map(function (c) { return c.x; }));
    var min = Math.min.apply(null, xs), max = Math.max.apply(null, xs);
    // Doubling clients, say 1 to 32: equal steps on a log scale.
    var log = numeric && !having[0].search && min > 0 && max / min >= 4;
    var tables = [], series = [], bands = [];
    having.forEach(function (c) {
      var f = pick(c), colour = colours[c.run % colours.length];
      var s = line(c.label + " " + yLabel.split(" (")[0], colour);
      s.width = 2;
      s.points = { show: true, size: 7, fill: colour };
      series.push(s);
      var cols = [c.x, f.mean];
      if (f.high.some(function (v) { return v !== null; })) {
        var light = lighter(colour);
        series.push(line(c.label + " 95% high", light, true), line(c.label + " 95% low", light, true));
        cols.push(f.high, f.low);
        bands.push({ series: [series.length - 1, series.length], fill: "rgba(" + hex(colour).join(",") + ",0.15)" });
      }
      tables.push(cols);
    });
    var labels = having[0].values, x0 = having[0].x;
    var axis = { label: having[0].axis + (log ? " (log scale)" : ""), space: 50 };
    if (!numeric) {
      axis.values = function (u, vals) { return vals.map(function (v) { var i = x0.indexOf(v); return i >= 0 ? labels[i] : ""; }); };
    }
    var m = curveMarks();
    var u = new uPlot({
      width: WIDTH,
      height: HEIGHT,
      scales: { x: log ? { time: false, distr: 3, log: 2 } : { time: false } },
      series: [{ label: having[0].axis }].concat(series),
      bands: bands,
      axes: [axis, { label: yLabel, size: 70 }],
      legend: { live: false },
      padding: [12, 24, 0, 0],
      hooks: hooks(m)
    }, tables.length === 1 ? tables[0] : uPlot.join(tables), el);
    window.pgbenchCharts.push({ id: id, plot: u, series: series.length, marks: m });
  }
  if (curves.length > 0) {
    // A chart in each place the page made for one: its id names the figure (its key
    // in each curve), its data-y the axis; in the page's order.
    var places = document.querySelectorAll("div.chart[id^='chart-sweep-']");
    Array.prototype.forEach.call(places, function (el) {
      var key = el.id.slice("chart-sweep-".length);
      drawCurves(el.id, function (c) { return c[key]; }, el.getAttribute("data-y"));
    });
  }

  // Where each chart's plot area is on the page (for tests that look at pixels).
  window.pgbenchChartRects = function () {
    return window.pgbenchCharts.map(function (c) {
      var r = c.plot.over.getBoundingClientRect();
      var left = r.left + window.scrollX, top = r.top + window.scrollY;
      return {
        id: c.id,
        series: c.series,
        plot: { left: left, top: top, width: r.width, height: r.height },
        // Each mark's box: the warm-up's span, or 5 px about a line's (a checkpoint,
        // a sweep's peak or knee, a search's rate found).
        // Each mark's name where it was drawn.
        labels: (c.plot.pgbenchLabels || []).map(function (l) {
          var cv = c.plot.ctx.canvas.getBoundingClientRect();
          return { text: l.text, rect: { left: cv.left + window.scrollX + l.left, top: cv.top + window.scrollY + l.top, width: l.width, height: l.height } };
        }),
        marks: c.marks.map(function (m) {
          var x0 = Math.max(0, c.plot.valToPos(m.x0, "x")), x1 = Math.min(r.width, c.plot.valToPos(m.x1, "x"));
          if (m.kind !== "warmup") { x0 -= 2; x1 += 3; }
          return { kind: m.kind, colour: m.colour, tolerance: m.tolerance,
            rect: { left: left + x0, top: top, width: x1 - x0, height: r.height } };
        })
      };
    });
  };
  document.body.setAttribute("data-charts-drawn", String(window.pgbenchCharts.length));
})();
