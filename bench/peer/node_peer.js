#!/usr/bin/env node
// A hand-written order push in Node.js, as a merchant developer would write it: better-sqlite3 and a
// keep-alive http.Agent with N requests in flight (--in-flight, default 8).
//
// Reads fulfillsync_orders and fulfillsync_order_lines (schema/merchant/source_tables.sql) in pages of
// 500 rows, one read transaction a page, sends one `POST /{version}/order` per order, and records each
// outcome in peer_order_sync, one write transaction a page. Orders already there are skipped, so a
// second run sends nothing twice. The body is the one fulfillsyncd sends for the same row
// (daemon/src/mapping/request_mapping.cpp). Prints one line of JSON:
// {"peer", "orders", "failures", "wall_seconds", ...}.
//
// better-sqlite3 comes from the folder bench/peer/install-node-peer installs into: --modules DIR, else
// $FULFILLSYNC_PEER_NODE_DIR, else build/peer-node.
'use strict';

const fs = require('fs');
const http = require('http');
const https = require('https');
const path = require('path');
const { parseArgs } = require('util');

const ORDER_COLUMNS =
  'reference_id, order_number, shipping_method, type, sales_channel, origin_platform_program, gift_message, ' +
  'purchase_date, location_id, total_price, recipient_name, recipient_email, recipient_phone, address1, ' +
  'address2, city, state, zip_code, country, company_name, tags';
const LINE_COLUMNS =
  'order_reference_id, product_id, product_reference_id, product_name, quantity, external_line_id, unit_of_measure';
const RESULT_TABLE = `
CREATE TABLE IF NOT EXISTS peer_order_sync (
  reference_id TEXT PRIMARY KEY,
  remote_id    INTEGER,
  state        TEXT NOT NULL,  -- created, duplicate, invalid, failed
  error        TEXT,
  synced_at    TEXT NOT NULL
)`;
const MONEY = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const MAX_ATTEMPTS = 5; // per order, for lost connections and 5xx; 429s are waited out and not counted

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Text as the daemon reads it: integers as their digits, empty as absent.
function text(value) {
  if (value === null || value === undefined) return undefined;
  const s = String(value);
  return s === '' ? undefined : s;
}

// A date-time as the daemon sends it: UTC, milliseconds, +00:00. Naive times are UTC.
function iso8601(value) {
  const zoned = /([zZ]|[+-]\d\d:?\d\d)$/.test(value) ? value : value + 'Z';
  const when = new Date(zoned);
  if (Number.isNaN(when.getTime())) throw new Error(`purchase_date is not a date-time: ${value}`);
  return when.toISOString().replace('Z', '+00:00');
}

function defined(entries) {
  const out = {};
  for (const [key, value] of entries) if (value !== undefined && value !== null) out[key] = value;
  return out;
}

// The `POST /order` body for one row, members in the daemon's order; money as a JSON number.
function orderBody(row, lines) {
  for (const name of ['shipping_method', 'recipient_name', 'address1', 'city', 'zip_code', 'country']) {
    if (text(row[name]) === undefined) throw new Error(`${name} is required`);
  }
  if (lines.length === 0) throw new Error('the order has no lines');
  const products = lines.map((line) => {
    if (line.product_id === null && text(line.product_reference_id) === undefined) {
      throw new Error('a line needs product_id or product_reference_id');
    }
    return defined([
      ['id', line.product_id], ['reference_id', text(line.product_reference_id)], ['name', text(line.product_name)],
      ['quantity', line.quantity], ['external_line_id', line.external_line_id],
      ['quantity_unit_of_measure_code', text(line.unit_of_measure)],
    ]);
  });
  const address = defined([
    ['address1', text(row.address1)], ['address2', text(row.address2)], ['city', text(row.city)],
    ['company_name', text(row.company_name)], ['country', text(row.country)], ['state', text(row.state)],
    ['zip_code', text(row.zip_code)],
  ]);
  const recipient = defined([
    ['name', text(row.recipient_name)], ['email', text(row.recipient_email)],
    ['phone_number', text(row.recipient_phone)], ['address', address],
  ]);
  const parts = [
    `"reference_id":${JSON.stringify(row.reference_id)}`, `"shipping_method":${JSON.stringify(text(row.shipping_method))}`,
    `"products":${JSON.stringify(products)}`, `"recipient":${JSON.stringify(recipient)}`,
  ];
  if (row.total_price !== null) {
    const money = String(row.total_price);
    if (!MONEY.test(money)) throw new Error(`total_price is not a decimal number: ${money}`);
    parts.push(`"financials":{"total_price":${money}}`);
  }
  const tags = text(row.tags) && Object.entries(JSON.parse(row.tags)).map(([name, value]) => ({ name, value }));
  const optional = defined([
    ['gift_message', text(row.gift_message)], ['location_id', row.location_id],
    ['order_number', text(row.order_number)], ['origin_platform_program', text(row.origin_platform_program)],
    ['purchase_date', row.purchase_date ? iso8601(row.purchase_date) : undefined],
    ['sales_channel', text(row.sales_channel)], ['tags', tags], ['type', text(row.type)],
  ]);
  for (const [key, value] of Object.entries(optional)) parts.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
  return `{${parts.join(',')}}`;
}

