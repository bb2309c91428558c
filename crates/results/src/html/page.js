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

  // tables: one [xs, ys...] per run, aligned on a common x by uPlot.join.
  function draw(id, tables, series, xAxis, yAxis, scales, empty, padding) {
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
      cursor: { drag: { x: true, y: false } }
    };
    var u = new uPlot(opts, aligned, el);
    window.pgbenchCharts.push({ id: id, plot: u, series: series.length });
  }

  function line(label, colour, dash) {
    var s = { label: label, stroke: colour, width: 1.5, spanGaps: false, points: { show: false } };
    if (dash) s.dash = [6, 4];
    return s;
  }

  function present(values) {
    return values.some(function (v) { return v !== null && v !== undefined; });
  }

  var secs = { label: "seconds since start" };
  var timed = runs.filter(function (r) { return r.t.length > 0; });

  draw("chart-tps",
    timed.map(function (r) { return [r.t, r.tps]; }),
    timed.map(function (r, i) { return line(r.label, colours[runs.indexOf(r) % colours.length]); }),
    secs, { label: "transactions per second", size: 70 }, null,
    "No time series in these files (pgbench-rs records one on every run; for stock pgbench, import its progress: lines or logs).");

  var latTables = [], latSeries = [];
  timed.forEach(function (r) {
    var c = colours[runs.indexOf(r) % colours.length];
    if (present(r.percentiles[0])) {
      latTables.push([r.t, r.percentiles[0], r.percentiles[2]]);
      latSeries.push(line(r.label + " p50", c), line(r.label + " p99", c, true));
    } else if (present(r.latency_avg)) {
      latTables.push([r.t, r.latency_avg]);
      latSeries.push(line(r.label + " average", c));
    }
  });
  draw("chart-latency", latTables, latSeries, secs, { label: "latency (ms)", size: 70 }, null,
    "No latencies over time in these files.");

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
        fSeries.push(line(r.label + " failures", c), line(r.label + " retries", c, true));
      }
    });
    draw("chart-failures", fTables, fSeries, secs, { label: "per interval", size: 70 }, null,
      "No failures or retries over time in these files.");
  }
  // Where each chart's plot area is on the page (for tests that look at pixels).
  window.pgbenchChartRects = function () {
    return window.pgbenchCharts.map(function (c) {
      var r = c.plot.over.getBoundingClientRect();
      return {
        id: c.id,
        series: c.series,
        plot: { left: r.left + window.scrollX, top: r.top + window.scrollY, width: r.width, height: r.height }
      };
    });
  };
  document.body.setAttribute("data-charts-drawn", String(window.pgbenchCharts.length));
})();
