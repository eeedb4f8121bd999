// Warden's menu on a phone: the Menu button opens and closes the
// navigation (and what sits beside it in the header). The stylesheet hides
// the menu behind the button only on narrow screens with scripting on
// (@media (scripting: enabled)); without JavaScript the navigation lies
// open, wrapped, and the button is not shown.
(function () {
  "use strict";

  function init() {
    var btn = document.querySelector("button[aria-controls='site-menu']");
    if (!btn) return;
    function set(open) {
      btn.setAttribute("aria-expanded", open ? "true" : "false");
    }
    btn.addEventListener("click", function () {
      set(btn.getAttribute("aria-expanded") !== "true");
    });
    // Escape closes an open menu and gives the focus back to its button.
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && btn.getAttribute("aria-expanded") === "true") {
        set(false);
        btn.focus();
      }
    });
    // A page restored from the back-forward cache comes back closed.
    window.addEventListener("pageshow", function (e) {
      if (e.persisted) set(false);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
