// Sett console: live refresh over server-sent events and the approval
// shortcuts. No framework, no build step; every piece of HTML it inserts
// was rendered (and escaped) by the server.
(function () {
  "use strict";
  var body = document.body;
  var base = body.getAttribute("data-base") || "";
  var live = body.getAttribute("data-live");
  var dot = document.getElementById("live-dot");

  // A refused decision is rendered at the form's address; put the
  // inbox's address back so reloads and live refreshes read the inbox.
  if (/\/approvals\/decide$/.test(location.pathname)) history.replaceState(null, "", base + "/approvals");

  function busy() {
    var a = document.activeElement;
    return a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT") && a.value !== "";
  }

  // A change redraws the page 250 ms later (changes come in bursts), and
  // while they keep coming at most once a second: fifty open pages cost
  // the server fifty fetches a second, not two hundred.
  var pending = null, last = 0;
  function refresh() {
    if (pending) return;
    var wait = Math.max(250, 1000 - (Date.now() - last));
    pending = setTimeout(function () {
      pending = null;
      if (busy()) { refresh(); return; }
      last = Date.now();
      fetch(location.href, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.getElementById("live"), cur = document.getElementById("live");
          if (fresh && cur) {
            var focused = document.querySelector(".approval.focus");
            var keep = focused && focused.getAttribute("data-artefact");
            cur.replaceWith(fresh);
            if (keep) focusItem(document.querySelector('.approval[data-artefact="' + keep + '"]'));
          }
          ["wf-status", "nav-approvals", "outcome"].forEach(function (id) {
            var f = doc.getElementById(id), c = document.getElementById(id);
            if (f && c) c.replaceWith(f);
          });
          if (!document.querySelector(".approval.focus")) focusItem(document.querySelector(".approval"));
        })
        .catch(function () {});
    }, wait);
  }

  if (live && window.EventSource) {
    // since: the stream position the page was read at; a change between
    // then and the stream's start redraws the page at once.
    var since = body.getAttribute("data-since");
    var es = new EventSource(base + "/events" + (since ? "?since=" + encodeURIComponent(since) : ""));
    es.onopen = function () { if (dot) dot.className = "on"; };
    es.onerror = function () { if (dot) dot.className = "off"; };
    es.onmessage = function (m) {
      var ch;
      try { ch = JSON.parse(m.data); } catch (e) { return; }
      if (live === "*" || ch.workflow === live || !ch.workflow) refresh();
    };
  }

  // Approvals: j/k move, a approves, r goes to the reason field.
  function focusItem(el) {
    if (!el) return;
    document.querySelectorAll(".approval.focus").forEach(function (x) { x.classList.remove("focus"); });
    el.classList.add("focus");
    el.scrollIntoView({ block: "nearest" });
  }
  function move(d) {
    var items = Array.prototype.slice.call(document.querySelectorAll(".approval"));
    var i = items.indexOf(document.querySelector(".approval.focus"));
    focusItem(items[Math.max(0, Math.min(items.length - 1, i + d))]);
  }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) {
      if (e.key === "Escape") t.blur();
      return;
    }
    var cur = document.querySelector(".approval.focus");
    switch (e.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a":
        if (cur) { var f = cur.querySelector(".approve-form"); if (f) f.requestSubmit(); }
        break;
      case "r":
        if (cur) { var i = cur.querySelector(".reject-form input[name=reason]"); if (i) { e.preventDefault(); i.focus(); } }
        break;
    }
  });
})();
