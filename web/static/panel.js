// The panel's charts: each .chart element carries its columns in
// data-series (times first) and which of them to draw in data-cols.
(function () {
  "use strict";
  if (typeof uPlot === "undefined") {
    return;
  }
  var colours = ["#1f6feb", "#2da44e", "#cf222e", "#8250df", "#bf8700"];
  document.querySelectorAll(".chart").forEach(function (el) {
    var all = JSON.parse(el.dataset.series || "[]");
    if (all.length === 0 || all[0].length === 0) {
      return;
    }
    var names = (el.dataset.lines || "").split(",");
    var cols = (el.dataset.cols || "").split(",").map(Number);
    var data = [all[0]];
    var series = [{}];
    cols.forEach(function (c, i) {
      data.push(all[c]);
      series.push({ label: names[i], stroke: colours[i % colours.length], width: 2 });
    });
    new uPlot({ width: Math.max(320, el.clientWidth || 720), height: 200, series: series }, data, el);
  });
})();
