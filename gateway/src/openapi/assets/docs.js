// The reference's script. The pages are complete without it (an operation's line links to its own page);
// with it, opening an operation's line on /docs loads that page's details into it, and a link to
// #op-… or #schema-… lands on that operation or schema opened.
(function () {
  function load(details) {
    var src = details.getAttribute('data-src');
    if (!src || details.getAttribute('data-loaded')) return;
    details.setAttribute('data-loaded', 'loading');
    var body = details.querySelector('.op-body');
    body.setAttribute('aria-busy', 'true');
    fetch(src, { headers: { Accept: 'text/html' } })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.text();
      })
      .then(function (html) {
        // Our own page, from our origin: its #op-body holds the operation's details (no scripts in it).
        var part = new DOMParser().parseFromString(html, 'text/html').getElementById('op-body');
        if (!part) throw new Error('sin detalles');
        body.replaceChildren.apply(body, Array.prototype.slice.call(part.childNodes));
        details.setAttribute('data-loaded', 'yes');
      })
      .catch(function () {
        details.removeAttribute('data-loaded'); // the link to the operation's page stays; opening again retries
      })
      .finally(function () {
        body.removeAttribute('aria-busy');
      });
  }

  document.addEventListener(
    'toggle',
    function (e) {
      var d = e.target;
      if (d instanceof HTMLDetailsElement && d.open) load(d);
    },
    true,
  );

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
