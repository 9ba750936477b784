// mirrorql dashboard: topics, a topic's activity and messages with a live
// feed, and recent schedules, from the public GraphQL API only (queries over
// HTTP POST, the live feed as a graphql-transport-ws subscription with the
// graphql-ws client, global graphqlWs). Charts: uPlot (global uPlot).
//
// Views are chosen by the location's hash: #/topics, #/topic/<id>,
// #/schedules. Timestamps ("seconds.nanos") are handled as BigInt
// nanoseconds, never as floats.
//
// The page preloads the two libraries (link rel=preload data-library) but
// runs them only once the first view has its data, so that parsing them
// does not delay it; what needs them waits for `libraries()`.
(function () {
  'use strict';

  let librariesLoaded = null;
  function libraries() {
    if (!librariesLoaded) {
      librariesLoaded = Promise.all([...document.querySelectorAll('link[data-library]')].map((link) =>
        new Promise((resolve, reject) => {
          const s = document.createElement('script');
          s.src = link.href;
          s.onload = resolve;
          s.onerror = () => reject(new Error('could not load ' + link.href));
          document.head.append(s);
        })));
      librariesLoaded.catch((e) => notice('The page is incomplete: ' + e.message + '.'));
    }
    return librariesLoaded;
  }

  const endpoint = new URL(document.body.dataset.endpoint, location.href);
  const socketURL = new URL(endpoint);
  socketURL.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:';

  const NS = 1000000000n;
  const PAGE = 25;
  const FEED_MAX = 200; // messages kept in the feed
  const RANGES = {
    // buckets × width = span; Topic.activity costs its buckets (limit 200)
    hour: { span: 3600n * NS, buckets: 60, per: 'minute', over: 'hour' },
    day: { span: 86400n * NS, buckets: 96, per: '15 minutes', over: 'day' },
    week: { span: 604800n * NS, buckets: 168, per: 'hour', over: 'week' },
  };

  // --- GraphQL ---

  const MESSAGE_FIELDS = `
    sequenceNumber consensusTimestamp payerAccountId
    utf8: message(encoding: UTF8) base64: message(encoding: BASE64)
    chunkInfo { number total initialTransactionId { accountId transactionValidStart nonce } }
    fullUtf8: fullMessage(encoding: UTF8) fullBase64: fullMessage(encoding: BASE64)`;

  const TOPICS = `query Topics($after: String) {
    topics(first: ${PAGE}, after: $after) {
      nodes { id memo deleted messageCount latestMessage { consensusTimestamp } }
      pageInfo { hasNextPage endCursor }
    }
  }`;

  const TOPIC = `query Topic($id: EntityId!) {
    topic(id: $id) {
      id memo deleted createdTimestamp
      adminKey { type key } submitKey { type key } feeScheduleKey { type key }
      feeExemptKeyList { type key }
      autoRenewAccountId autoRenewPeriod
      customFees { createdTimestamp fixedFees { amount collectorAccountId denominatingTokenId } }
      messageCount
      latestMessage { sequenceNumber consensusTimestamp }
      messages(order: DESC, first: ${PAGE}) { nodes { ${MESSAGE_FIELDS} } }
    }
  }`;

  const ACTIVITY = `query Activity($id: EntityId!, $from: Timestamp!, $to: Timestamp!, $buckets: Int!) {
    topic(id: $id) { activity(from: $from, to: $to, buckets: $buckets) { from messages } }
  }`;

  const SCHEDULES = `query Schedules($after: String) {
    schedules(order: DESC, first: ${PAGE}, after: $after) {
      nodes {
        id memo status consensusTimestamp creatorAccountId
        signatures { consensusTimestamp }
      }
      pageInfo { hasNextPage endCursor }
    }
  }`;

  const FOLLOW = `subscription Follow($id: EntityId!, $start: Timestamp) {
    topicMessages(topicId: $id, consensusStartTime: $start) { ${MESSAGE_FIELDS} }
  }`;

  // GraphQLError carries the first error's code (extensions.code).
  class GraphQLError extends Error {
    constructor(message, code) {
      super(message);
      this.code = code || '';
    }
  }

  async function query(text, variables) {
    let res;
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ query: text, variables: variables || {} }),
      });
    } catch (e) {
      throw new GraphQLError('the service does not answer (' + e.message + ')', 'NETWORK');
    }
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      throw new GraphQLError('the service answered ' + res.status + ' without a GraphQL result', 'HTTP');
    }
    if (body.errors && body.errors.length) {
      const first = body.errors[0];
      throw new GraphQLError(first.message, first.extensions && first.extensions.code);
    }
    if (!res.ok || !body.data) throw new GraphQLError('the service answered ' + res.status, 'HTTP');
    return body.data;
  }

  // --- values ---

  function parseTs(s) {
    const [sec, frac = ''] = String(s).split('.');
    return BigInt(sec) * NS + BigInt((frac + '000000000').slice(0, 9));
  }

  function formatTs(ns) {
    return (ns / NS).toString() + '.' + (ns % NS).toString().padStart(9, '0');
  }

  const ms = (ns) => Number(ns / 1000000n);

  // The browser's formats, made on first use: making them can take a while
  // the first time, and the first query should not wait for it.
  let formats = null;
  function fmt() {
    formats = formats || {
      date: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }),
      range: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
      relative: new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }),
      number: new Intl.NumberFormat(),
    };
    return formats;
  }

  function formatDate(ts) {
    return fmt().date.format(new Date(ms(parseTs(ts))));
  }

  function ago(ts) {
    const s = (ms(parseTs(ts)) - Date.now()) / 1000;
    const steps = [[60, 'second'], [3600, 'minute'], [86400, 'hour'], [86400 * 30, 'day'], [86400 * 365, 'month'], [Infinity, 'year']];
    const sizes = { second: 1, minute: 60, hour: 3600, day: 86400, month: 86400 * 30, year: 86400 * 365 };
    for (const [limit, unit] of steps) {
      if (Math.abs(s) < limit) return fmt().relative.format(Math.round(s / sizes[unit]), unit);
    }
    return '';
  }

  function tinybars(amount) {
    const whole = Math.trunc(amount / 1e8);
    const frac = String(Math.abs(amount % 1e8)).padStart(8, '0').replace(/0+$/, '');
    return fmt().number.format(whole) + (frac ? '.' + frac : '') + ' ℏ';
  }

  // --- DOM ---

  const $ = (id) => document.getElementById(id);

  // h builds an element; text always goes in as text, never as markup.
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('data-') || k === 'href' || k === 'title' || k === 'datetime') el.setAttribute(k, v);
      else el[k] = v;
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function timeEl(ts, withAgo) {
    return h('time', { datetime: new Date(ms(parseTs(ts))).toISOString(), title: ts },
      formatDate(ts), withAgo ? h('span', { class: 'ago', text: ago(ts) }) : null);
  }

  function notice(text) {
    $('notice-text').textContent = text;
    $('notice').hidden = false;
  }

  function clearNotice() {
    $('notice').hidden = true;
  }

  $('notice-close').addEventListener('click', clearNotice);

  function pressed(group, attr, value) {
    for (const b of group.querySelectorAll('button[' + attr + ']')) {
      b.setAttribute('aria-pressed', String(b.getAttribute(attr) === value));
    }
  }

  // --- views ---

  let viewToken = 0; // a response for an older view is dropped

  function show(name) {
    for (const v of ['topics', 'topic', 'schedules']) $('view-' + v).hidden = v !== name;
    for (const a of document.querySelectorAll('.tabs a')) {
      a.classList.toggle('active', a.dataset.view === name || (name === 'topic' && a.dataset.view === 'topics'));
    }
  }

  function route() {
    const token = ++viewToken;
    stopFollowing();
    const hash = location.hash.replace(/^#\/?/, '');
    const [view, ...rest] = hash.split('/');
    if (view === 'topic' && rest.length) {
      const id = decodeURIComponent(rest.join('/'));
      show('topic');
      openTopic(id, token);
    } else if (view === 'schedules') {
      show('schedules');
      document.title = 'Schedules · mirrorql dashboard';
      loadSchedules(null, token);
    } else {
      show('topics');
      document.title = 'Topics · mirrorql dashboard';
      loadTopics(null, token);
    }
  }

  window.addEventListener('hashchange', route);

  // --- lists ---

  // pagedList makes the loader of a list view. name is the field of its
  // query q and the id of its table (beside it name-empty, the note for no
  // rows, and name-more, the button that loads the next page). load(after,
  // token) puts a page in the table, row(node) for each node, the first page
  // replacing what was there, then runs loaded; a failure goes to the
  // notice, and an answer for an older view is dropped.
  function pagedList(name, q, row, loaded) {
    let cursor = null;
    async function load(after, token) {
      let data;
      try {
        data = await query(q, { after });
      } catch (e) {
        if (token === viewToken) notice('Could not load the ' + name + ': ' + e.message);
        return;
      }
      if (token !== viewToken) return;
      const conn = data[name];
      const body = $(name).tBodies[0];
      if (!after) body.replaceChildren();
      for (const n of conn.nodes) body.append(row(n));
      $(name + '-empty').hidden = body.rows.length > 0;
      cursor = conn.pageInfo.endCursor;
      $(name + '-more').hidden = !conn.pageInfo.hasNextPage;
      if (loaded) loaded();
    }
    $(name + '-more').addEventListener('click', () => load(cursor, viewToken));
    return load;
  }

  // --- topic list ---

  let topicsMarked = false;

  const loadTopics = pagedList('topics', TOPICS, (t) => {
    const link = '#/topic/' + t.id;
    return h('tr', { 'data-topic': t.id },
      h('td', { class: 'id', 'data-label': 'Topic' }, h('a', { href: link, text: t.id }),
        t.deleted ? h('span', { class: 'badge st-DELETED', text: 'deleted' }) : null),
      h('td', { class: 'memo', 'data-label': 'Memo', title: t.memo }, t.memo || h('span', { class: 'muted', text: '—' })),
      h('td', { class: 'num count', 'data-label': 'Messages', text: fmt().number.format(t.messageCount) }),
      h('td', { class: 'latest', 'data-label': 'Latest message' },
        t.latestMessage ? timeEl(t.latestMessage.consensusTimestamp, true) : h('span', { class: 'muted', text: 'none' })));
  }, () => {
    if (!topicsMarked) {
      topicsMarked = true;
      // navigation start → the first page of topics in the document
      requestAnimationFrame(() => performance.mark('dashboard:topics-rendered'));
    }
    setTimeout(libraries, 0); // for the topic view, after this frame
  });

  // --- search ---

  let prefetched = null; // {id, topic}: the search's answer, for the view it opens

  $('search').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const input = $('search-id');
    const id = input.value.trim();
    if (!id) return;
    let data;
    try {
      data = await query(TOPIC, { id });
    } catch (e) {
      if (e.code === 'BAD_USER_INPUT') {
        notice('“' + id + '” is not a topic id: write it as 0.0.N or N (' + e.message + ').');
      } else {
        notice('Could not look up topic “' + id + '”: ' + e.message);
      }
      return;
    }
    if (!data.topic) {
      notice('No topic “' + id + '”: the mirror node has no entity with that id.');
      return;
    }
    clearNotice();
    input.value = '';
    input.blur();
    prefetched = { id: data.topic.id, topic: data.topic };
    const hash = '#/topic/' + data.topic.id;
    if (location.hash === hash) route();
    else location.hash = hash;
  });

  // --- topic view ---

  const topicState = {
    id: null, topic: null, range: 'hour', encoding: 'UTF8',
    messages: [], // newest first
    chart: null, window: null, // window: {from, to, width} in ns
  };

  async function openTopic(id, token) {
    resetTopic('Topic ' + id);
    let topic;
    if (prefetched && prefetched.id === id) {
      topic = prefetched.topic;
      prefetched = null;
    } else {
      try {
        topic = (await query(TOPIC, { id })).topic;
      } catch (e) {
        if (token !== viewToken) return;
        notice(e.code === 'BAD_USER_INPUT'
          ? '“' + id + '” is not a topic id: write it as 0.0.N or N (' + e.message + ').'
          : 'Could not load topic ' + id + ': ' + e.message);
        return;
      }
      if (token !== viewToken) return;
      if (!topic) {
        notice('No topic “' + id + '”: the mirror node has no entity with that id.');
        return;
      }
    }
    clearNotice();
    document.title = topic.id + ' · mirrorql dashboard';
    topicState.id = topic.id;
    topicState.topic = topic;
    topicState.messages = topic.messages.nodes.slice();
    renderTopic(topic);
    renderFeed();
    loadActivity(token);
    const latest = topic.latestMessage;
    follow(topic.id, latest ? parseTs(latest.consensusTimestamp) : null, latest ? latest.sequenceNumber : 0);
  }

  // resetTopic empties the topic view while the next topic loads, so that
  // nothing of the previous one shows under the new id.
  function resetTopic(title) {
    topicState.id = topicState.topic = topicState.window = null;
    topicState.messages = [];
    if (topicState.chart) topicState.chart.destroy();
    topicState.chart = null;
    $('t-id').textContent = title;
    $('t-deleted').hidden = true;
    $('t-memo').textContent = '';
    for (const id of ['t-count', 't-latest', 't-created', 't-details', 'feed', 'chart-caption']) $(id).replaceChildren();
    $('feed-empty').hidden = true;
    delete $('chart').dataset.buckets;
  }

  function keyEl(k) {
    if (!k) return h('span', { class: 'muted', text: 'none' });
    const short = k.key.length > 20 ? k.key.slice(0, 10) + '…' + k.key.slice(-6) : k.key;
    return h('details', { class: 'key' },
      h('summary', null, h('span', { class: 'badge', text: k.type }), ' ', h('code', { text: short })),
      h('code', { class: 'full', text: k.key }));
  }

  function renderTopic(t) {
    $('t-id').textContent = 'Topic ' + t.id;
    $('t-deleted').hidden = !t.deleted;
    $('t-memo').textContent = t.memo || '';
    $('t-memo').hidden = !t.memo;
    $('t-count').textContent = fmt().number.format(t.messageCount);
    $('t-latest').replaceChildren(t.latestMessage ? timeEl(t.latestMessage.consensusTimestamp, true) : 'none');
    $('t-created').replaceChildren(t.createdTimestamp ? timeEl(t.createdTimestamp, false) : 'unknown');

    const fees = t.customFees.fixedFees.length
      ? h('ul', { class: 'fees' }, t.customFees.fixedFees.map((f) => h('li', null,
        f.denominatingTokenId ? fmt().number.format(f.amount) + ' of token ' + f.denominatingTokenId : tinybars(f.amount),
        f.collectorAccountId ? h('span', { class: 'muted', text: ' → ' + f.collectorAccountId }) : null)))
      : h('span', { class: 'muted', text: 'none' });
    const rows = [
      ['Admin key', keyEl(t.adminKey)],
      ['Submit key', keyEl(t.submitKey)],
      ['Fee schedule key', keyEl(t.feeScheduleKey)],
      ['Fee-exempt keys', t.feeExemptKeyList.length ? t.feeExemptKeyList.map(keyEl) : h('span', { class: 'muted', text: 'none' })],
      ['Custom fees', fees],
      ['Auto-renew', t.autoRenewAccountId
        ? t.autoRenewAccountId + (t.autoRenewPeriod ? ' every ' + fmt().number.format(Math.round(t.autoRenewPeriod / 86400)) + ' days' : '')
        : h('span', { class: 'muted', text: 'none' })],
    ];
    $('t-details').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', null, v)]));
  }

  // --- activity chart ---

  for (const b of document.querySelectorAll('[data-range]')) {
    b.addEventListener('click', () => {
      topicState.range = b.dataset.range;
      pressed(b.parentElement, 'data-range', b.dataset.range);
      loadActivity(viewToken);
    });
  }

  // activityWindow ends now, or just after the latest message when that is
  // older than the range (a quiet or historical topic still shows its
  // traffic), rounded up to whole buckets.
  function activityWindow(range) {
    const r = RANGES[range];
    const width = r.span / BigInt(r.buckets);
    let end = BigInt(Date.now()) * 1000000n;
    let atLatest = false;
    const latest = topicState.topic.latestMessage;
    if (latest) {
      const last = parseTs(latest.consensusTimestamp);
      if (last < end - r.span) {
        end = last + 1n; // `to` is exclusive
        atLatest = true;
      }
    }
    const to = ((end + width - 1n) / width) * width;
    return { from: to - r.span, to, width, atLatest };
  }

  async function loadActivity(token) {
    const range = topicState.range;
    const r = RANGES[range];
    const w = activityWindow(range);
    let data;
    try {
      data = await query(ACTIVITY, { id: topicState.id, from: formatTs(w.from), to: formatTs(w.to), buckets: r.buckets });
    } catch (e) {
      if (token === viewToken) notice('Could not load the activity: ' + e.message);
      return;
    }
    if (token !== viewToken || range !== topicState.range) return;
    topicState.window = w;
    const buckets = data.topic ? data.topic.activity : [];
    const xs = buckets.map((b) => ms(parseTs(b.from)) / 1000);
    const ys = buckets.map((b) => b.messages);
    await libraries();
    if (token !== viewToken || range !== topicState.range) return;
    drawChart(xs, ys, w);
    caption();
  }

  // caption says what the chart shows, or while the pointer is on a bar
  // that bucket's count.
  function caption(bucket) {
    const el = $('chart-caption');
    const plot = topicState.chart;
    const w = topicState.window;
    if (!plot || !w) return;
    el.classList.toggle('hover', bucket !== undefined);
    if (bucket !== undefined) {
      const start = plot.data[0][bucket] * 1000;
      const n = plot.data[1][bucket];
      el.textContent = fmt().range.formatRange(new Date(start), new Date(start + ms(w.width))) + ': ' +
        fmt().number.format(n) + (n === 1 ? ' message' : ' messages');
      return;
    }
    const r = RANGES[topicState.range];
    const total = plot.data[1].reduce((a, b) => a + b, 0);
    el.textContent = 'Messages per ' + r.per + (w.atLatest
      ? ' in the ' + r.over + ' up to the latest message (' + fmt().range.format(new Date(ms(w.to))) + ')'
      : ' over the last ' + r.over) + ': ' + fmt().number.format(total) + ' in all.';
  }

  function chartSize() {
    const el = $('chart');
    return { width: Math.max(200, el.clientWidth), height: el.clientWidth < 500 ? 160 : 200 };
  }

  function drawChart(xs, ys, w) {
    const el = $('chart');
    if (topicState.chart) {
      topicState.chart.destroy();
      topicState.chart = null;
    }
    const fromS = ms(w.from) / 1000;
    const toS = ms(w.to) / 1000;
    const plot = new uPlot({
      ...chartSize(),
      padding: [8, 22, 0, 0], // room for the last time label
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      scales: {
        x: { time: true, range: () => [fromS, toS] },
        y: { range: (u, min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] },
      },
      axes: [
        { stroke: '#5b6472', grid: { stroke: '#eef0f4', width: 1 }, ticks: { show: false } },
        {
          stroke: '#5b6472', grid: { stroke: '#eef0f4', width: 1 }, ticks: { show: false }, size: 44,
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7],
          values: (u, vals) => vals.map((v) => fmt().number.format(v)),
        },
      ],
      series: [
        {},
        {
          label: 'messages', fill: '#3b82f6', stroke: '#2563eb', width: 0,
          paths: uPlot.paths.bars({ size: [0.86, 64], align: 1 }), points: { show: false },
        },
      ],
      hooks: { setCursor: [readout] },
    }, [xs, ys], el);
    topicState.chart = plot;
    // the bucket count the chart holds, for tests and curious readers
    el.dataset.buckets = String(plot.data[0].length);
    el.dataset.range = topicState.range;
    el.dataset.total = String(ys.reduce((a, b) => a + b, 0));
  }

  function readout(u) {
    const i = u.cursor.idx;
    caption(i === null || i === undefined ? undefined : i);
  }

  // A live message counts in its bucket when it falls in the window; one
  // past its end (the window ended "now" when it was drawn) moves the window
  // on: the activity is read again, once for a burst of messages.
  let reloadTimer = 0;
  function countInChart(ts) {
    const plot = topicState.chart;
    const w = topicState.window;
    if (!plot || !w || ts < w.from) return;
    if (ts >= w.to) {
      if (!reloadTimer) {
        const token = viewToken;
        reloadTimer = setTimeout(() => {
          reloadTimer = 0;
          if (token === viewToken) loadActivity(token);
        }, 500);
      }
      return;
    }
    const i = Number((ts - w.from) / w.width);
    const ys = plot.data[1].slice();
    ys[i] += 1;
    plot.setData([plot.data[0], ys]);
    $('chart').dataset.total = String(ys.reduce((a, b) => a + b, 0));
    caption();
  }

  new ResizeObserver(() => {
    if (topicState.chart && !$('view-topic').hidden) topicState.chart.setSize(chartSize());
  }).observe($('chart'));

  // --- messages ---

  for (const b of document.querySelectorAll('[data-encoding]')) {
    b.addEventListener('click', () => {
      topicState.encoding = b.dataset.encoding;
      pressed(b.parentElement, 'data-encoding', b.dataset.encoding);
      renderFeed();
    });
  }

  const groupOf = (m) => m.chunkInfo
    ? m.chunkInfo.initialTransactionId.accountId + '@' + m.chunkInfo.initialTransactionId.transactionValidStart
    : null;

  // messageEl renders one message. A chunked message shows the whole
  // logical message (fullMessage) on its newest chunk in the feed; older
  // chunks of it point there instead of repeating it.
  function messageEl(m, wholeAt, fresh) {
    const b64 = topicState.encoding === 'BASE64';
    const head = h('div', { class: 'msg-head' },
      h('span', { class: 'seq', text: '#' + m.sequenceNumber }),
      timeEl(m.consensusTimestamp, false),
      m.payerAccountId ? h('span', { class: 'payer', title: 'payer', text: m.payerAccountId }) : null);
    let body;
    if (m.chunkInfo) {
      const ci = m.chunkInfo;
      // total is null where the row has no chunk total (REST's "total": null)
      const of = ci.total === null ? '' : '/' + ci.total;
      head.append(h('span', { class: 'badge chunk', text: 'chunk ' + ci.number + of }));
      const full = b64 ? m.fullBase64 : m.fullUtf8;
      if (ci.total === 1) {
        body = h('pre', { class: 'msg-body', text: b64 ? m.base64 : m.utf8 });
      } else if (wholeAt !== undefined && wholeAt !== m.sequenceNumber) {
        body = h('p', { class: 'part', text: 'Part of the message shown whole at #' + wholeAt + '.' });
      } else if (full !== null && full !== undefined) {
        head.append(h('span', { class: 'badge whole', text: 'whole message, ' + ci.total + ' chunks' }));
        body = h('pre', { class: 'msg-body', text: full });
      } else {
        const why = ci.total === null ? 'chunk total unknown' : 'other chunks not found yet';
        head.append(h('span', { class: 'badge warn', text: why }));
        body = h('pre', { class: 'msg-body', text: b64 ? m.base64 : m.utf8 });
      }
    } else {
      body = h('pre', { class: 'msg-body', text: b64 ? m.base64 : m.utf8 });
    }
    return h('li', { class: 'msg' + (fresh ? ' fresh' : ''), 'data-seq': String(m.sequenceNumber) }, head, body);
  }

  function renderFeed(freshSeq) {
    const whole = new Map(); // chunk group → sequence number of the row showing it whole
    const items = topicState.messages.map((m) => {
      const g = groupOf(m);
      let wholeAt;
      if (g !== null) {
        if (!whole.has(g) && (m.fullUtf8 !== null && m.fullUtf8 !== undefined)) whole.set(g, m.sequenceNumber);
        wholeAt = whole.get(g);
      }
      return messageEl(m, wholeAt, m.sequenceNumber === freshSeq);
    });
    $('feed').replaceChildren(...items);
    $('feed-empty').hidden = items.length > 0;
  }

  function received(m) {
    const t = topicState.topic;
    topicState.messages.unshift(m);
    if (topicState.messages.length > FEED_MAX) topicState.messages.length = FEED_MAX;
    if (m.chunkInfo) {
      renderFeed(m.sequenceNumber); // its older chunks now point at it
    } else {
      const feed = $('feed');
      feed.prepend(messageEl(m, undefined, true));
      while (feed.children.length > FEED_MAX) feed.lastElementChild.remove();
      $('feed-empty').hidden = true;
    }
    t.messageCount = Math.max(t.messageCount, m.sequenceNumber);
    t.latestMessage = { sequenceNumber: m.sequenceNumber, consensusTimestamp: m.consensusTimestamp };
    $('t-count').textContent = fmt().number.format(t.messageCount);
    $('t-latest').replaceChildren(timeEl(m.consensusTimestamp, true));
    countInChart(parseTs(m.consensusTimestamp));
  }

  // --- live feed ---
  //
  // One subscription per followed topic, on a client of its own that does
  // not retry by itself (graphql-ws would resubscribe with the same start
  // time). When the connection drops or the server ends the stream, the
  // feed subscribes again from the last message it holds + 1 ns, and drops
  // any sequence number it already shows: no gap, no duplicate.

  const live = { gen: 0, client: null, stop: null, topic: null, lastTs: null, lastSeq: 0, attempt: 0, timer: 0 };

  // Errors after which subscribing again cannot help.
  const FINAL = new Set(['BAD_USER_INPUT', 'NOT_FOUND', 'SUBSCRIPTIONS_DISABLED', 'GRAPHQL_VALIDATION_FAILED',
    'GRAPHQL_PARSE_FAILED', 'COMPLEXITY_LIMIT_EXCEEDED', 'DEPTH_LIMIT_EXCEEDED', 'STREAM_TRANSPORT_REQUIRED']);

  function setLive(state, why) {
    const pill = $('live');
    pill.dataset.state = state;
    pill.textContent = { off: 'off', connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', stopped: 'live feed stopped' }[state];
    pill.title = why || { live: 'new messages appear as they arrive' }[state] || '';
  }

  async function follow(topic, lastTs, lastSeq) {
    stopFollowing();
    const gen = live.gen;
    await libraries();
    if (gen !== live.gen) return; // left the topic meanwhile
    Object.assign(live, { topic, lastTs, lastSeq, attempt: 0 });
    subscribe();
  }

  function stopFollowing() {
    live.gen++;
    clearTimeout(live.timer);
    live.timer = 0;
    if (live.stop) live.stop();
    if (live.client) live.client.dispose();
    live.client = live.stop = null;
    setLive('off');
  }

  function subscribe() {
    const gen = ++live.gen;
    const mine = () => gen === live.gen;
    setLive(live.attempt ? 'reconnecting' : 'connecting', live.attempt ? 'attempt ' + (live.attempt + 1) : '');
    // A ping every 10 s keeps proxies from closing a quiet connection; one
    // that no pong answers within 5 s is closed, so that a connection that
    // died silently (a sleeping laptop, a dropped route) shows and is
    // replaced within seconds.
    let socket = null;
    let pongTimer = 0;
    const client = graphqlWs.createClient({
      url: socketURL.toString(),
      lazy: true,
      retryAttempts: 0,
      keepAlive: 10000,
      on: {
        connected: (s) => {
          socket = s;
          if (!mine()) return;
          live.attempt = 0;
          setLive('live');
        },
        ping: (received) => {
          if (received) return;
          clearTimeout(pongTimer);
          pongTimer = setTimeout(() => {
            if (socket && socket.readyState === WebSocket.OPEN) socket.close(4408, 'no pong');
          }, 5000);
        },
        pong: (received) => {
          if (received) clearTimeout(pongTimer);
        },
        closed: () => clearTimeout(pongTimer),
      },
    });
    live.client = client;
    // Start where the feed ends; a topic with no message yet from the
    // beginning, so that nothing sent meanwhile is missed.
    const start = live.lastTs === null ? '0' : formatTs(live.lastTs + 1n);
    live.stop = client.subscribe({ query: FOLLOW, variables: { id: live.topic, start } }, {
      next: (result) => {
        if (!mine()) return;
        const m = result.data && result.data.topicMessages;
        if (!m || m.sequenceNumber <= live.lastSeq) return;
        live.lastSeq = m.sequenceNumber;
        live.lastTs = parseTs(m.consensusTimestamp);
        received(m);
      },
      error: (err) => {
        if (!mine()) return;
        const first = Array.isArray(err) ? err[0] : null;
        const code = first && first.extensions && first.extensions.code;
        if (first && FINAL.has(code)) {
          stopFollowing();
          setLive('stopped', first.message);
          notice('The live feed stopped: ' + first.message + '.');
          return;
        }
        // the server refused or ended the stream (CLIENT_TOO_SLOW,
        // UNAVAILABLE, TOO_MANY_SUBSCRIPTIONS, …): give it a few seconds
        if (first) live.attempt = Math.max(live.attempt, 3);
        const why = first ? first.message
          : err && err.code ? 'connection closed (' + err.code + (err.reason ? ' ' + err.reason : '') + ')'
            : 'connection lost';
        retryLater(why);
      },
      complete: () => {
        if (mine()) retryLater('the server ended the stream');
      },
    });
  }

  function retryLater(why) {
    const gen = ++live.gen; // the failed client's callbacks are no longer ours
    if (live.client) live.client.dispose();
    live.client = live.stop = null;
    setLive('reconnecting', why);
    const wait = Math.min(500 * 2 ** live.attempt, 30000) * (0.8 + Math.random() * 0.4);
    live.attempt++;
    live.timer = setTimeout(() => {
      if (gen === live.gen) subscribe();
    }, wait);
  }

  // back online: try now rather than at the end of the wait
  window.addEventListener('online', () => {
    if (live.timer && $('live').dataset.state === 'reconnecting') {
      clearTimeout(live.timer);
      live.timer = 0;
      subscribe();
    }
  });

  // --- schedules ---

  const loadSchedules = pagedList('schedules', SCHEDULES, (s) =>
    h('tr', { 'data-schedule': s.id },
      h('td', { class: 'id', 'data-label': 'Schedule', text: s.id }),
      h('td', { class: 'memo', 'data-label': 'Memo', title: s.memo || '' }, s.memo || h('span', { class: 'muted', text: '—' })),
      h('td', { 'data-label': 'Status' }, h('span', { class: 'badge st-' + s.status, text: s.status.toLowerCase() })),
      h('td', { class: 'num', 'data-label': 'Signatures', text: String(s.signatures.length) }),
      h('td', { class: 'latest', 'data-label': 'Created' }, timeEl(s.consensusTimestamp, false)),
      h('td', { class: 'id', 'data-label': 'Creator', text: s.creatorAccountId })));

  route();
  setTimeout(fmt, 0); // while the first query is under way
})();
