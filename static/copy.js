// Warden's one-time secrets: a Copy button next to each, so a key's
// secret reaches the clipboard whole. Without JavaScript (or a clipboard)
// the button stays hidden and the secret is selected by one click
// (user-select: all), as before.
(function () {
  "use strict";

  function wire(btn) {
    if (btn.dataset.wired) return;
    var target = document.getElementById(btn.dataset.copy);
    if (!target || !navigator.clipboard) return;
    btn.dataset.wired = "1";
    btn.hidden = false;
    btn.addEventListener("click", function () {
      navigator.clipboard.writeText(target.textContent.trim()).then(function () {
        btn.textContent = "Copied";
        btn.setAttribute("aria-live", "polite");
        setTimeout(function () { btn.textContent = "Copy"; }, 2000);
      }, function () {
        btn.textContent = "Copy failed: select the text";
      });
    });
  }

  function init() {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) wire(buttons[i]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
