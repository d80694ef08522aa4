// The reference page (/docs) is complete without this script: it only opens the operation or schema a
// link points at (#op-…, #schema-…), on load and on each jump, so the reader lands on it opened.
(function () {
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    var details = target.tagName === 'ARTICLE' ? target.querySelector(':scope > details') : target.closest('details');
    if (details && !details.open) {
      details.open = true;
      target.scrollIntoView();
    }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
})();
