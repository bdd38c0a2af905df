// The Outbound page: endpoints with their health, create / edit / enable / disable, rotate a secret
// (shown once), send a test.ping and watch its attempt, message history with every attempt, replay
// one message or every failed delivery of a time window. Everything goes through the admin API; text
// from the store is only ever set as textContent. A viewer gets no button that changes anything (and
// the API would refuse it anyway).

const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text ?? '';
  if (className) td.className = className;
  return td;
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');
const percent = (rate) => (rate == null ? '–' : `${(rate * 100).toFixed(rate === 1 ? 0 : 1)}%`);
const ms = (v) => (v == null ? '–' : String(Math.round(v)));
/** An <input type=datetime-local> value for a time, in the browser's zone. */
const localInput = (date) => new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/** How long a ping's or replay's first attempt is watched for, polling every second. */
const WATCH_MS = 30_000;

export function mountOutbound(root, { api, t, role }) {
  const canChange = role !== 'viewer';
  let current = null; // the endpoint whose detail is open
  let watching = 0; // bumps to stop an older watch loop
  // Bumps with every change of view: a list or endpoint still loading when the operator has moved on
  // (clicked "New endpoint" before the list arrived) is dropped instead of taking the screen back.
  let navigation = 0;

  for (const el of root.querySelectorAll('[data-operate]')) el.hidden = !canChange;

  /** One view of the page at a time; the secret box goes away with any other view. */
  function view(name) {
    $('outbound-list').hidden = name !== 'list';
    $('endpoint-form').hidden = name !== 'form';
    $('endpoint-detail').hidden = name !== 'detail';
    $('secret-once').hidden = true;
    $('secret-value').textContent = '';
  }

  function showSecret(secret) {
    $('secret-value').textContent = secret;
    $('secret-once').hidden = false;
  }

  async function openList() {
    const nav = ++navigation;
    watching++;
    current = null;
    const [{ items }, stats] = await Promise.all([api('GET', '/endpoints'), api('GET', '/stats/outbox?window=1h')]);
    if (nav !== navigation) return;
    const health = new Map(stats.endpoints.map((e) => [e.endpoint_id, e]));
    const body = $('endpoint-rows');
    body.replaceChildren();
    const select = $('replay-failed-endpoint');
    select.replaceChildren(select.options[0]);
    for (const ep of items) {
      const h = health.get(ep.id);
      const tr = document.createElement('tr');
      tr.dataset.endpoint = ep.id;
      tr.append(
        cell(ep.id),
        cell(ep.url),
        cell(ep.enabled ? t('enabled') : `${t('disabled')}${ep.disabled_reason ? ` (${ep.disabled_reason})` : ''}`, ep.enabled ? '' : 'status-dead'),
        cell(h ? `${percent(h.success_rate)} (${h.succeeded}/${h.attempts})` : '–', h?.failing_since ? 'status-dead' : ''),
        cell(h ? `${ms(h.p50_ms)} / ${ms(h.p99_ms)}` : '–'),
        cell(when(h?.failing_since), 'status-dead'),
        cell(String(ep.consecutive_failures)),
      );
      tr.onclick = () => openEndpoint(ep.id);
      body.append(tr);
      select.append(new Option(ep.id, ep.id));
    }
    const now = new Date();
    $('replay-failed-since').value = localInput(new Date(now.getTime() - 3_600_000));
    $('replay-failed-until').value = localInput(new Date(now.getTime() + 60_000));
    $('replay-failed-message').textContent = '';
    view('list');
  }

  function openForm(endpoint) {
    navigation++;
    view('form');
    $('endpoint-form-title').textContent = endpoint ? `${t('edit')} ${endpoint.id}` : t('newEndpoint');
    $('endpoint-url').value = endpoint?.url ?? '';
    $('endpoint-description').value = endpoint?.description ?? '';
    $('endpoint-event-types').value = (endpoint?.event_types ?? []).join(', ');
    $('endpoint-enabled').checked = endpoint?.enabled ?? true;
    $('endpoint-form-error').textContent = '';
    $('endpoint-form').onsubmit = async (e) => {
      e.preventDefault();
      const input = {
        url: $('endpoint-url').value.trim(),
        description: $('endpoint-description').value,
        event_types: $('endpoint-event-types').value.split(',').map((s) => s.trim()).filter(Boolean),
      };
      // Sent only when it changes: enabling again also clears the endpoint's failure streak.
      const enabled = $('endpoint-enabled').checked;
      if (!endpoint || enabled !== endpoint.enabled) input.enabled = enabled;
      try {
        if (endpoint) {
          await api('PATCH', `/endpoints/${enc(endpoint.id)}`, input);
          await openEndpoint(endpoint.id);
        } else {
          const created = await api('POST', '/endpoints', input);
          await openEndpoint(created.id, created.secret);
        }
      } catch (err) {
        $('endpoint-form-error').textContent = err.message;
      }
    };
    $('endpoint-cancel').onclick = () => (endpoint ? openEndpoint(endpoint.id) : openList());
  }

  function field(list, key, value) {
    const dt = document.createElement('dt');
    dt.dataset.i18n = key;
    dt.textContent = t(key);
    const dd = document.createElement('dd');
    dd.dataset.field = key;
    dd.textContent = value ?? '';
    list.append(dt, dd);
  }

  /** `secret`: a new endpoint's, shown with its detail this once. */
  async function openEndpoint(id, secret) {
    const nav = ++navigation;
    watching++;
    const ep = await api('GET', `/endpoints/${enc(id)}`);
    if (nav !== navigation) return;
    current = ep;
    view('detail');
    if (secret) showSecret(secret);
    $('endpoint-title').textContent = ep.id;
    const fields = $('endpoint-fields');
    fields.replaceChildren();
    field(fields, 'url', ep.url);
    field(fields, 'description', ep.description);
    field(fields, 'eventTypeList', ep.event_types.length ? ep.event_types.join(', ') : '*');
    field(fields, 'scheme', ep.scheme);
    field(fields, 'state', ep.enabled ? t('enabled') : `${t('disabled')}${ep.disabled_reason ? ` (${ep.disabled_reason})` : ''}`);
    field(fields, 'failedInRow', String(ep.consecutive_failures));
    field(fields, 'created', when(ep.created_at));
    const toggle = $('endpoint-toggle');
    toggle.textContent = ep.enabled ? t('disable') : t('enable');
    toggle.onclick = () => act(async () => {
      await api('POST', `/endpoints/${enc(ep.id)}/${ep.enabled ? 'disable' : 'enable'}`);
      await openEndpoint(ep.id);
    });
    // This endpoint's deliveries only; the link carries the filter, the cookie the session.
    for (const format of ['csv', 'xlsx', 'pdf']) $(`endpoint-export-${format}`).href = `/api/v1/deliveries/export.${format}?endpoint_id=${enc(ep.id)}`;
    $('endpoint-edit').onclick = () => openForm(ep);
    $('endpoint-rotate').onclick = () => act(async () => {
      const rotated = await api('POST', `/endpoints/${enc(ep.id)}/rotate-secret`, {});
      showSecret(rotated.secret);
      $('endpoint-message').textContent = t('rotated')(when(rotated.previous_expires_at));
    });
    $('endpoint-ping').onclick = () => act(async () => {
      const ping = await api('POST', `/endpoints/${enc(ep.id)}/ping`);
      $('endpoint-message').textContent = t('pingSent')(ping.id);
      await openMessage(ping.id, true);
    });
    $('endpoint-message').textContent = '';
    $('message-detail').hidden = true;
    await loadHistory();
  }

  /** Runs a button's action; an API refusal is shown, not thrown. */
  async function act(action) {
    try {
      await action();
    } catch (err) {
      $('endpoint-message').textContent = err.message;
    }
  }

  async function loadHistory() {
    if (!current) return;
    const page = await api('GET', `/deliveries?endpoint_id=${enc(current.id)}&limit=50`);
    const body = $('endpoint-history');
    body.replaceChildren();
    for (const d of page.items) {
      const tr = document.createElement('tr');
      tr.dataset.message = d.message_id;
      tr.append(
        cell(when(d.created_at)),
        cell(d.message_id),
        cell(d.event_type),
        cell(d.status, `status-${d.status}`),
        cell(String(d.attempts)),
        cell(d.last_status_code == null ? '' : String(d.last_status_code)),
        cell(d.last_duration_ms == null ? '' : String(d.last_duration_ms)),
        cell(d.last_error),
      );
      tr.onclick = () => openMessage(d.message_id, false);
      body.append(tr);
    }
  }

  /** Shows one message's delivery to this endpoint with every attempt; `watch` polls until one lands. */
  async function openMessage(messageId, watch) {
    const endpointId = current?.id;
    const run = ++watching;
    const deadline = Date.now() + WATCH_MS;
    for (;;) {
      const m = await api('GET', `/messages/${enc(messageId)}`);
      if (run !== watching) return;
      const delivery = m.deliveries.find((d) => d.endpoint_id === endpointId) ?? m.deliveries[0];
      renderMessage(m, delivery);
      const settled = delivery && delivery.attempt_history.length > 0 && !['pending', 'sending'].includes(delivery.status);
      if (!watch || settled || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await loadHistory();
  }

  function renderMessage(m, delivery) {
    $('message-detail').hidden = false;
    $('message-detail').dataset.message = m.id;
    $('message-title').textContent = `${m.event_type} · ${m.id}`;
    $('message-status').textContent = delivery ? `${t('status')}: ${delivery.status}` : '';
    $('message-status').dataset.status = delivery?.status ?? '';
    const attempts = $('message-attempts');
    attempts.replaceChildren();
    for (const a of delivery?.attempt_history ?? []) {
      const tr = document.createElement('tr');
      tr.dataset.attempt = String(a.attempt);
      tr.append(
        cell(String(a.attempt)),
        cell(when(a.started_at)),
        cell(a.status_code == null ? '' : String(a.status_code), a.succeeded ? 'status-done' : 'status-dead'),
        cell(String(a.duration_ms)),
        cell(a.error),
        cell(a.response_body?.slice(0, 200), 'excerpt'),
      );
      attempts.append(tr);
    }
    // A payload trimmed by retention is gone: nothing to show, nothing to replay (the API answers BODY_TRIMMED).
    if (m.payload_trimmed_at) $('message-payload').textContent = t('payloadTrimmed')(when(m.payload_trimmed_at));
    else $('message-payload').textContent = typeof m.payload === 'string' ? m.payload : JSON.stringify(m.payload, null, 2);
    $('message-replay').hidden = !canChange || Boolean(m.payload_trimmed_at);
    $('message-replay').onclick = () => act(async () => {
      const r = await api('POST', `/messages/${enc(m.id)}/replay`, current ? { endpoint_id: current.id } : {});
      $('endpoint-message').textContent = t('messageReplayed')(r.replayed);
      await openMessage(m.id, true);
    });
  }

  $('endpoint-new').onclick = () => openForm(null);
  $('endpoint-back').onclick = () => openList();
  $('replay-failed').onsubmit = async (e) => {
    e.preventDefault();
    const endpointId = $('replay-failed-endpoint').value;
    try {
      const r = await api('POST', '/deliveries/replay-failed', {
        ...(endpointId ? { endpoint_id: endpointId } : {}),
        since: new Date($('replay-failed-since').value).toISOString(),
        until: new Date($('replay-failed-until').value).toISOString(),
      });
      $('replay-failed-message').textContent = t('failedReplayed')(r.replayed);
    } catch (err) {
      $('replay-failed-message').textContent = err.message;
    }
  };

  return { open: openList };
}
