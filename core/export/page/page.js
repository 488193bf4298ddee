"use strict";
// swedeck's exported page: the run's data is JSON in #run-data; every text goes into the
// page with textContent (never as markup), so what a model or a command wrote stays text.
(function () {
  const run = JSON.parse(document.getElementById("run-data").textContent);
  const steps = run.steps;
  const $ = (id) => document.getElementById(id);
  const MAX_MARKS = 2000;
  const FOLD_LINES = 60;
  const HEAD_LINES = 30;
  let current = 0;
  let matches = [];
  let query = "";

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  function marked(text) {
    // the text as nodes, each match of the search in a <mark>
    const frag = document.createDocumentFragment();
    if (!query) { frag.appendChild(document.createTextNode(text)); return frag; }
    const lower = text.toLowerCase(), needle = query.toLowerCase();
    let start = 0, at = lower.indexOf(needle), count = 0;
    if (lower.length !== text.length) { frag.appendChild(document.createTextNode(text)); return frag; }
    while (at !== -1 && count < MAX_MARKS) {
      frag.appendChild(document.createTextNode(text.slice(start, at)));
      frag.appendChild(el("mark", text.slice(at, at + needle.length)));
      start = at + needle.length; count += 1;
      at = lower.indexOf(needle, start);
    }
    frag.appendChild(document.createTextNode(text.slice(start)));
    return frag;
  }

  function fill(node, text) {
    node.textContent = "";
    node.appendChild(marked(text));
  }

  function header() {
    $("title").textContent = run.file;
    const parts = [run.format, run.steps.length + " of " + run.total_steps + " steps"];
    if (run.model) parts.push(run.model);
    if (run.exit_status) parts.push("exit: " + run.exit_status);
    $("summary").textContent = parts.join(" · ");
    $("fidelity").textContent = run.fidelity.join("\n");
    $("task").textContent = run.task || "(no task message)";
    if (run.submission) { $("submission-box").hidden = false; $("submission").textContent = run.submission; }
    if (run.losses.length) {
      $("losses").textContent = "On this page: " + run.losses.join("; ");
      if (run.losses.some((loss) => loss.indexOf("submission") !== -1)) {
        $("notice").hidden = false;
        $("notice").textContent = "The submission is shown with a secret masked: the run's own file keeps it byte for byte.";
      }
    }
  }

  function stepList() {
    const list = $("steps");
    steps.forEach((step, index) => {
      const item = el("li", "#" + step.n + "  " + (step.commands[0] || "(no command)"));
      item.id = "step-item-" + step.n;
      item.addEventListener("click", () => show(index));
      list.appendChild(item);
    });
  }

  function curve() {
    const svg = $("curve");
    const ns = "http://www.w3.org/2000/svg";
    const width = 1000, height = 120, left = 70, right = 10, top = 8, bottom = 100;
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("preserveAspectRatio", "none");
    const tokens = steps.map((step) => step.tokens || 0);
    const most = Math.max(1, ...tokens);
    const window_ = steps.reduce((found, step) => found || step.window, null);
    const top_ = window_ && window_ <= most * 1.25 ? window_ : most;
    const x = (i) => left + (steps.length > 1 ? i / (steps.length - 1) : 0.5) * (width - left - right);
    const y = (value) => bottom - (value / top_) * (bottom - top);
    const add = (tag, attrs, text) => {
      const node = document.createElementNS(ns, tag);
      Object.keys(attrs).forEach((key) => node.setAttribute(key, attrs[key]));
      if (text !== undefined) node.textContent = text;
      svg.appendChild(node);
      return node;
    };
    add("line", { x1: left, y1: top, x2: left, y2: bottom, class: "axis" });
    add("line", { x1: left, y1: bottom, x2: width - right, y2: bottom, class: "axis" });
    add("text", { x: 4, y: top + 10, class: "label" }, top_.toLocaleString("en-US"));
    add("text", { x: 4, y: bottom, class: "label" }, "0 tokens");
    add("text", { x: left, y: height - 4, class: "label" }, "step " + steps[0].n);
    add("text", { x: width - right - 80, y: height - 4, class: "label" }, "step " + steps[steps.length - 1].n);
    if (window_ && window_ <= top_) {
      add("line", { x1: left, y1: y(window_), x2: width - right, y2: y(window_), class: "window" });
    }
    add("polyline", { points: tokens.map((value, i) => x(i) + "," + y(value)).join(" "), class: "line" });
    const here = add("line", { x1: x(0), y1: top, x2: x(0), y2: bottom, class: "here", id: "curve-here" });
    svg.addEventListener("click", (event) => {
      const box = svg.getBoundingClientRect();
      const at = ((event.clientX - box.left) / box.width) * width;
      const index = Math.round(((at - left) / (width - left - right)) * (steps.length - 1));
      show(Math.min(steps.length - 1, Math.max(0, index)));
    });
    return (index) => { here.setAttribute("x1", x(index)); here.setAttribute("x2", x(index)); };
  }

  function output(node, text) {
    node.textContent = "";
    if (!text) { node.appendChild(el("pre", "(no output)", "text")); return; }
    const lines = text.split("\n");
    if (lines.length <= FOLD_LINES || query) { const pre = el("pre", undefined, "text"); pre.appendChild(marked(text)); node.appendChild(pre); return; }
    node.appendChild(el("pre", lines.slice(0, HEAD_LINES).join("\n"), "text"));
    const fold = el("details");
    fold.appendChild(el("summary", (lines.length - HEAD_LINES).toLocaleString("en-US") + " more lines"));
    fold.appendChild(el("pre", lines.slice(HEAD_LINES).join("\n"), "text"));
    node.appendChild(fold);
  }

  let moveHere = () => {};

  function show(index) {
    if (!steps.length) return;
    index = Math.max(0, Math.min(steps.length - 1, index));
    const before = $("step-item-" + steps[current].n);
    if (before) before.removeAttribute("aria-current");
    current = index;
    const step = steps[index];
    const item = $("step-item-" + step.n);
    item.setAttribute("aria-current", "true");
    item.scrollIntoView({ block: "nearest" });
    $("step-title").textContent = "step " + step.n + " / " + run.total_steps;
    $("meter").textContent = step.meter;
    $("meter").className = step.level;
    fill($("thought"), step.thought || "(no words)");
    fill($("commands"), step.commands.length ? step.commands.map((c) => "$ " + c).join("\n") : "(no command)");
    output($("output"), step.output);
    moveHere(index);
    if (history.replaceState) history.replaceState(null, "", "#step-" + step.n);
  }

  function search(text) {
    query = text;
    matches = [];
    steps.forEach((step, index) => {
      const item = $("step-item-" + step.n);
      const hit = !!text && [step.thought, step.output, ...step.commands].some(
        (part) => part.toLowerCase().indexOf(text.toLowerCase()) !== -1);
      item.classList.toggle("match", hit);
      if (hit) matches.push(index);
    });
    $("search-count").textContent = text ? matches.length + " steps match" : "";
    if (matches.length && matches.indexOf(current) === -1) show(nextMatch(1)); else show(current);
  }

  function nextMatch(direction) {
    if (!matches.length) return current;
    if (direction > 0) return matches.find((i) => i > current) ?? matches[0];
    return [...matches].reverse().find((i) => i < current) ?? matches[matches.length - 1];
  }

  document.addEventListener("keydown", (event) => {
    const box = $("search");
    if (event.target === box) {
      if (event.key === "Enter") { event.preventDefault(); show(nextMatch(event.shiftKey ? -1 : 1)); }
      else if (event.key === "Escape") { box.blur(); $("step").focus(); }
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const moves = { ArrowRight: 1, l: 1, ArrowLeft: -1, h: -1 };
    if (event.key in moves) { event.preventDefault(); show(current + moves[event.key]); }
    else if (event.key === "Home") { event.preventDefault(); show(0); }
    else if (event.key === "End") { event.preventDefault(); show(steps.length - 1); }
    else if (event.key === "/") { event.preventDefault(); box.focus(); box.select(); }
    else if (event.key === "n") show(nextMatch(1));
    else if (event.key === "N") show(nextMatch(-1));
  });
  $("search").addEventListener("input", (event) => search(event.target.value));

  header();
  stepList();
  moveHere = curve();
  const wanted = /^#step-(\d+)$/.exec(location.hash);
  const start = wanted ? steps.findIndex((step) => String(step.n) === wanted[1]) : 0;
  show(start >= 0 ? start : 0);
  document.body.setAttribute("data-ready", "true");
})();
