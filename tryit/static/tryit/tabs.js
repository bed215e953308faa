/* The snippets of a "Try it" block (tryit/templates/tryit/_try_it.html): the message once, as
 * tabs (JSON, curl, Python) over sections that are stacked without JavaScript, and a copy
 * button on each snippet. Keyboard: the arrow keys, Home and End move between tabs (the WAI-ARIA
 * tabs pattern). */
(function () {
  'use strict';

  var COPIED_MS = 2000;

  function select(tabs, panels, index, focus) {
    tabs.forEach(function (tab, i) {
      var chosen = i === index;
      tab.setAttribute('aria-selected', chosen ? 'true' : 'false');
      tab.tabIndex = chosen ? 0 : -1;
      panels[i].hidden = !chosen;
    });
    if (focus) { tabs[index].focus(); }
  }

  function tabbed(container) {
    var panels = Array.prototype.slice.call(container.querySelectorAll(':scope > .try-tab'));
    if (panels.length < 2) { return; }
    var list = document.createElement('div');
    list.className = 'try-tablist';
    list.setAttribute('role', 'tablist');
    list.setAttribute('aria-label', 'The message as');
    var tabs = panels.map(function (panel, index) {
      var tab = document.createElement('button');
      tab.type = 'button';
      tab.className = 'try-tab-button';
      tab.id = panel.id + '-tab';
      tab.textContent = panel.getAttribute('data-tab');
      tab.setAttribute('role', 'tab');
      tab.setAttribute('aria-controls', panel.id);
      panel.setAttribute('role', 'tabpanel');
      panel.setAttribute('aria-labelledby', tab.id);
      panel.tabIndex = 0;
      tab.addEventListener('click', function () { select(tabs, panels, index, false); });
      list.appendChild(tab);
      return tab;
    });
    list.addEventListener('keydown', function (event) {
      var current = tabs.indexOf(document.activeElement);
      if (current < 0) { return; }
      var next = {ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: tabs.length - 1}[event.key];
      if (next === undefined) { return; }
      event.preventDefault();
      select(tabs, panels, (next + tabs.length) % tabs.length, true);
    });
    container.insertBefore(list, panels[0]);
    container.classList.add('js-tabs');
    select(tabs, panels, 0, false);
  }

  function selectText(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  /* The clipboard API where the page is a secure context (https, or loopback), else the
   * selection and the browser's copy command. */
  function copy(text, source) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    selectText(source);
    return document.execCommand('copy') ? Promise.resolve() : Promise.reject(new Error('no copy'));
  }

  function copyButton(button) {
    var source = button.parentNode.querySelector('pre');
    if (!source) { return; }
    var label = button.textContent;
    button.hidden = false;
    button.setAttribute('aria-label', 'Copy the ' + (button.closest('.try-tab').getAttribute('data-tab') || 'snippet'));
    button.addEventListener('click', function () {
      copy(source.textContent, source).then(function () {
        button.textContent = 'Copied';
      }, function () {
        selectText(source);
        button.textContent = 'Selected: press Ctrl+C';
      }).then(function () {
        setTimeout(function () { button.textContent = label; }, COPIED_MS);
      });
    });
  }

  function init() {
    document.querySelectorAll('.try-tabs').forEach(tabbed);
    document.querySelectorAll('.try-copy').forEach(copyButton);
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
