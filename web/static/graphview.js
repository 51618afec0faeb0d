// The graph view: search an entity, draw its neighbourhood with Cytoscape,
// expand a node by clicking it, filter, open a memory with its versions,
// export what is shown. Text from the graph is only ever set as text.
(function () {
  "use strict";
  var container = document.getElementById("cy");
  if (!container || typeof cytoscape === "undefined") {
    return;
  }
  var colours = { entity: "#bf8700", user: "#2da44e", agent: "#8250df", memory: "#1f6feb", session: "#57606a" };
  var cy = cytoscape({
    container: container,
    style: [
      { selector: "node", style: { "background-color": function (n) { return colours[n.data("label")] || "#999"; }, label: "data(caption)", "font-size": 9, "text-wrap": "ellipsis", "text-max-width": 120 } },
      { selector: "edge", style: { width: 1, "line-color": "#afb8c1", "target-arrow-shape": "triangle", "target-arrow-color": "#afb8c1", "curve-style": "bezier", label: "data(type)", "font-size": 7 } }
    ]
  });
  var shown = {}; // key -> node as the API answered it
  var edges = {};
  var status = document.getElementById("status");

  function say(text) { status.textContent = text; }

  function filters() {
    var q = new URLSearchParams();
    [["type", "f-type"], ["kind", "f-kind"], ["status", "f-status"], ["since", "f-since"], ["until", "f-until"]].forEach(function (p) {
      var v = document.getElementById(p[1]).value.trim();
      if (v) { q.set(p[0], v); }
    });
    return q;
  }

  function getJSON(path, params) {
    return fetch(path + "?" + params.toString(), { credentials: "same-origin" }).then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) { throw new Error(body.message || r.statusText); }
        return body;
      });
    });
  }

  function caption(n) {
    if (n.memory) { return n.memory.content.slice(0, 40); }
    return n.name || n.id;
  }

  function addNode(n) {
    if (shown[n.key]) { return; }
    shown[n.key] = n;
    cy.add({ group: "nodes", data: { id: n.key, label: n.label, caption: caption(n) } });
    var tr = document.createElement("tr");
    tr.dataset.key = n.key;
    tr.dataset.label = n.label;
    var cells = [n.label + ":" + n.id, n.kind || "", n.memory ? n.memory.type : "", n.memory ? n.memory.content : (n.name || "")];
    cells.forEach(function (text, i) {
      var td = document.createElement("td");
      td.textContent = text;
      if (i === 3) { td.className = "content"; }
      tr.appendChild(td);
    });
    var td = document.createElement("td");
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = n.memory ? "open" : "expand";
    b.className = n.memory ? "open" : "expand";
    b.addEventListener("click", function () { activate(n.key); });
    td.appendChild(b);
    tr.appendChild(td);
    document.querySelector("#shown tbody").appendChild(tr);
  }

  function addEdge(e) {
    var id = e.from + ">" + e.type + ">" + e.to;
    if (edges[id] || !shown[e.from] || !shown[e.to]) { return; }
    edges[id] = e;
    cy.add({ group: "edges", data: { id: id, source: e.from, target: e.to, type: e.type } });
  }

  function expand(key) {
    var params = filters();
    params.set("from", key);
    params.set("hops", "2");
    say("Expanding " + key + "…");
    return getJSON("/panel/graph/neighbourhood", params).then(function (g) {
      g.nodes.forEach(addNode);
      g.edges.forEach(addEdge);
      cy.layout({ name: "cose", animate: false }).run();
      say(g.nodes.length + " nodes around " + key + (g.truncated ? " (limit reached)" : "") + ".");
      document.body.dataset.expanded = (document.body.dataset.expanded || "") + " " + key;
    }).catch(function (err) { say("Could not expand: " + err.message); });
  }

  function field(dl, name, value) {
    var dt = document.createElement("dt");
    dt.textContent = name;
    var dd = document.createElement("dd");
    dd.textContent = value == null ? "" : String(value);
    dl.appendChild(dt);
    dl.appendChild(dd);
  }

  function open(id) {
    return getJSON("/panel/graph/memories/" + encodeURIComponent(id), new URLSearchParams()).then(function (d) {
      var m = d.memory;
      var dl = document.getElementById("detail-fields");
      dl.replaceChildren();
      [["id", m.id], ["user", m.user_id], ["agent", m.agent_id], ["type", m.type], ["kind", m.kind], ["status", m.status],
        ["sensitivity", m.sensitivity], ["version", m.version], ["created", m.created_at], ["content", m.content]].forEach(function (f) { field(dl, f[0], f[1]); });
      var body = document.querySelector("#versions tbody");
      body.replaceChildren();
      d.versions.forEach(function (v) {
        var tr = document.createElement("tr");
        tr.dataset.id = v.id;
        [v.version, v.content, v.status, v.created_at].forEach(function (t) {
          var td = document.createElement("td");
          td.textContent = String(t);
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      document.getElementById("detail").hidden = false;
    }).catch(function (err) { say("Could not open the memory: " + err.message); });
  }

  function activate(key) {
    var n = shown[key];
    if (n && n.memory) { return open(n.id); }
    return expand(key);
  }

  cy.on("tap", "node", function (evt) { activate(evt.target.id()); });

  function clear() {
    cy.elements().remove();
    shown = {};
    edges = {};
    document.querySelector("#shown tbody").replaceChildren();
    document.getElementById("detail").hidden = true;
  }

  document.getElementById("entity-search").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var q = new URLSearchParams();
    q.set("q", document.getElementById("q").value.trim());
    getJSON("/panel/graph/entities", q).then(function (res) {
      var ul = document.getElementById("results");
      ul.replaceChildren();
      res.entities.forEach(function (e) {
        var li = document.createElement("li");
        var b = document.createElement("button");
        b.type = "button";
        b.className = "entity";
        b.dataset.id = e.id;
        b.textContent = (e.name || e.id) + " (" + e.kind + ", " + e.count + ")";
        b.addEventListener("click", function () {
          clear();
          addNode({ key: "entity:" + e.id, label: "entity", id: e.id, name: e.name, kind: e.kind });
          cy.layout({ name: "grid" }).run();
          say("Click " + (e.name || e.id) + " to expand it.");
        });
        li.appendChild(b);
        ul.appendChild(li);
      });
      say(res.entities.length + " entities found.");
    }).catch(function (err) { say("Search failed: " + err.message); });
  });

  document.getElementById("graph-filters").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var roots = Object.keys(shown).filter(function (k) { return !shown[k].memory; }).slice(0, 1);
    clear();
    roots.forEach(function (k) {
      var parts = k.split(":");
      addNode({ key: k, label: parts[0], id: parts.slice(1).join(":") });
      expand(k);
    });
  });
  document.getElementById("clear").addEventListener("click", clear);

  function download(name, type, text) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: type }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  function exported() {
    return { nodes: Object.keys(shown).map(function (k) { return shown[k]; }), edges: Object.keys(edges).map(function (k) { return edges[k]; }) };
  }

  // A cell a spreadsheet would read as a formula (=, +, -, @, tab or CR
  // first) starts with an apostrophe instead: memories are text, and text
  // someone wrote must not run when the export is opened.
  function csvCell(v) {
    var s = v == null ? "" : String(v);
    if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }

  function csv() {
    var rows = [["key", "label", "id", "name", "kind", "type", "status", "sensitivity", "created_at", "content"]];
    exported().nodes.forEach(function (n) {
      var m = n.memory || {};
      rows.push([n.key, n.label, n.id, n.name, n.kind, m.type, m.status, m.sensitivity, m.created_at, m.content]);
    });
    return rows.map(function (r) { return r.map(csvCell).join(","); }).join("\r\n") + "\r\n";
  }

  document.getElementById("export-json").addEventListener("click", function () {
    download("graph.json", "application/json", JSON.stringify(exported(), null, 2));
  });
  document.getElementById("export-csv").addEventListener("click", function () {
    download("graph.csv", "text/csv", csv());
  });

  // For scripted use and tests: the Cytoscape instance and the exports.
  window.graphView = { cy: cy, json: exported, csv: csv, csvCell: csvCell, expand: expand, open: open };
})();