// Keep-alive connections, at most `inFlight` of them; a 429 is waited out as Retry-After says.
class Api {
  constructor(baseUrl, version, token, inFlight) {
    const url = new URL(baseUrl);
    this.transport = url.protocol === 'https:' ? https : http;
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: inFlight });
    this.host = url.hostname;
    this.port = url.port;
    this.prefix = `${url.pathname.replace(/\/$/, '')}/${version}`;
    this.headers = { Authorization: `Bearer ${token}`, Accept: 'application/json', 'User-Agent': 'merchant-sync/1.0' };
    this.requests = 0;
    this.throttled = 0;
  }

  once(method, route, body, headers) {
    return new Promise((resolve, reject) => {
      const all = { ...this.headers, ...headers };
      if (body !== undefined) {
        all['Content-Type'] = 'application/json';
        all['Content-Length'] = Buffer.byteLength(body);
      }
      const request = this.transport.request(
        { host: this.host, port: this.port, path: this.prefix + route, method, headers: all, agent: this.agent,
          timeout: 30000 },
        (response) => {
          const chunks = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode, headers: response.headers,
                                             data: Buffer.concat(chunks).toString() }));
          response.on('error', reject);
        });
      request.on('timeout', () => request.destroy(new Error('timed out')));
      request.on('error', reject);
      request.end(body);
    });
  }

  // {status, data}; retries a lost connection and a 5xx a few times, waits out 429s.
  async request(method, route, body, headers) {
    for (let attempt = 1; ; ++attempt) {
      let response;
      this.requests += 1;
      try {
        response = await this.once(method, route, body, headers);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS) return { status: 0, data: String(error) };
        await sleep(100 * 2 ** attempt);
        continue;
      }
      if (response.status === 429) {
        this.throttled += 1;
        attempt -= 1;
        await sleep(1000 * Number(response.headers['x-retry-after'] || response.headers['retry-after'] || 1));
        continue;
      }
      if (response.status >= 500 && attempt < MAX_ATTEMPTS) {
        await sleep(100 * 2 ** attempt);
        continue;
      }
      return response;
    }
  }
}

async function writableChannel(api, configured) {
  if (configured) return configured;
  const { status, data } = await api.request('GET', '/channel');
  if (status !== 200) throw new Error(`GET /channel answered ${status}: ${data.slice(0, 200)}`);
  const channel = JSON.parse(data).items.find((c) => (c.scopes || []).includes('orders_write'));
  if (!channel) throw new Error('no channel with the orders_write scope');
  return channel.id;
}

