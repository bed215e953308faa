/* Words for people on a "Try it" page (tryit/templates/tryit/_try_it.html): a validator's error
 * said of the field it is about, by the field's label, a task's state as a word, and the
 * form's data without the optional fields nobody filled in. Used by try-it.js as
 * window.tryItWords; nothing here touches the page. */
(function () {
  'use strict';

  var MAX_DEPTH = 32;

  /* A local $ref ("#/$defs/x") followed; anything else is left as it is. */
  function resolve(schema, root) {
    for (var hops = 0; schema && typeof schema.$ref === 'string' && hops < MAX_DEPTH; hops++) {
      if (schema.$ref.charAt(0) !== '#') { return schema; }
      var node = root;
      schema.$ref.slice(1).split('/').slice(1).forEach(function (token) {
        token = token.replace(/~1/g, '/').replace(/~0/g, '~');
        node = node && typeof node === 'object' ? node[token] : undefined;
      });
      schema = node;
    }
    return schema && typeof schema === 'object' ? schema : {};
  }

  /* What the form library shows above a field: its title, else its name with "_" as spaces,
   * the first letter upper case and the rest lower case (tryit/labels.py says the same). */
  function fieldLabel(name, schema) {
    if (schema && typeof schema.title === 'string' && schema.title.trim()) { return schema.title.trim(); }
    var text = String(name).replace(/_/g, ' ');
    return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
  }

  function tokens(pointer) {
    return (pointer || '').replace(/^\/payload/, '').split('/').slice(1).map(function (token) {
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
  }

  /* The schema node at a payload pointer's tokens, and the labels of the way there
   * ("Venue › City", "Judges › item 2"). */
  function walk(root, path) {
    var node = resolve(root, root);
    var labels = [];
    path.forEach(function (token) {
      var properties = node.properties && typeof node.properties === 'object' ? node.properties : {};
      if (Object.prototype.hasOwnProperty.call(properties, token)) {
        node = resolve(properties[token], root);
        labels.push(fieldLabel(token, node));
      } else if (/^\d+$/.test(token) && node.items) {
        node = resolve(node.items, root);
        labels.push('item ' + (Number(token) + 1));
      } else {
        node = {};
        labels.push(/^\d+$/.test(token) ? 'item ' + (Number(token) + 1) : token);
      }
    });
    return {node: node, labels: labels};
  }

  function quoted(value) {
    return typeof value === 'string' ? value : JSON.stringify(value);
  }

  var TYPES = {
    string: 'text', integer: 'a whole number', number: 'a number', boolean: 'true or false',
    object: 'a group of fields', array: 'a list', 'null': 'empty (null)'
  };

  function count(n, one, many) { return n === 1 ? 'one ' + one : n + ' ' + many; }

  /* The types a validator's message names ('7 is not of type "string"'), for a keyword that
   * sits under allOf or anyOf rather than on the field's own schema. */
  function typesIn(message) {
    var found = /is not of types? (.*)$/.exec(message || '');
    return found ? found[1].match(/[a-z]+/g) || [] : [];
  }

  /* What is wrong, said of the field ("must not be empty"); null when only the validator's own
   * message can say it. */
  function sentence(keyword, node, message) {
    var value = node[keyword];
    if (keyword === 'type' && value === undefined) { value = typesIn(message); }
    if (value === undefined && keyword !== 'uniqueItems' && keyword !== 'anyOf' &&
        keyword !== 'oneOf' && keyword !== 'not') {
      return null;
    }
    switch (keyword) {
      case 'minimum': return 'must be at least ' + value;
      case 'maximum': return 'must be at most ' + value;
      case 'exclusiveMinimum': return 'must be more than ' + value;
      case 'exclusiveMaximum': return 'must be less than ' + value;
      case 'multipleOf': return 'must be a multiple of ' + value;
      case 'minLength': return value === 1 ? 'must not be empty' : 'must be at least ' + value + ' characters long';
      case 'maxLength': return 'must be at most ' + count(value, 'character', 'characters') + ' long';
      case 'pattern': return 'must match the pattern ' + value;
      case 'format': return 'must be a valid ' + value;
      case 'type':
        return 'must be ' + [].concat(value || []).map(function (t) { return TYPES[t] || t; }).join(' or ');
      case 'enum': return 'must be one of: ' + [].concat(value || []).map(quoted).join(', ');
      case 'const': return 'must be exactly ' + quoted(value);
      case 'minItems': return 'needs at least ' + count(value, 'item', 'items');
      case 'maxItems': return 'may have at most ' + count(value, 'item', 'items');
      case 'uniqueItems': return 'must not list the same item twice';
      case 'minProperties': return 'needs at least ' + count(value, 'field', 'fields');
      case 'maxProperties': return 'may have at most ' + count(value, 'field', 'fields');
      case 'anyOf': return 'does not match any of the forms the schema allows';
      case 'oneOf': return 'must match exactly one of the forms the schema allows';
      case 'not': return 'holds a value the schema does not allow';
      default: return null;
    }
  }

  function errorWords(error, schema) {
    var path = tokens(error.pointer);
    var message = error.message || '';
    var keyword = error.keyword || '';
    var missing = keyword === 'required' && /^"(.*)" is a required property$/.exec(message);
    if (missing) {
      path.push(missing[1]);
      var field = walk(schema || {}, path);
      return {path: path, where: field.labels.join(' › '), text: 'is required'};
    }
    var found = walk(schema || {}, path);
    var where = found.labels.join(' › ');
    var extra = keyword === 'additionalProperties' && /\((.*) (?:was|were) unexpected\)/.exec(message);
    if (extra) {
      return {path: path, where: where || 'The message', text: 'has fields the schema does not allow: ' + extra[1].replace(/'/g, '')};
    }
    var text = sentence(keyword, found.node, message);
    if (!where) { where = 'The message'; }
    if (text === null) {
      // Only the validator's message says it: given as it is, after the field's label.
      return {path: path, where: where, text: message || 'is not valid', quoted: true};
    }
    return {path: path, where: where, text: text};
  }

  function stop(text) {
    return /[.!?]$/.test(text) ? text : text + '.';
  }

  /* "Rounds must be at most 12." */
  function said(words) {
    return stop(words.where + (words.quoted ? ': ' : ' ') + words.text);
  }

  /* Beside the field itself: "Must be at most 12." */
  function beside(words) {
    return stop(words.text.charAt(0).toUpperCase() + words.text.slice(1));
  }

  /* TASK_STATE_INPUT_REQUIRED (v1.0) or input-required (v0.3): "Input required". */
  function stateWords(state) {
    var text = String(state || '').replace(/^TASK_STATE_/, '').replace(/[_-]+/g, ' ').toLowerCase().trim();
    return text ? text.charAt(0).toUpperCase() + text.slice(1) : 'Unknown';
  }

  /* Nothing filled in: "", null, an empty list, or a group whose fields are all blank. */
  function blank(value) {
    if (value === '' || value === null || value === undefined) { return true; }
    if (Array.isArray(value)) { return value.length === 0; }
    return typeof value === 'object' && Object.keys(value).every(function (key) { return blank(value[key]); });
  }

  /* The form's data without the optional members left empty: the form library holds "" for a
   * text field, null for a number or a choice and [] for a list nobody filled in, and an
   * optional field with a minLength or a pattern would fail on them. Required members stay,
   * empty or not, so the validator says they are missing. */
  function prune(value, schema, root, depth) {
    root = root || schema || {};
    depth = depth || 0;
    if (depth > MAX_DEPTH) { return value; }
    var node = resolve(schema, root);
    if (Array.isArray(value)) {
      return value.map(function (item) { return prune(item, node.items || {}, root, depth + 1); });
    }
    if (!value || typeof value !== 'object') { return value; }
    var properties = node.properties && typeof node.properties === 'object' ? node.properties : {};
    var required = Array.isArray(node.required) ? node.required : [];
    var out = {};
    Object.keys(value).forEach(function (key) {
      var declared = Object.prototype.hasOwnProperty.call(properties, key);
      var child = declared ? prune(value[key], properties[key], root, depth + 1) : value[key];
      if (declared && required.indexOf(key) < 0 && blank(child)) { return; }
      out[key] = child;
    });
    return out;
  }

  window.tryItWords = {
    fieldLabel: fieldLabel,
    errorWords: errorWords,
    said: said,
    beside: beside,
    stateWords: stateWords,
    prune: prune
  };
})();
