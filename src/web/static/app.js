// The lookup page: calls the public API (/api/phone/{number}) and renders the report.
// Plain browser JavaScript, no build step, no framework. Every piece of data from the API –
// scraped comments above all – reaches the page through textContent or element attributes set
// from fixed values, never parsed as HTML, so a hostile comment stays text.
// Every fixed word comes from the wording catalogue (src/domain/wording/catalogue.ts), which the
// server inlines as JSON in the language it chose (#page-words); this file holds no words of
// its own. The same block carries the slot display table (src/domain/slot-display.ts): each
// slot's title, figures with their units and comment tags, so this file names no slot or field,
// and the score, the risk and where the score came from are the server's (the report's meta). What a source wrote (comments, categories, caller types) and what the numbering data
// names (carriers, foreign countries) is shown as given, in elements marked `data-upstream`.
'use strict';

(function main() {
  var form = document.getElementById('lookup-form');
  var input = document.getElementById('number-input');
  var button = document.getElementById('lookup-button');
  var statusLine = document.getElementById('status');
  var reportSection = document.getElementById('report');

  var PAGE = JSON.parse(document.getElementById('page-words').textContent);
  var WORDS = PAGE.words;
  var SLOT_DISPLAY = PAGE.slots;
  var SLOTS = SLOT_DISPLAY.map(function (display) {
    return display.slot;
  });
  var PLURALS = new Intl.PluralRules(PAGE.language);
  var LANGUAGE_COOKIE = 'lang';
  var ONE_YEAR_S = 365 * 24 * 3600;

  // The catalogue's words() rule: `{name}` is replaced by params[name]; a placeholder without a
  // value is left out with the space before it.
  function t(key, params) {
    var text = WORDS[key];
    if (typeof text !== 'string') return key;
    var values = params || {};
    return text
      .replace(/ ?\{(\w+)\}/g, function (whole, name) {
        var value = values[name];
        if (value === undefined || value === null || value === '') return '';
        return whole.charAt(0) === ' ' ? ' ' + value : String(value);
      })
      .trim();
  }

  // The catalogue's countWords() rule: the key of the count's plural category
  // (`figure.comments#one`), else its `#other` form, with `{count}` filled.
  function countWords(key, count, params) {
    var chosen = key + '#' + PLURALS.select(count);
    var values = { count: count };
    Object.keys(params || {}).forEach(function (name) {
      values[name] = params[name];
    });
    return t(has(chosen) ? chosen : key + '#other', values);
  }

  function has(key) {
    return typeof WORDS[key] === 'string';
  }

  function $(id) {
    return document.getElementById(id);
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // An element holding what a source or the numbering data wrote, shown as it came.
  function upstream(tag, className, text) {
    var node = el(tag, className, text);
    node.setAttribute('data-upstream', '');
    return node;
  }

  // ---- The FR/EN switch: a link that works without script (`?lang=`, for that view), and
  // with script a choice remembered in a cookie, which the server reads to send the page in
  // that language on the next visit, before any script runs.
  Array.prototype.forEach.call(document.querySelectorAll('.language-switch a[data-lang]'), function (link) {
    link.addEventListener('click', function (event) {
      event.preventDefault();
      var language = link.getAttribute('data-lang');
      document.cookie = LANGUAGE_COOKIE + '=' + language + '; path=/; max-age=' + ONE_YEAR_S + '; SameSite=Lax';
      var url = new URL(window.location.href);
      // Where cookies are refused the choice cannot be remembered: it then stays in the address.
      var remembered =
        (';' + document.cookie.replace(/\s/g, '') + ';').indexOf(';' + LANGUAGE_COOKIE + '=' + language + ';') >= 0;
      if (remembered) url.searchParams.delete('lang');
      else url.searchParams.set('lang', language);
      window.location.assign(url.pathname + url.search);
    });
  });

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
    $('advice').hidden = !cards.advice;
    $('sources').hidden = !cards.sources;
    if (!cards.failures) $('failures').hidden = true;
    reportSection.classList.toggle('with-verdict', Boolean(cards.verdict));
    reportSection.classList.toggle('with-problem', Boolean(cards.problem));
    reportSection.hidden = false;
  }

  // ---- Dates: the sources write DD/MM/YYYY; the page says how long ago, in its language.
  var DAY_MS = 24 * 3600 * 1000;

  function parseDayMonthYear(text) {
    var match = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text || '');
    if (!match) return null;
    var date = new Date(Number(match[3]), Number(match[2]) - 1, Number(match[1]));
    // 31/02 would roll over to March: a date that is not a real day is not read.
    if (isNaN(date.getTime()) || date.getDate() !== Number(match[1]) || date.getMonth() !== Number(match[2]) - 1)
      return null;
    return date;
  }

  function relativeDate(date) {
    var today = new Date();
    today.setHours(0, 0, 0, 0);
    var days = Math.round((today.getTime() - date.getTime()) / DAY_MS);
    if (days < 0) return null;
    if (days === 0) return t('date.today');
    if (days === 1) return t('date.yesterday');
    if (days < 31) return countWords('date.days', days);
    var months = Math.max(1, Math.floor(days / 30.44));
    if (months < 12) return countWords('date.months', months);
    return countWords('date.years', Math.max(1, Math.floor(days / 365.25)));
  }

  // A <time> saying "3 days ago", with the date itself in its datetime and title.
  function dateElement(className, text) {
    var date = parseDayMonthYear(text);
    var relative = date === null ? null : relativeDate(date);
    // A date the page cannot read, or one in the future, is shown as the source wrote it.
    if (date === null || relative === null) return upstream('span', className, text);
    var node = el('time', className, relative);
    var iso = text.slice(6, 10) + '-' + text.slice(3, 5) + '-' + text.slice(0, 2);
    node.setAttribute('datetime', iso);
    node.setAttribute('title', date.toLocaleDateString(PAGE.language));
    return node;
  }

  // ---- Verdict and what to do

  // Why there is no score, read from meta.sources as the server's sourceCheckOf reads the slots
  // (src/domain/report-builder.ts): 'answered' (a source gave a record or said it has none),
  // 'notCovered' (no source was asked: none covers the number), else 'notChecked' (every source
  // asked failed or is still on its way). Each has its own words, none of them "Inconnu", which a
  // French phone shows for a withheld caller.
  function checkOf(metaSources) {
    var answered = false;
    var asked = false;
    SLOTS.forEach(function (slot) {
      var meta = metaSources && metaSources[slot];
      var status = meta && meta.status;
      if (status === 'ok' || status === 'not_found') answered = true;
      if (status !== 'skipped') asked = true;
    });
    if (answered) return 'answered';
    return asked ? 'notChecked' : 'notCovered';
  }

  // The score, its risk and where it came from are the server's (the full report's meta): the
  // page shows them and never computes them.
  function renderVerdict(meta) {
    var score = typeof meta.score === 'number' ? meta.score : null;
    var risk = typeof meta.risk === 'string' && has('risk.' + meta.risk) ? meta.risk : 'unknown';
    var check = checkOf(meta.sources);
    var card = $('verdict-card');
    card.className = 'card verdict risk-' + risk;
    $('score-value').textContent = score === null ? '–' : String(score);
    $('risk-label').textContent = risk === 'unknown' && check !== 'answered' ? t('risk.' + check) : t('risk.' + risk);
    $('score-source').textContent =
      meta.scoreSource === 'primary'
        ? t('verdict.fromPrimary')
        : meta.scoreSource === 'derived'
          ? t('verdict.derived')
          : check === 'answered'
            ? t('verdict.noRating')
            : t('verdict.' + check);
    var cells = $('gauge').querySelectorAll('.gauge-cell');
    for (var i = 0; i < cells.length; i += 1) {
      var step = Number(cells[i].getAttribute('data-step'));
      cells[i].classList.toggle('active', score !== null && step === score);
      cells[i].classList.toggle('filled', score !== null && step <= score);
    }
    $('gauge').setAttribute(
      'aria-label',
      score === null ? t('gauge.none') : t('gauge.value', { score: score, risk: t('risk.' + risk) }),
    );
    return risk;
  }

  // How many of the sources asked gave an answer (a record or "no record"); a source that was
  // not asked (skipped: it does not cover the number) is not counted either way.
  function confidenceSentence(metaSources) {
    var total = 0;
    var answered = 0;
    SLOTS.forEach(function (slot) {
      var meta = metaSources && metaSources[slot];
      if (meta && meta.status === 'skipped') return;
      total += 1;
      if (meta && (meta.status === 'ok' || meta.status === 'not_found')) answered += 1;
    });
    if (total === 0) return '';
    if (answered === 0) return t('advice.answeredNone', { total: total });
    return countWords('advice.answered', answered, { total: total });
  }

  // `risk` is the verdict's risk; without a score, the advice says why (checkOf).
  // `hints`: meta.hints (a 502 has none): the call-centre and legal-hours paragraphs.
  function renderAdvice(risk, isNPV, metaSources, hints) {
    var check = checkOf(metaSources);
    $('advice-text').textContent =
      risk === 'unknown' && check !== 'answered' ? t('advice.' + check) : t('advice.' + risk);
    $('advice-npv').hidden = isNPV !== true;
    $('advice-call-centre').hidden = !hasHint(hints, 'call_centre_operator');
    $('advice-outside-hours').hidden = !hasHint(hints, 'outside_legal_hours');
    var confidence = confidenceSentence(metaSources);
    $('advice-confidence').textContent = confidence;
    $('advice-confidence').hidden = confidence === '';
  }

  // ---- The number's facts

  function orDash(value) {
    return value === '' || value === null || value === undefined ? '—' : String(value);
  }

  // phoneInfo.type in words; a French 09 number is "non-geographic", and ARCEP's technical
  // platforms (meta.hints) say so.
  function lineTypeWords(info, hints) {
    if (hints && hints.indexOf('technical_platform') >= 0) return t('line.technicalPlatform');
    if (info.type === 'voip' && /^\+339/.test(info.e164 || '')) return t('line.nonGeographic');
    return has('line.' + info.type) ? t('line.' + info.type) : t('line.unknown');
  }

  function setFact(id, node) {
    var cell = $(id);
    cell.replaceChildren(node);
  }

  function renderFacts(report, hints) {
    var info = report.phoneInfo;
    $('fact-national').textContent = orDash(info.national);
    $('fact-e164').textContent = orDash(info.e164);
    $('fact-type').textContent = lineTypeWords(info, hints);
    $('fact-npv').textContent = info.isNPV === true ? t('facts.yes') : t('facts.no');
    $('fact-carrier').textContent = orDash(info.originalCarrier);
    // French-plan regions are in the catalogue; a foreign country's name is the numbering
    // data's, shown as it came.
    if (info.region && has('region.' + info.region))
      setFact('fact-region', document.createTextNode(t('region.' + info.region)));
    else if (info.region) setFact('fact-region', upstream('span', null, info.region));
    else setFact('fact-region', document.createTextNode('—'));
    $('npv-badge').hidden = info.isNPV !== true;
    $('platform-badge').hidden = !hasHint(hints, 'technical_platform');
    $('call-centre-badge').hidden = !hasHint(hints, 'call_centre_operator');
    $('outside-hours-badge').hidden = !hasHint(hints, 'outside_legal_hours');
  }

  function hasHint(hints, hint) {
    return Boolean(hints) && hints.indexOf(hint) >= 0;
  }

  // ---- Sources

  function describeOutcome(meta) {
    if (!meta || typeof meta.status !== 'string') return t('status.unknown');
    var reason = meta.reason ? (has('reason.' + meta.reason) ? t('reason.' + meta.reason) : t('reason.unknown')) : '';
    switch (meta.status) {
      case 'ok':
        if (meta.cache !== 'stale') return t('status.ok');
        return reason ? t('status.okStaleReason', { reason: reason }) : t('status.okStale');
      case 'not_found':
        return t('status.not_found');
      case 'pending':
        return t('status.pending');
      case 'blocked':
      case 'error':
      case 'skipped':
        return reason ? t('status.' + meta.status + 'Reason', { reason: reason }) : t('status.' + meta.status);
      default:
        return t('status.unknown');
    }
  }

  // One figure of a slot, written by its unit (the slot display table): a score as it is, a
  // percentage with the catalogue's format, a count with the label of its plural, a word or a
  // date as the source wrote it.
  function figure(display, value) {
    var item = el('div', 'figure');
    var missing = value === null || value === undefined || value === '';
    var label =
      display.unit === 'count' ? countWords(display.label, typeof value === 'number' ? value : 0) : t(display.label);
    if (missing) item.appendChild(el('span', 'figure-value', '—'));
    else if (display.unit === 'word') item.appendChild(upstream('span', 'figure-value', value));
    else if (display.unit === 'date') item.appendChild(dateElement('figure-value', value));
    else if (display.unit === 'percent')
      item.appendChild(el('span', 'figure-value', t('format.percent', { value: value })));
    else item.appendChild(el('span', 'figure-value', String(value)));
    item.appendChild(el('span', 'figure-label', label));
    return item;
  }

  function commentItem(comment, tagText, author) {
    var item = el('li', 'comment');
    var head = el('div', 'comment-head');
    if (comment.date) head.appendChild(dateElement('comment-date', comment.date));
    if (author) head.appendChild(upstream('span', 'comment-author', author));
    if (tagText) head.appendChild(upstream('span', 'badge comment-tag', tagText));
    item.appendChild(head);
    item.appendChild(upstream('p', 'comment-text', comment.text));
    return item;
  }

  function renderSource(display, data, meta) {
    var status = meta && typeof meta.status === 'string' ? meta.status : 'unknown';
    var card = el('article', 'card source source-' + status);
    card.setAttribute('data-slot', display.slot);
    var header = el('header', 'source-head');
    header.appendChild(el('h2', null, t(display.title)));
    header.appendChild(el('span', 'badge badge-' + status, describeOutcome(meta)));
    card.appendChild(header);

    var figures = el('div', 'figures');
    display.figures.forEach(function (shown) {
      figures.appendChild(figure(shown, data[shown.field]));
    });
    var comments = el('ul', 'comments');
    (data.commentList || []).forEach(function (c) {
      comments.appendChild(
        commentItem(c, c[display.comment.tag], display.comment.author ? c[display.comment.author] : ''),
      );
    });
    card.appendChild(figures);
    if (comments.childNodes.length > 0) card.appendChild(comments);
    else if (status === 'ok') card.appendChild(el('p', 'muted', t('comments.none')));
    return card;
  }

  // The sources that could not answer, and why; a source still on its way, or not asked
  // because it does not cover the number, has its badge on its card and is not a failure.
  function renderFailures(metaSources) {
    var list = $('failure-list');
    list.replaceChildren();
    var any = false;
    SLOT_DISPLAY.forEach(function (display) {
      var meta = metaSources && metaSources[display.slot];
      if (!meta || (meta.status !== 'blocked' && meta.status !== 'error')) return;
      any = true;
      var item = el('li', null);
      item.appendChild(el('strong', null, t(display.title)));
      item.appendChild(document.createTextNode(' '));
      item.appendChild(el('span', null, describeOutcome(meta)));
      list.appendChild(item);
    });
    $('failures').hidden = !any;
  }

  // The operator's allow or block rule (meta.list of a report or of a 502): it decides the
  // phone systems' answers whatever the sources say, so it comes first in the results. Returns
  // whether a rule is shown.
  function renderOperatorList(list) {
    var line = $('operator-list');
    var shown = Boolean(list && typeof list.rule === 'string' && (list.list === 'allow' || list.list === 'block'));
    if (!shown) {
      line.hidden = true;
      line.textContent = '';
      return false;
    }
    var words = list.list === 'block' ? t('list.block', { rule: list.rule }) : t('list.allow', { rule: list.rule });
    line.textContent =
      typeof list.label === 'string' && list.label !== ''
        ? words + ' ' + t('list.label', { label: list.label })
        : words;
    line.className = 'card operator-list operator-list-' + list.list;
    line.hidden = false;
    return true;
  }

  // Ties between equally reported spam ratings name the more alarming one, as the server's
  // `/cid` line does (src/domain/verdict.ts SPAM_RATING_ORDER).
  var SPAM_RATINGS = ['fraud', 'gamble', 'ping', 'advertising', 'poll', 'political', 'other'];

  // What people of this deployment reported (meta.reports), after the operator's rule: how many
  // reported the number as unwanted (and what most of them said) or as trustworthy, and what
  // becomes of its calls when no rule of the operator decides. Returns whether it is shown.
  function renderCallerReports(reports, listed) {
    var line = $('caller-reports');
    var categories = reports && typeof reports.categories === 'object' && reports.categories ? reports.categories : {};
    var spam = 0;
    var top = null;
    SPAM_RATINGS.forEach(function (rating) {
      var count = typeof categories[rating] === 'number' ? categories[rating] : 0;
      spam += count;
      if (count > 0 && (top === null || count > categories[top])) top = rating;
    });
    var legitimate = typeof categories.legitimate === 'number' ? categories.legitimate : 0;
    var verdict = reports && typeof reports.verdict === 'string' ? reports.verdict : null;
    var text = '';
    if (verdict !== null && verdict !== 'legitimate' && spam > 0) {
      text = countWords('reports.spam', spam, { category: t('report.' + top) });
      if (!listed && verdict === 'spam') text += ' ' + t('reports.blocked');
      if (!listed && verdict === 'suspect') text += ' ' + t('reports.warned');
    } else if (verdict !== null && legitimate > 0) {
      text = countWords('reports.legitimate', legitimate);
    }
    line.textContent = text;
    line.className = 'card caller-reports' + (verdict === null ? '' : ' caller-reports-' + verdict);
    line.hidden = text === '';
    return text !== '';
  }

  // The operator's rule, then the reports: both first in the results. Returns whether a rule is shown.
  function renderDecisions(list, reports) {
    var listed = renderOperatorList(list);
    var reported = renderCallerReports(reports, listed);
    $('decisions').hidden = !listed && !reported;
    reportSection.classList.toggle('with-list', listed || reported);
    return listed;
  }

  function renderReport(body) {
    var report = body.data;
    var meta = body.meta || {};
    var metaSources = meta.sources;
    var risk = renderVerdict(meta);
    renderDecisions(meta.list, meta.reports);
    renderFacts(report, meta.hints);
    renderAdvice(risk, report.phoneInfo.isNPV, metaSources, meta.hints);
    renderFailures(metaSources);
    var container = $('sources');
    container.replaceChildren();
    SLOT_DISPLAY.forEach(function (display) {
      container.appendChild(
        renderSource(display, report.sources[display.slot], metaSources && metaSources[display.slot]),
      );
    });
    showCards({ verdict: true, facts: true, advice: true, sources: true, failures: true });
    document.title = t('page.titleNumber', { number: report.number });
  }

  // ---- Problems

  // `facts` ({ number, phoneInfo }) is set when the error answer still carried the number's
  // facts (a 502: the sources failed, the numbering plan did not); `reasons` are the per-source
  // failure reasons of that answer, listed below the problem; `list` is its meta.list, the
  // operator's rule, shown first, and `reports` its meta.reports, shown after the rule. A 502
  // also says what to do: no source answered, so the advice is the unknown verdict's, unless the
  // operator's rule already decides what becomes of a call.
  function showProblem(problem, facts, reasons, list, reports) {
    hideStatus();
    var listed = renderDecisions(list, reports);
    $('problem-title').textContent = problem.title;
    $('problem-text').textContent = problem.text;
    $('problem').className = 'card problem' + (problem.kind === 'warn' ? ' problem-warn' : '');
    if (facts) renderFacts(facts, null);
    if (reasons) renderFailures(reasons);
    var advice = Boolean(problem.advice) && !listed;
    if (advice) renderAdvice('unknown', Boolean(facts && facts.phoneInfo.isNPV), reasons || {});
    showCards({ facts: Boolean(facts), problem: true, advice: advice, failures: Boolean(reasons) });
    document.title = facts ? t('page.titleNumber', { number: facts.number }) : t('page.title');
  }

  function retryAfterSeconds(response) {
    var value = Number(response.headers.get('Retry-After'));
    return isFinite(value) && value > 0 ? Math.ceil(value) : null;
  }

  function describeError(response) {
    if (response.status === 400) return { title: t('error.invalidTitle'), text: t('error.invalidText'), kind: 'error' };
    if (response.status === 429) {
      var seconds = retryAfterSeconds(response);
      return {
        title: t('error.tooManyTitle'),
        text: seconds === null ? t('error.tooManyTextMoment') : t('error.tooManyText', { seconds: seconds }),
        kind: 'warn',
      };
    }
    if (response.status === 502)
      return { title: t('error.allFailedTitle'), text: t('error.allFailedText'), kind: 'error', advice: true };
    if (response.status === 503) return { title: t('error.busyTitle'), text: t('error.busyText'), kind: 'warn' };
    return { title: t('error.otherTitle'), text: t('error.otherText', { status: response.status }), kind: 'error' };
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

  // The 502 body's meta.list (the operator's rule), or null.
  function listOfProblem(body) {
    if (!body || typeof body !== 'object' || !body.meta || typeof body.meta !== 'object') return null;
    return body.meta.list || null;
  }

  // The 502 body's meta.reports (what this deployment's reporters said), or null.
  function reportsOfProblem(body) {
    if (!body || typeof body !== 'object' || !body.meta || typeof body.meta !== 'object') return null;
    return body.meta.reports || null;
  }

  // The 502 body's `sources` (slot -> reason) in the shape renderFailures reads, or null.
  function failureReasonsOfProblem(body) {
    if (!body || typeof body !== 'object' || !body.sources || typeof body.sources !== 'object') return null;
    var reasons = {};
    var any = false;
    SLOTS.forEach(function (slot) {
      var reason = body.sources[slot];
      if (typeof reason !== 'string') return;
      // Each slot holds a failure reason, or the status of a slot that did not fail.
      if (reason === 'not_found' || reason === 'pending' || reason === 'skipped') reasons[slot] = { status: reason };
      else if (reason === 'not_covered') reasons[slot] = { status: 'skipped', reason: reason };
      else reasons[slot] = { status: 'error', reason: reason };
      any = true;
    });
    return any ? reasons : null;
  }

  var currentRequest = 0;

  function lookup(raw) {
    var number = raw.trim();
    if (number === '') {
      showProblem({ title: t('error.emptyTitle'), text: t('error.emptyText'), kind: 'error' });
      return;
    }
    // The address bar holds the number (and a `?lang=` the page was opened with), so a report
    // can be bookmarked or shared as it is seen.
    var url = new URL(window.location.href);
    var language = url.searchParams.get('lang');
    url.search = '';
    if (language) url.searchParams.set('lang', language);
    url.searchParams.set('number', number);
    window.history.replaceState(null, '', url.pathname + url.search);

    currentRequest += 1;
    var requestId = currentRequest;
    button.disabled = true;
    reportSection.setAttribute('aria-busy', 'true');
    showStatus(t('status.loading'));
    fetch('/api/phone/' + encodeURIComponent(number), { headers: { Accept: 'application/json' } })
      .then(function (response) {
        if (response.status === 502) {
          return response
            .json()
            .catch(function () {
              return null;
            })
            .then(function (body) {
              if (requestId !== currentRequest) return;
              showProblem(
                describeError(response),
                factsOfProblem(body),
                failureReasonsOfProblem(body),
                listOfProblem(body),
                reportsOfProblem(body),
              );
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
        showProblem({ title: t('error.unreachableTitle'), text: t('error.unreachableText'), kind: 'error' });
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