function openDatabase(file, modulesDir) {
  const Database = require(path.join(modulesDir, 'node_modules', 'better-sqlite3'));
  const db = new Database(file, { timeout: 30000 });
  db.exec(RESULT_TABLE);
  const orders = db.prepare(
    `SELECT ${ORDER_COLUMNS} FROM fulfillsync_orders o WHERE o.reference_id > ? AND o.cancel_requested = 0 ` +
    'AND NOT EXISTS (SELECT 1 FROM peer_order_sync s WHERE s.reference_id = o.reference_id ' +
    "AND s.state <> 'failed') ORDER BY o.reference_id LIMIT ?");
  const lines = db.prepare(
    `SELECT ${LINE_COLUMNS} FROM fulfillsync_order_lines WHERE order_reference_id >= ? AND order_reference_id <= ? ` +
    'ORDER BY order_reference_id, line_number');
  const insert = db.prepare('INSERT OR REPLACE INTO peer_order_sync VALUES (?, ?, ?, ?, ?)');
  return {
    // One page of unsent orders after `after` and their lines, in one read transaction.
    readPage: db.transaction((after, pageSize) => {
      const page = orders.all(after, pageSize);
      const byOrder = new Map();
      if (page.length > 0) {
        for (const line of lines.iterate(page[0].reference_id, page[page.length - 1].reference_id)) {
          if (!byOrder.has(line.order_reference_id)) byOrder.set(line.order_reference_id, []);
          byOrder.get(line.order_reference_id).push(line);
        }
      }
      return { page, byOrder };
    }),
    writeResults: db.transaction((results) => { for (const r of results) insert.run(...r); }),
  };
}

async function main() {
  const { values: options } = parseArgs({
    options: {
      db: { type: 'string' }, 'base-url': { type: 'string' }, 'token-file': { type: 'string' },
      'api-version': { type: 'string', default: '2026-07' }, 'channel-id': { type: 'string' },
      'page-size': { type: 'string', default: '500' }, 'in-flight': { type: 'string', default: '8' },
      modules: { type: 'string' }, help: { type: 'boolean' },
    },
  });
  if (options.help || !options.db || !options['base-url'] || !options['token-file']) {
    console.log('usage: node_peer.js --db FILE --base-url URL --token-file FILE [--api-version V] ' +
                '[--channel-id N] [--page-size N] [--in-flight N] [--modules DIR]');
    return options.help ? 0 : 2;
  }
  const started = process.hrtime.bigint();
  const modulesDir = options.modules || process.env.FULFILLSYNC_PEER_NODE_DIR ||
                     path.join(__dirname, '..', '..', 'build', 'peer-node');
  const inFlight = Number(options['in-flight']);
  const pageSize = Number(options['page-size']);
  const token = fs.readFileSync(options['token-file'], 'utf8').trim();
  const api = new Api(options['base-url'], options['api-version'], token, inFlight);
  const channel = { service_channel_id: String(await writableChannel(api, Number(options['channel-id'] || 0))) };
  const db = openDatabase(options.db, modulesDir);

  let created = 0;
  let failures = 0;
  const send = async (row, lines) => {
    const now = new Date().toISOString();
    let body;
    try {
      body = orderBody(row, lines);
    } catch (error) {
      failures += 1;
      return [row.reference_id, null, 'invalid', error.message, now];
    }
    const { status, data } = await api.request('POST', '/order', body, channel);
    if (status === 201) {
      created += 1;
      return [row.reference_id, JSON.parse(data).id, 'created', null, now];
    }
    if (status === 422 && data.includes('existing ReferenceId')) {
      return [row.reference_id, null, 'duplicate', data.slice(0, 500), now];
    }
    failures += 1;
    return [row.reference_id, null, 'failed', `${status} ${data.slice(0, 500)}`, now];
  };

  for (let after = ''; ;) {
    const { page, byOrder } = db.readPage(after, pageSize);
    if (page.length === 0) break;
    const results = new Array(page.length);
    let next = 0;
    const worker = async () => {
      while (next < page.length) {
        const i = next++;
        results[i] = await send(page[i], byOrder.get(page[i].reference_id) || []);
      }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, page.length) }, worker));
    db.writeResults(results);
    after = page[page.length - 1].reference_id;
  }
  api.agent.destroy();

  console.log(JSON.stringify({
    peer: 'node', in_flight: inFlight, orders: created, failures,
    wall_seconds: Math.round(Number(process.hrtime.bigint() - started) / 1e6) / 1e3,
    requests: api.requests, throttled: api.throttled,
  }));
  return failures === 0 ? 0 : 1;
}

main().then((code) => { process.exitCode = code; }, (error) => { console.error(error); process.exitCode = 1; });
