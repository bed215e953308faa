/* "Try it" blocks of an agent page: wires django-jsonform's form (react-json-form, from its own
 * static files) to the message preview, the snippets, the registry's validator and the send.
 * Errors and states are said in words (words.js, window.tryItWords); the tabs and copy buttons
 * are tabs.js's. Everything from a card or an agent is written with textContent, never as HTML. */
(function () {
  'use strict';

  var JOIN = '\u00a7'; // react-json-form joins the coordinates of a field with "§"
  var VALIDATE_DELAY_MS = 300;
  var words = window.tryItWords;

  function csrfToken() {
    var input = document.querySelector('#try-it input[name=csrfmiddlewaretoken]');
    return input ? input.value : '';
  }

  function postJSON(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {'Content-Type': 'application/json', 'Accept': 'application/json', 'X-CSRFToken': csrfToken()},
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (json) { return {status: response.status, json: json}; });
    });
  }

  function withData(document, path, data) {
    var copy = JSON.parse(JSON.stringify(document));
    var node = copy;
    for (var i = 0; i < path.length - 1; i++) { node = node[path[i]]; }
    node[path[path.length - 1]] = data;
    return copy;
  }

  function fill(template, document) {
    return template.split(config_placeholder).join(JSON.stringify(document, null, 2));
  }
  var config_placeholder = '__TRYIT_BODY__';


  function Block(element) {
    this.element = element;
    this.config = JSON.parse(element.getAttribute('data-try'));
    config_placeholder = this.config.placeholder || config_placeholder;
    this.payload = this.config.payload;
    // The schema the errors are said by: the form's, or the raw one of a JSON editor.
    this.schema = this.config.schema || this.config.wordsSchema || {};
    this.form = null;
    this.timer = null;
    this.seq = 0;
    this.textarea = element.querySelector('.try-json');
    this.status = element.querySelector('.try-status');
    this.errors = element.querySelector('.try-errors');
    this.start();
  }

  Block.prototype.start = function () {
    var self = this;
    var reason = this.config.reason;
    if (!reason && this.config.schema) {
      try {
        // The library's own check of the schema: what it refuses, it cannot render.
        window.reactJsonForm.EditorState.create(this.config.schema, this.payload);
      } catch (err) {
        reason = 'the form library cannot render this schema (' + err.message + ')';
      }
    }
    if (reason) {
      this.fallback(reason);
    } else {
      this.element.classList.add('js-form');
      this.mount(this.payload);
    }
    this.textarea.addEventListener('input', function () {
      var value;
      try { value = JSON.parse(self.textarea.value); } catch (err) {
        self.problem('The text is not JSON yet: ' + err.message);
        return;
      }
      self.changed(value);
    });
    // Each example is a link to the page started from it (no JavaScript needed); here it is
    // loaded in place.
    var links = this.element.querySelectorAll('.try-example');
    links.forEach(function (link) {
      link.addEventListener('click', function (event) {
        var example = self.config.examples[Number(link.getAttribute('data-example'))];
        if (!example) { return; }
        event.preventDefault();
        links.forEach(function (other) { other.removeAttribute('aria-current'); });
        link.setAttribute('aria-current', 'true');
        self.load(example.payload);
      });
    });
    var send = this.element.querySelector('.try-send');
    if (send) { send.addEventListener('click', function () { self.send(send); }); }
    this.changed(this.payload);
  };

  Block.prototype.fallback = function (reason) {
    var note = this.element.querySelector('.try-reason');
    note.hidden = false;
    note.textContent = 'JSON editor: ' + reason + '.';
    this.element.classList.remove('js-form');
  };

  Block.prototype.mount = function (data) {
    var self = this;
    var holder = this.element.querySelector('[data-django-jsonform]');
    var container = holder.previousElementSibling;
    container.id = holder.id + '_jsonform';
    if (this.form) { window.ReactDOM.unmountComponentAtNode(container); }
    this.form = window.reactJsonForm.createForm({
      containerId: container.id,
      dataInputId: holder.id,
      schema: this.config.schema,
      data: data,
      errorMap: {},
      fileHandler: '',
      readonly: false
    });
    // The form holds "" or null for every field nobody filled in: the optional ones are left
    // out of the message (words.js).
    this.form.addEventListener('change', function (event) {
      self.changed(words.prune(event.data, self.config.schema));
    });
    this.form.render();
  };

  Block.prototype.load = function (payload) {
    this.textarea.value = JSON.stringify(payload, null, 2);
    if (this.form) { this.mount(payload); }
    this.changed(payload);
  };

  Block.prototype.changed = function (payload) {
    var self = this;
    this.payload = payload;
    var config = this.config;
    if (this.form) { this.textarea.value = JSON.stringify(payload, null, 2); }
    if (config.body) {
      var body = withData(config.body, config.dataPath, payload);
      this.element.querySelector('.try-preview').textContent = JSON.stringify(body, null, 2);
      this.element.querySelector('.try-curl').textContent = fill(config.curl, body);
    }
    var message = withData(config.sdkMessage, config.sdkPath, payload);
    this.element.querySelector('.try-python').textContent = fill(config.python, message);
    clearTimeout(this.timer);
    this.timer = setTimeout(function () { self.validate(payload); }, VALIDATE_DELAY_MS);
  };

  Block.prototype.validate = function (payload) {
    var self = this;
    var seq = ++this.seq;
    // A named schema is checked by name; a skill's inputFields by the skill (the registry
    // composes their schema).
    var body = this.config.schemaName ? {schema: this.config.schemaName, payload: payload}
      : {skill: this.config.skill, payload: payload};
    postJSON(this.config.validateUrl, body).then(function (answer) {
      if (seq !== self.seq) { return; } // a later edit was sent meanwhile
      var json = answer.json || {};
      if (answer.status !== 200) {
        self.problem('The registry could not check it: ' + (json.detail || json.title || answer.status));
        return;
      }
      self.show(json.errors || [], json.valid, json.detail);
    }).catch(function (err) {
      self.problem('The registry could not check it: ' + err.message);
    });
  };

  /* Something that is not about a field (text that is not JSON, an unreachable registry). */
  Block.prototype.problem = function (text) {
    this.errors.textContent = '';
    this.status.className = 'try-status small invalid';
    this.status.textContent = text;
    if (this.form) { this.form.update({errorMap: {}}); }
  };

  /* Each error said of its field, by its label: beside the field in the form (a missing
   * required member on the member) and in the list under it; the status line says how many. */
  Block.prototype.show = function (errors, valid, detail) {
    var errorMap = {};
    var schema = this.schema;
    this.errors.textContent = '';
    errors.forEach(function (error) {
      var said = words.errorWords(error, schema);
      var key = said.path.join(JOIN);
      (errorMap[key] = errorMap[key] || []).push(words.beside(said));
      line(this.errors, 'li', words.said(said));
    }, this);
    var against = this.config.schemaName || "the skill's inputFields";
    this.status.className = 'try-status small ' + (valid ? 'valid' : valid === false ? 'invalid' : '');
    if (valid) {
      this.status.textContent = 'Valid against ' + against + '.';
    } else if (errors.length === 1) {
      this.status.textContent = 'Not valid yet: one thing to fix.';
    } else if (errors.length) {
      this.status.textContent = 'Not valid yet: ' + errors.length + ' things to fix.';
    } else {
      this.status.textContent = detail ? detail.charAt(0).toUpperCase() + detail.slice(1) + '.' : 'Not checked.';
    }
    if (this.form) { this.form.update({errorMap: errorMap}); }
  };

  Block.prototype.send = function (button) {
    var self = this;
    var answer = this.element.querySelector('.try-answer');
    button.disabled = true;
    answer.textContent = 'Sending…';
    postJSON(this.config.sendUrl, {skill: this.config.skill, payload: this.payload}).then(function (result) {
      button.disabled = false;
      answer.textContent = '';
      self.answer(answer, result.status, result.json || {});
    }).catch(function (err) {
      button.disabled = false;
      answer.textContent = 'Not sent: ' + err.message;
    });
  };

  function line(parent, tag, text, className) {
    var node = document.createElement(tag);
    node.textContent = text;
    if (className) { node.className = className; }
    parent.appendChild(node);
    return node;
  }

  /* An agent's JSON-RPC error in words: its message and code. */
  function agentError(error) {
    if (error && typeof error === 'object' && typeof error.message === 'string') {
      return error.message + (error.code !== undefined ? ' (code ' + error.code + ')' : '');
    }
    return JSON.stringify(error);
  }

  /* Where in the agent's answer an output error is ("verdict › item 1"). */
  function answerPlace(pointer) {
    var found = words.errorWords({pointer: pointer, message: '', keyword: ''}, {});
    return found.where === 'The message' ? 'The data' : found.where;
  }

  Block.prototype.answer = function (holder, status, json) {
    if (status !== 200) {
      var refused = line(holder, 'p', 'Not sent: ' + (json.detail || json.title || 'the registry answered ' + status) + '.', 'try-refused');
      if (json.errors && json.errors.length) {
        refused.textContent = 'Not sent: the message is not valid yet.';
        var list = line(holder, 'ul', '', 'try-refused');
        var schema = this.schema;
        json.errors.forEach(function (error) { line(list, 'li', words.said(words.errorWords(error, schema))); });
      }
      return;
    }
    if (json.problem) { line(holder, 'p', 'No usable answer: ' + json.problem, 'try-refused'); }
    if (json.kind === 'task') {
      line(holder, 'p', 'Task state: ' + words.stateWords(json.state), 'try-state');
    } else if (json.kind === 'error') {
      line(holder, 'p', 'The agent answered with an error: ' + agentError(json.error), 'try-state');
    } else if (json.kind === 'message') {
      line(holder, 'p', 'The agent answered with a message.', 'try-state');
      line(holder, 'pre', JSON.stringify(json.message, null, 2));
    }
    (json.artifacts || []).forEach(function (item) {
      var box = line(holder, 'div', '', 'try-artifact');
      var verdict = '';
      if (item.schema) {
        verdict = item.valid === true ? ' · valid against ' + item.schema
          : item.valid === false ? ' · not valid against ' + item.schema : ' · schema ' + item.schema + ' not declared';
      }
      line(box, 'strong', 'Artifact ' + item.artifact + ' (' + (item.media_type || 'no media type') + ')' + verdict,
        item.valid === true ? 'try-valid' : item.valid === false ? 'try-invalid' : '');
      (item.errors || []).forEach(function (error) {
        line(box, 'p', answerPlace(error.pointer) + ': ' + error.message, 'try-invalid');
      });
      line(box, 'pre', 'data' in item ? JSON.stringify(item.data, null, 2) : (item.text || ''));
    });
  };

  function init() {
    if (!window.reactJsonForm || !words) { return; }
    document.querySelectorAll('.try-block[data-try]').forEach(function (element) { new Block(element); });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
