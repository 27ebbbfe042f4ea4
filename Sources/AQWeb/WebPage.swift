/// The page `GET /` serves: one HTML file with its style and script inline (no network fetch,
/// no build step). It reads `/status` once, then the pushes of `/live` (a ``LiveStatus`` each),
/// and draws per-channel peak and RMS meters with a peak hold of 2 s, the state, elapsed time,
/// frames, lost frames, xruns, disk free and time left, the files, and a button per take command
/// the session takes now (`POST /control/VERB`: start, stop, split). For `host`, the graph from
/// `/graph` (refreshed every second): a card per plugin with a slider per control input in its
/// range, its MIDI mapping with Learn and unmap buttons and a mapping to set by hand, its output controls' values, bypass,
/// presets, a preset name to save the plugin's settings as and a remove button; the connections, each with a disconnect button, and a source and
/// destination to connect; an installed plugin (from `/plugins`) to add; a graph file to save to
/// or load from. Each change is POSTed as the control socket's command. A token given
/// as `?token=` in the page's address is passed on to every request. Element ids the tests read:
/// `state`, `peak-N`, `rms-N`, `hold-N` (dBFS, one decimal, or `-inf`), a button per verb
/// (`start`, `stop`, `split`), and for the host `control-ID-SYMBOL` (a slider), `shown-ID-SYMBOL`
/// (its value), `midi-ID-SYMBOL` (`channel C cc N`, `learning…` or empty), `learn-ID-SYMBOL`,
/// `unmap-ID-SYMBOL`, `map-ID-SYMBOL` (a mapping set by hand: `map-channel-`, `map-cc-`,
/// `map-min-`, `map-max-ID-SYMBOL` and the button `map-set-ID-SYMBOL`), `bypass-ID`, `preset-ID`, `preset-name-ID` and `save-preset-ID`, `remove-ID`, `add-uri` and `add` (a plugin to
/// add), `connect-source`, `connect-destination` and `connect`, `connections` (a list item per
/// connection, `SOURCE -> DESTINATION`, its button `disconnect-N` from 1), `graph-file`,
/// `save-graph` and `load-graph`.
public enum WebPage {
    public static let html = """
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
    <title>aqjack</title>
    <style>
    body { font: 15px system-ui, sans-serif; background: #15181c; color: #e6e6e6; margin: 1.5em; }
    h1 { font-size: 1.3em; margin: 0 0 .6em; } h1 span { color: #8fa3b8; font-weight: normal; }
    #state { display: inline-block; padding: .2em .7em; border-radius: .3em; background: #38404a; text-transform: uppercase; letter-spacing: .05em; }
    #state.recording, #state.playing { background: #b3261e; } #state.waiting { background: #7a5b00; }
    #facts { margin: .8em 0; color: #c8d0d8; } #facts b { color: #fff; font-weight: 600; }
    .meter { display: grid; grid-template-columns: 2.5em 1fr 17em; align-items: center; gap: .6em; margin: .25em 0; }
    .bar { position: relative; height: 1em; background: #262b31; border-radius: .2em; overflow: hidden; }
    .rmsbar { position: absolute; left: 0; top: 0; bottom: 0; background: #2f8f4e; }
    .peakbar { position: absolute; left: 0; top: 35%; bottom: 35%; background: #9be27a; }
    .holdmark { position: absolute; top: 0; bottom: 0; width: 2px; background: #ffd24a; }
    .numbers { font-variant-numeric: tabular-nums; color: #c8d0d8; }
    button { font: inherit; margin: .8em .6em 0 0; padding: .45em 1.3em; border: 0; border-radius: .3em; background: #3d6fb6; color: #fff; cursor: pointer; }
    button#stop { background: #b3261e; }
    #message { margin-top: .6em; color: #ffb4ab; min-height: 1.2em; }
    .node { background: #1f242a; border-radius: .4em; padding: .6em 1em; margin: .8em 0; max-width: 44em; }
    .node h3 { font-size: 1em; margin: 0 0 .4em; } .node label { margin-right: 1em; }
    .control { display: grid; grid-template-columns: 12em 1fr 5em 14em; gap: .6em; align-items: center; margin: .2em 0; }
    .control .midi button { margin: 0 0 0 .5em; padding: .1em .6em; background: #3d5a80; }
    .control input[type=range] { width: 100%; } .control span { font-variant-numeric: tabular-nums; color: #c8d0d8; }
    ul { padding-left: 1.2em; color: #c8d0d8; }
    #editor select { font: inherit; max-width: 22em; margin-right: .4em; } #editor button { margin-top: .3em; padding: .3em .9em; }
    #connections button { margin: 0 0 0 .6em; padding: .1em .6em; background: #5a3a3a; } .node button { margin: 0 0 0 1em; padding: .2em .8em; background: #5a3a3a; }
    </style></head>
    <body>
    <h1>aqjack <span id="command"></span></h1>
    <div><span id="state">connecting</span></div>
    <div id="facts"></div>
    <div id="meters"></div>
    <div id="buttons"></div>
    <div id="message"></div>
    <div id="graph"></div>
    <div id="editor" hidden>
      <div><select id="add-uri"><option value="">plugin…</option></select><button id="add">Add</button></div>
      <h2 style="font-size:1em">Connections</h2><ul id="connections"></ul>
      <div><select id="connect-source"></select> → <select id="connect-destination"></select><button id="connect">Connect</button></div>
      <h2 style="font-size:1em">Graph file</h2>
      <div><input id="graph-file" placeholder="graph.json (on aqjack's machine)" size="40"><button id="save-graph">Save</button><button id="load-graph">Load</button></div>
    </div>
    <h2 style="font-size:1em">Files</h2><ul id="files"></ul>
    <script>
    "use strict";
    const token = new URLSearchParams(location.search).get("token");
    const query = token ? "?token=" + encodeURIComponent(token) : "";
    const holds = [];
    const el = id => document.getElementById(id);
    const db = v => v === null || v === undefined ? "-inf" : v.toFixed(1);
    const width = v => v === null ? 0 : Math.max(0, Math.min(100, (v + 60) / 60 * 100));
    function duration(s) {
      if (s === null || s === undefined) return "unknown";
      const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = Math.floor(s % 60);
      return (h > 0 ? h + " h " : "") + m + " min " + r + " s";
    }
    function bytes(n) {
      if (n === null || n === undefined) return "unknown";
      const units = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0;
      while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
      return n.toFixed(i ? 1 : 0) + " " + units[i];
    }
    function meter(index) {
      let row = el("meter-" + index);
      if (row) return row;
      row = document.createElement("div"); row.className = "meter"; row.id = "meter-" + index;
      row.innerHTML = `<span>${index}</span><div class="bar"><div class="rmsbar" id="rmsbar-${index}"></div>` +
        `<div class="peakbar" id="peakbar-${index}"></div><div class="holdmark" id="holdmark-${index}"></div></div>` +
        `<span class="numbers">peak <span id="peak-${index}">-inf</span> rms <span id="rms-${index}">-inf</span> hold <span id="hold-${index}">-inf</span></span>`;
      el("meters").appendChild(row);
      return row;
    }
    function render(s) {
      el("command").textContent = s.command;
      el("state").textContent = s.state; el("state").className = s.state;
      if (s.command === "host") { el("facts").innerHTML = `xruns <b>${s.xruns}</b>`; startGraph(); } else
      el("facts").innerHTML = `<b>${s.seconds.toFixed(1)} s</b> · ${s.frames} frames at ${s.sampleRate} Hz · lost <b>${s.lostFrames}</b> · xruns <b>${s.xruns}</b>` +
        ` · disk free <b>${bytes(s.diskFreeBytes)}</b> · time left <b>${duration(s.secondsLeft)}</b>`;
      const now = Date.now();
      for (const c of s.channels) {
        meter(c.channel);
        const hold = holds[c.channel];
        if (c.peakDBFS !== null && (!hold || hold.value === null || c.peakDBFS >= hold.value || now - hold.at > 2000)) {
          holds[c.channel] = { value: c.peakDBFS, at: now };
        }
        const held = holds[c.channel] ? holds[c.channel].value : null;
        el("peak-" + c.channel).textContent = db(c.peakDBFS);
        el("rms-" + c.channel).textContent = db(c.rmsDBFS);
        el("hold-" + c.channel).textContent = db(held);
        el("peakbar-" + c.channel).style.width = width(c.peakDBFS) + "%";
        el("rmsbar-" + c.channel).style.width = width(c.rmsDBFS) + "%";
        el("holdmark-" + c.channel).style.left = "calc(" + width(held) + "% - 2px)";
      }
      const buttons = el("buttons");
      const takes = s.controls.filter(verb => ["start", "stop", "split"].includes(verb));
      for (const verb of takes) {
        if (el(verb)) continue;
        const button = document.createElement("button");
        button.id = verb; button.textContent = verb[0].toUpperCase() + verb.slice(1);
        button.onclick = () => command(verb);
        buttons.appendChild(button);
      }
      for (const button of Array.from(buttons.children)) if (!takes.includes(button.id)) button.remove();
      el("files").innerHTML = "";
      for (const f of s.files) { const li = document.createElement("li"); li.textContent = f; el("files").appendChild(li); }
    }
    async function command(verb) {
      try {
        const reply = await fetch("/control/" + verb + query, { method: "POST" });
        const body = await reply.json();
        el("message").textContent = reply.ok ? "" : body.error;
      } catch (e) { el("message").textContent = "the command did not reach aqjack: " + e; }
    }
    const quote = text => JSON.stringify(String(text));   // the control line's quoting: "...", with \\" and \\\\ escaped
    const shownValue = v => v === null ? "" : String(Math.round(v * 1000) / 1000);
    let graphShape = "", editorShape = "", graphTimer = null;
    function startGraph() {
      if (graphTimer) return;
      graphTimer = setInterval(refreshGraph, 1000); refreshGraph();
      el("editor").hidden = false;
      el("add").onclick = () => { if (el("add-uri").value) send("add", quote(el("add-uri").value)); };
      el("connect").onclick = () => send("connect", quote(el("connect-source").value) + " " + quote(el("connect-destination").value));
      el("save-graph").onclick = () => { if (el("graph-file").value) send("save", quote(el("graph-file").value)); };
      el("load-graph").onclick = () => { if (el("graph-file").value) send("load", quote(el("graph-file").value)); };
      fetch("/plugins" + query).then(r => r.json()).then(list => {
        for (const p of list.plugins) {
          const o = document.createElement("option"); o.value = p.uri; o.textContent = p.name + " (" + p.format + ")"; el("add-uri").appendChild(o);
        }
      }).catch(() => {});
    }
    function fill(select, names) {
      const kept = select.value; select.innerHTML = "";
      for (const name of names) { const o = document.createElement("option"); o.value = name; o.textContent = name; select.appendChild(o); }
      if (names.includes(kept)) select.value = kept;
    }
    function showEditor(graph) {
      const shape = JSON.stringify([graph.connections, graph.sources, graph.destinations]);
      if (shape === editorShape) return;
      editorShape = shape; el("connections").innerHTML = "";
      graph.connections.forEach(([source, destination], index) => {
        const li = document.createElement("li"); li.textContent = source + " -> " + destination;
        const cut = document.createElement("button"); cut.id = "disconnect-" + (index + 1); cut.textContent = "×";
        cut.onclick = () => send("disconnect", quote(source) + " " + quote(destination));
        li.appendChild(cut); el("connections").appendChild(li);
      });
      fill(el("connect-source"), graph.sources); fill(el("connect-destination"), graph.destinations);
    }
    async function send(verb, words) {
      try {
        const reply = await fetch("/control/" + verb + query, { method: "POST", body: words });
        const body = await reply.json();
        el("message").textContent = reply.ok ? "" : body.error;
      } catch (e) { el("message").textContent = "the command did not reach aqjack: " + e; }
      refreshGraph();
    }
    function card(node) {
      const div = document.createElement("div"); div.className = "node"; div.id = "node-" + node.id;
      const title = document.createElement("h3");
      title.textContent = node.id + " · " + node.name + (node.latency ? " · latency " + node.latency + " frames" : "");
      const remove = document.createElement("button"); remove.id = "remove-" + node.id; remove.textContent = "Remove";
      remove.onclick = () => send("remove", quote(node.id));
      title.appendChild(remove);
      div.appendChild(title);
      const bypass = document.createElement("input"); bypass.type = "checkbox"; bypass.id = "bypass-" + node.id;
      bypass.onchange = () => send("bypass", quote(node.id) + " " + (bypass.checked ? "on" : "off"));
      const label = document.createElement("label"); label.appendChild(bypass); label.appendChild(document.createTextNode(" bypass"));
      div.appendChild(label);
      if (node.presets.length) {
        const select = document.createElement("select"); select.id = "preset-" + node.id;
        select.innerHTML = "<option value=''>preset…</option>";
        for (const name of node.presets) { const o = document.createElement("option"); o.value = name; o.textContent = name; select.appendChild(o); }
        select.onchange = () => { if (select.value) send("preset", quote(node.id) + " " + quote(select.value)); };
        div.appendChild(select);
      }
      if (!node.uri.startsWith("urn:ladspa:")) {
        const presetName = document.createElement("input"); presetName.id = "preset-name-" + node.id; presetName.placeholder = "preset name";
        const keep = document.createElement("button"); keep.id = "save-preset-" + node.id; keep.textContent = "Save preset";
        keep.title = "save this plugin's settings as your LV2 preset (in ~/.lv2)";
        keep.onclick = () => { if (presetName.value.trim()) send("save-preset", quote(node.id) + " " + quote(presetName.value)); };
        div.appendChild(presetName); div.appendChild(keep);
      }
      for (const c of node.controls) {
        const row = document.createElement("div"); row.className = "control";
        const name = document.createElement("span"); name.textContent = c.name + (c.output ? " (out)" : ""); row.appendChild(name);
        if (!c.output && c.minimum !== null && c.maximum !== null) {
          const input = document.createElement("input"); input.type = "range"; input.id = `control-${node.id}-${c.symbol}`;
          input.min = c.minimum; input.max = c.maximum; input.step = c.integer || c.toggled ? 1 : (c.maximum - c.minimum) / 1000;
          if (c.value !== null) input.value = c.value;
          input.onchange = () => send("set", quote(node.id) + " " + quote(c.symbol) + " " + quote(input.value));
          row.appendChild(input);
        } else row.appendChild(document.createElement("span"));
        const shown = document.createElement("span"); shown.id = `shown-${node.id}-${c.symbol}`; shown.textContent = shownValue(c.value);
        row.appendChild(shown);
        const midi = document.createElement("span"); midi.className = "midi";
        if (!c.output && c.minimum !== null && c.maximum !== null) {
          const words = quote(node.id) + " " + quote(c.symbol);
          const mapped = document.createElement("span"); mapped.id = `midi-${node.id}-${c.symbol}`; midi.appendChild(mapped);
          const learn = document.createElement("button"); learn.id = `learn-${node.id}-${c.symbol}`; learn.textContent = "Learn";
          learn.title = "map the next MIDI controller that moves on midi_in to this control";
          learn.onclick = () => send("midi-learn", words); midi.appendChild(learn);
          const unmap = document.createElement("button"); unmap.id = `unmap-${node.id}-${c.symbol}`; unmap.textContent = "×"; unmap.hidden = true;
          unmap.title = "forget this control's MIDI mappings"; unmap.onclick = () => send("midi-unmap", words); midi.appendChild(unmap);
          // A mapping set by hand: channel, controller and the values at controller 0 and 127.
          const editor = document.createElement("details"); editor.id = `map-${node.id}-${c.symbol}`;
          const summary = document.createElement("summary"); summary.textContent = "map"; editor.appendChild(summary);
          const field = (name, min, max, value, title) => {
            const i = document.createElement("input"); i.type = "number"; i.id = `map-${name}-${node.id}-${c.symbol}`;
            i.min = min; i.max = max; i.value = value; i.title = title; i.style.width = "4.5em"; editor.appendChild(i); return i;
          };
          const channel = field("channel", 1, 16, 1, "MIDI channel, 1 to 16"), cc = field("cc", 0, 127, 1, "controller, 0 to 127");
          const low = field("min", c.minimum, c.maximum, c.minimum, "the value at controller value 0");
          const high = field("max", c.minimum, c.maximum, c.maximum, "the value at controller value 127");
          const map = document.createElement("button"); map.id = `map-set-${node.id}-${c.symbol}`; map.textContent = "Map";
          map.onclick = () => send("midi-map", [words, quote(channel.value), quote(cc.value), quote(low.value), quote(high.value)].join(" "));
          editor.appendChild(map); midi.appendChild(editor);
        }
        row.appendChild(midi);
        div.appendChild(row);
      }
      return div;
    }
    async function refreshGraph() {
      let graph;
      try { const reply = await fetch("/graph" + query); if (!reply.ok) return; graph = await reply.json(); } catch (e) { return; }
      const shape = JSON.stringify(graph.nodes.map(n => [n.id, n.controls.map(c => c.symbol), n.presets]));
      if (shape !== graphShape) {
        graphShape = shape; el("graph").innerHTML = "";
        for (const node of graph.nodes) el("graph").appendChild(card(node));
      }
      showEditor(graph);
      for (const node of graph.nodes) {
        const bypass = el("bypass-" + node.id); if (bypass) bypass.checked = node.bypassed;
        for (const c of node.controls) {
          const shown = el(`shown-${node.id}-${c.symbol}`); if (shown) shown.textContent = shownValue(c.value);
          const mapped = el(`midi-${node.id}-${c.symbol}`);
          if (mapped) {
            const learning = graph.learning && graph.learning.id === node.id && graph.learning.symbol === c.symbol;
            mapped.textContent = learning ? "learning…" : c.midi ? `channel ${c.midi.channel} cc ${c.midi.controller}` : "";
            el(`unmap-${node.id}-${c.symbol}`).hidden = !c.midi;
          }
          const input = el(`control-${node.id}-${c.symbol}`);
          if (input && document.activeElement !== input && c.value !== null) input.value = c.value;
        }
      }
    }
    function connect() {
      const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live" + query);
      ws.onmessage = event => render(JSON.parse(event.data));
      ws.onclose = () => { el("state").textContent = "disconnected"; el("state").className = ""; setTimeout(connect, 1000); };
    }
    fetch("/status" + query).then(r => r.json()).then(render).catch(() => {});
    connect();
    </script>
    </body></html>
    """
}
