// Warden's approval pages: refresh the queue's rows every few seconds and
// count expiry times down. Everything here is a convenience: without
// JavaScript the server-rendered pages say the same, and the Refresh link
// reloads them.
(function () {
  "use strict";

  var REFRESH_MS = 5000;

  // span writes a duration of at least a minute in its two largest units,
  // as the server does (views.ExpiresIn): "23h 59m", "3d 4h", "5m".
  function span(ms) {
    var m = Math.floor(ms / 60000);
    var days = Math.floor(m / 1440), hours = Math.floor(m / 60) % 24, mins = m % 60;
    if (days > 0) return days + "d " + hours + "h";
    if (hours > 0) return hours + "h " + mins + "m";
    return mins + "m";
  }

  function expiresIn(ms) {
    if (ms <= 0) return "expired";
    if (ms < 60000) return "in under a minute";
    return "in " + span(ms);
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("time[data-countdown]").forEach(function (el) {
      var at = Date.parse(el.getAttribute("datetime"));
      if (!isNaN(at)) el.textContent = expiresIn(at - now);
    });
  }

  // refresh fetches the rows partial and swaps it in. It stops for good
  // when the answer says it will never be the partial (signed out, no
  // longer an approver, a bad filter), keeps trying after a network or
  // server error, and leaves the rows alone while the keyboard focus is
  // inside them.
  var timer = null;
  function stop() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  }
  function refresh() {
    var section = document.querySelector("[data-queue-rows]");
    if (!section || document.hidden) return;
    var url = section.getAttribute("data-queue-rows");
    fetch(url, { credentials: "same-origin", cache: "no-store", redirect: "manual", headers: { "Accept": "text/html" } })
      .then(function (res) {
        if (res.type === "opaqueredirect" || (res.status >= 400 && res.status < 500)) {
          stop();
          return null;
        }
        if (!res.ok) return null;
        return res.text();
      })
      .then(function (html) {
        if (html === null) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("[data-queue-rows]");
        if (!fresh) {
          stop();
          return;
        }
        var current = document.querySelector("[data-queue-rows]");
        if (!current || current.contains(document.activeElement)) return;
        current.replaceWith(document.adoptNode(fresh));
        tick();
      })
      .catch(function () {
        // Offline for a moment: the next tick tries again.
      });
  }

  function start() {
    tick();
    setInterval(tick, 1000);
    if (document.querySelector("[data-queue-rows]")) {
      timer = setInterval(refresh, REFRESH_MS);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
