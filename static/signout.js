// Warden's sign-out hand-off: the Warden session has ended, and the
// browser goes on to the identity provider's end-session endpoint (the
// link on the page), replacing this page in the history. The sign-out
// form's answer cannot redirect there itself: form-action applies to every
// redirect of a form submission, and the provider's logout passes through
// other origins. Without JavaScript the link does the same.
(function () {
  "use strict";
  var link = document.querySelector("a[data-signout-continue]");
  if (link) window.location.replace(link.href);
})();
