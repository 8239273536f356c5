// The lookup page: calls the public API (/api/phone/{number}) and renders the report.
// Plain browser JavaScript, no build step, no framework. Every piece of data from the API –
// scraped comments above all – reaches the page through textContent or element attributes set
// from fixed values, never parsed as HTML, so a hostile comment stays text.
'use strict';

(function main() {
  var form = document.getElementById('lookup-form');
  var input = document.getElementById('number-input');
  var button = document.getElementById('lookup-button');
  var statusLine = document.getElementById('status');
  var reportSection = document.getElementById('report');

  var SLOT_TITLES = { primary: 'Primary (tellows)', community: 'Community (numeroinconnu.fr)', signals: 'Signals (telguarder)' };
  var RISK_TEXT = {
    trustworthy: 'Trustworthy',
    neutral: 'Neutral',
    suspicious: 'Suspicious',
    unknown: 'Unknown: no source has a rating',
  };
  var REASON_TEXT = {
    timeout: 'did not answer in time',
    connection: 'could not be reached',
    http_5xx: 'had a server error',
    http_status: 'answered with an unexpected status',
    too_large: 'sent a page too large to read',
    redirect: 'redirected somewhere unexpected',
    decoding: 'sent a page we could not decode',
    invalid_json: 'sent data we could not read',
    parse: 'sent a page we could not read',
    auth: 'refused our API key',
    circuit_open: 'is failing; paused for a moment',
    aborted: 'was cancelled',
    http_403: 'refused us (403); paused',
    http_429: 'asked us to slow down (429); paused',
    challenge: 'answered with a captcha',
    paused: 'is paused after refusing us',
    budget: 'request budget exhausted for this minute',
  };

  function $(id) {
    return document.getElementById(id);
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // The status line only says that a lookup is under way; it keeps its height when idle.
  function showStatus(message) {
    statusLine.textContent = message;
    statusLine.className = 'status';
  }

  function hideStatus() {
    statusLine.textContent = '';
    statusLine.className = 'status status-idle';
  }

  // Which cards of the results region are shown. An error shows #problem, optionally below the
  // number's facts (the facts card comes first in the markup) when the answer carried them.
  function showCards(cards) {
    $('verdict-card').hidden = !cards.verdict;
    $('facts-card').hidden = !cards.facts;
    $('problem').hidden = !cards.problem;
    $('sources').hidden = !cards.sources;
    if (!cards.failures) $('failures').hidden = true;
    reportSection.hidden = false;
  }

  // `facts` ({ number, phoneInfo }) is set when the error answer still carried the number's
  // facts (a 502: the sources failed, the numbering plan did not); `reasons` are the per-source
  // failure reasons of that answer, listed below the problem.
  function showProblem(problem, facts, reasons) {
    hideStatus();
    $('problem-title').textContent = problem.title;
    $('problem-text').textContent = problem.text;
    $('problem').className = 'card problem' + (problem.kind === 'warn' ? ' problem-warn' : '');
    if (facts) renderFacts(facts);
    if (reasons) renderFailures(reasons);
    showCards({ facts: Boolean(facts), problem: true, failures: Boolean(reasons) });
    document.title = facts ? facts.number + ' – Phone reputation' : 'Phone reputation lookup';
  }

  // The score rule of the score endpoint, applied here so one search costs one API request:
  // the primary score, else the mean of community dangerPercent and signals spamScore mapped
  // to 1–9 as 1 + round(p × 8 / 100), else none.
  function computeScore(sources) {
    if (typeof sources.primary.score === 'number') return { score: sources.primary.score, from: 'primary' };
    var percents = [sources.community.dangerPercent, sources.signals.spamScore].filter(function (p) {
      return typeof p === 'number' && isFinite(p);
    });
    if (percents.length === 0) return { score: null, from: null };
    var mean = percents.reduce(function (a, b) { return a + b; }, 0) / percents.length;
    var clamped = Math.min(100, Math.max(0, mean));
    return { score: 1 + Math.round((clamped * 8) / 100), from: 'derived' };
  }

  function scoreToRisk(score) {
    if (score === null) return 'unknown';
    var rounded = Math.round(score);
    if (rounded <= 4) return 'trustworthy';
    if (rounded === 5) return 'neutral';
    return 'suspicious';
  }

  function renderVerdict(sources) {
    var computed = computeScore(sources);
    var risk = scoreToRisk(computed.score);
    var card = $('verdict-card');
    card.className = 'card verdict risk-' + risk;
    $('score-value').textContent = computed.score === null ? '–' : String(computed.score);
    $('risk-label').textContent = RISK_TEXT[risk];
    $('score-source').textContent =
      computed.from === 'primary' ? 'Score from the primary source.'
        : computed.from === 'derived' ? 'Score derived from the community and signals percentages.'
          : '';
    var cells = $('gauge').querySelectorAll('.gauge-cell');
    for (var i = 0; i < cells.length; i += 1) {
      var step = Number(cells[i].getAttribute('data-step'));
      cells[i].classList.toggle('active', computed.score !== null && step === Math.round(computed.score));
      cells[i].classList.toggle('filled', computed.score !== null && step <= Math.round(computed.score));
    }
    $('gauge').setAttribute('aria-label', computed.score === null ? 'No score' : 'Score ' + computed.score + ' of 9, ' + risk);
  }

  function orDash(value) {
    return value === '' || value === null || value === undefined ? '—' : String(value);
  }

  function renderFacts(report) {
    var info = report.phoneInfo;
    $('fact-national').textContent = orDash(info.national);
    $('fact-e164').textContent = orDash(info.e164);
    $('fact-type').textContent = orDash(info.type).replace(/_/g, ' ');
    $('fact-range').textContent = orDash(info.rangeLabel);
    $('fact-carrier').textContent = orDash(info.originalCarrier);
    $('fact-region').textContent = orDash(info.region);
    $('npv-badge').hidden = info.isNPV !== true;
  }

  function describeOutcome(meta) {
    if (!meta) return 'unknown';
    var reason = meta.reason ? REASON_TEXT[meta.reason] || meta.reason : '';
    if (meta.status === 'ok') return meta.cache === 'stale' ? 'ok (older copy' + (reason ? '; source ' + reason : '') + ')' : 'ok';
    if (meta.status === 'not_found') return 'no entry for this number';
    return (meta.status === 'blocked' ? 'blocked' : 'error') + (reason ? ': ' + reason : '');
  }

  function figure(label, value) {
    var item = el('div', 'figure');
    item.appendChild(el('span', 'figure-value', orDash(value)));
    item.appendChild(el('span', 'figure-label', label));
    return item;
  }

  function commentItem(comment, tagText, author) {
    var item = el('li', 'comment');
    var head = el('div', 'comment-head');
    if (comment.date) head.appendChild(el('time', 'comment-date', comment.date));
    if (author) head.appendChild(el('span', 'comment-author', author));
    if (tagText) head.appendChild(el('span', 'badge comment-tag', tagText));
    item.appendChild(head);
    item.appendChild(el('p', 'comment-text', comment.text));
    return item;
  }

  function renderSource(slot, data, meta) {
    var card = el('article', 'card source source-' + (meta ? meta.status : 'unknown'));
    card.setAttribute('data-slot', slot);
    var header = el('header', 'source-head');
    header.appendChild(el('h2', null, SLOT_TITLES[slot]));
    header.appendChild(el('span', 'badge badge-' + (meta ? meta.status : 'unknown'), describeOutcome(meta)));
    card.appendChild(header);

    var figures = el('div', 'figures');
    var comments = el('ul', 'comments');
    if (slot === 'primary') {
      figures.appendChild(figure('score', data.score));
      figures.appendChild(figure('searches', data.searches));
      figures.appendChild(figure('comments', data.commentsCount));
      data.commentList.forEach(function (c) { comments.appendChild(commentItem(c, c.callerType, c.author)); });
    } else if (slot === 'community') {
      figures.appendChild(figure('danger', data.dangerPercent === null ? null : data.dangerPercent + ' %'));
      figures.appendChild(figure('visits', data.visits));
      figures.appendChild(figure('comments', data.commentsCount));
      figures.appendChild(figure('top category', data.topCategory));
      figures.appendChild(figure('last comment', data.lastCommentDate));
      data.commentList.forEach(function (c) { comments.appendChild(commentItem(c, c.category, '')); });
    } else {
      figures.appendChild(figure('spam score', data.spamScore === null ? null : data.spamScore + ' %'));
      figures.appendChild(figure('reports', data.reportsCount));
      figures.appendChild(figure('caller type', data.callerType));
      (data.commentList || []).forEach(function (c) { comments.appendChild(commentItem(c, c.callerType, '')); });
    }
    card.appendChild(figures);
    if (comments.childNodes.length > 0) card.appendChild(comments);
    else if (meta && meta.status === 'ok') card.appendChild(el('p', 'muted', 'No comments.'));
    return card;
  }

  function renderFailures(metaSources) {
    var list = $('failure-list');
    list.replaceChildren();
    var any = false;
    ['primary', 'community', 'signals'].forEach(function (slot) {
      var meta = metaSources && metaSources[slot];
      if (!meta || meta.status === 'ok' || meta.status === 'not_found') return;
      any = true;
      var item = el('li', null);
      item.appendChild(el('strong', null, SLOT_TITLES[slot]));
      item.appendChild(document.createTextNode(' ' + describeOutcome(meta)));
      list.appendChild(item);
    });
    $('failures').hidden = !any;
  }

  function renderReport(body) {
    var report = body.data;
    var metaSources = body.meta && body.meta.sources;
    renderVerdict(report.sources);
    renderFacts(report);
    renderFailures(metaSources);
    var container = $('sources');
    container.replaceChildren();
    ['primary', 'community', 'signals'].forEach(function (slot) {
      container.appendChild(renderSource(slot, report.sources[slot], metaSources && metaSources[slot]));
    });
    showCards({ verdict: true, facts: true, sources: true, failures: true });
    document.title = report.number + ' – Phone reputation';
  }

  function retryAfterSeconds(response) {
    var value = Number(response.headers.get('Retry-After'));
    return isFinite(value) && value > 0 ? Math.ceil(value) : null;
  }

  function describeError(response) {
    if (response.status === 400) {
      return { title: 'Not a phone number we can read', text: 'Invalid phone number format. Try 06 12 34 56 78 or +33 6 12 34 56 78.', kind: 'error' };
    }
    if (response.status === 429) {
      var seconds = retryAfterSeconds(response);
      return { title: 'Slow down', text: 'Too many requests — retry in ' + (seconds === null ? 'a moment' : seconds + ' s') + '.', kind: 'warn' };
    }
    if (response.status === 502) {
      return { title: 'No source could answer', text: 'All data sources failed. The reputation sites could not be reached; try again later.', kind: 'error' };
    }
    if (response.status === 503) return { title: 'Service busy', text: 'The service is restarting; try again in a moment.', kind: 'warn' };
    return { title: 'Something went wrong', text: 'Something went wrong (HTTP ' + response.status + '). Try again later.', kind: 'error' };
  }

  var PHONE_INFO_TEXT_FIELDS = ['national', 'e164', 'type', 'rangeLabel', 'originalCarrier', 'region'];

  // The number's facts of a 502 problem body, or null when the body does not carry them whole.
  function factsOfProblem(body) {
    if (!body || typeof body !== 'object' || typeof body.number !== 'string') return null;
    var info = body.phoneInfo;
    if (!info || typeof info !== 'object' || typeof info.isNPV !== 'boolean') return null;
    for (var i = 0; i < PHONE_INFO_TEXT_FIELDS.length; i += 1) {
      if (typeof info[PHONE_INFO_TEXT_FIELDS[i]] !== 'string') return null;
    }
    return { number: body.number, phoneInfo: info };
  }

  // The 502 body's `sources` (slot -> reason) in the shape renderFailures reads, or null.
  function failureReasonsOfProblem(body) {
    if (!body || typeof body !== 'object' || !body.sources || typeof body.sources !== 'object') return null;
    var reasons = {};
    var any = false;
    ['primary', 'community', 'signals'].forEach(function (slot) {
      var reason = body.sources[slot];
      if (typeof reason !== 'string') return;
      reasons[slot] = { status: 'error', reason: reason };
      any = true;
    });
    return any ? reasons : null;
  }

  var currentRequest = 0;

  function lookup(raw) {
    var number = raw.trim();
    if (number === '') {
      showProblem({ title: 'No number yet', text: 'Type a phone number first.', kind: 'error' });
      return;
    }
    var url = new URL(window.location.href);
    url.search = '';
    url.searchParams.set('number', number);
    window.history.replaceState(null, '', url.pathname + url.search);

    currentRequest += 1;
    var requestId = currentRequest;
    button.disabled = true;
    reportSection.setAttribute('aria-busy', 'true');
    showStatus('Looking up…');
    fetch('/api/phone/' + encodeURIComponent(number), { headers: { Accept: 'application/json' } })
      .then(function (response) {
        if (response.status === 502) {
          return response.json().catch(function () { return null; }).then(function (body) {
            if (requestId !== currentRequest) return;
            showProblem(describeError(response), factsOfProblem(body), failureReasonsOfProblem(body));
          });
        }
        if (!response.ok) {
          if (requestId !== currentRequest) return;
          showProblem(describeError(response));
          return;
        }
        return response.json().then(function (body) {
          if (requestId !== currentRequest) return;
          hideStatus();
          renderReport(body);
        });
      })
      .catch(function () {
        if (requestId !== currentRequest) return;
        showProblem({ title: 'Service unreachable', text: 'The service could not be reached. Check your connection and try again.', kind: 'error' });
      })
      .finally(function () {
        if (requestId !== currentRequest) return;
        button.disabled = false;
        reportSection.removeAttribute('aria-busy');
      });
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    lookup(input.value);
  });

  var initial = new URLSearchParams(window.location.search).get('number');
  if (initial) {
    input.value = initial;
    lookup(initial);
  }
})();
