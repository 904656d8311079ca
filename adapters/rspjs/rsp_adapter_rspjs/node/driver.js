#!/usr/bin/env node
// rsp-sdk driver for rsp-js: the JSON-lines protocol of rsp_sdk.runtime.subprocess on
// stdin/stdout, over rsp-js's own API (RSPEngine, getStream(iri).add(quad, ts), register()).
//
// What the driver adds around the engine, and why:
// * stdout carries the protocol, so the engine's console chatter (several console.debug lines
//   per element and window) goes to stderr — or nowhere, the default, because printing it
//   would dominate every throughput figure;
// * rsp-js emits one event per binding through register()'s emitter; the driver groups them
//   back into relations — one per window evaluation — by instrumenting (never replacing) the
//   engine's R2R operator, and stamps each relation with the closing time of the window that
//   triggered it (the engine's own timestamp_from/to drift, see docs/engines/rspjs.md);
// * rsp-js only learns time from elements, so advance_time feeds one "tick" element past each
//   pending window close and removes it from the window contents straight away (it never
//   reaches a query);
// * evaluations are asynchronous (Comunica): with settle = "element" (default) the driver waits
//   for an evaluation to finish before adding the next element, as a stream slower than the
//   engine would; "batch" waits at the end of each pushed batch, "none" never waits.
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');
const { PerformanceObserver } = require('perf_hooks');

const protocolOut = process.stdout;
const realConsole = { error: console.error.bind(console) };

function silenceEngineConsole(toStderr) {
  const sink = toStderr ? (...args) => process.stderr.write(args.join(' ') + '\n') : () => {};
  console.log = sink;
  console.debug = sink;
  console.info = sink;
  console.warn = (...args) => process.stderr.write(args.join(' ') + '\n');
  console.error = console.warn;
}
silenceEngineConsole(false); // before rsp-js is loaded: its Logger prints at construction

const N3 = require('n3');
const rspjs = require('rsp-js');
const { QueryEngine } = require('@comunica/query-sparql');

const { DataFactory } = N3;
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';
const TICK = DataFactory.quad(
  DataFactory.namedNode('urn:rsp-sdk:tick'),
  DataFactory.namedNode('urn:rsp-sdk:tick'),
  DataFactory.namedNode('urn:rsp-sdk:tick'),
);

class EngineFailure extends Error {}

// ---- terms ------------------------------------------------------------------------------------

function escapeLexical(s) {
  return s.replace(/[\\"\n\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r' })[c]);
}

function ntriples(term) {
  switch (term.termType) {
    case 'NamedNode':
      return '<' + term.value + '>';
    case 'BlankNode':
      return '_:' + term.value;
    case 'Literal': {
      const lex = '"' + escapeLexical(term.value) + '"';
      if (term.language) return lex + '@' + term.language;
      const dt = term.datatype ? term.datatype.value : XSD_STRING;
      return dt === XSD_STRING || dt === RDF_LANG_STRING ? lex : lex + '^^<' + dt + '>';
    }
    default:
      throw new EngineFailure('rsp-js returned an unexpected term: ' + JSON.stringify(term));
  }
}

// ---- packed batches -----------------------------------------------------------------------------

function parseBatch(packed) {
  const times = [];
  const body = [];
  let lineNo = 0;
  for (const line of packed.split('\n')) {
    if (line === '') continue;
    lineNo += 1;
    const sp = line.indexOf(' ');
    const t = sp > 0 ? Number(line.slice(0, sp)) : NaN;
    if (!Number.isInteger(t)) {
      throw new EngineFailure(
        `packed batch line ${lineNo}: expected '<t_app_ms> <s> <p> <o>', got ${JSON.stringify(line.slice(0, 200))}`,
      );
    }
    times.push(t);
    body.push(line.slice(sp + 1), ' .\n');
  }
  let quads;
  try {
    quads = new N3.Parser({ format: 'N-Triples' }).parse(body.join(''));
  } catch (err) {
    throw new EngineFailure(`packed batch: N3.js cannot parse it as N-Triples: ${err.message}`);
  }
  if (quads.length !== times.length) {
    throw new EngineFailure(`packed batch: ${times.length} lines but ${quads.length} triples parsed`);
  }
  return { times, quads };
}

// ---- one registered query = one RSPEngine ---------------------------------------------------------

class Query {
  constructor(driver, name, text, windows, variables) {
    this.driver = driver;
    this.name = name;
    this.engine = new rspjs.RSPEngine(text);
    this.variables = variables;
    // RSPEngine builds one CSPARQLWindow per parsed window, in order, and one RDFStream each
    this.streams = new Map(windows.map((w) => [w.stream_name, this.engine.getStream(w.stream_name)]));
    this.engine.windows.forEach((w, i) => driver.windowStreams.set(w, windows[i].stream_name));
    this.trigger = null;
    this.instrument();
    this.emitter = this.engine.register();
    this.bindingsEmitted = 0;
    this.emitter.on('RStream', () => {
      this.bindingsEmitted += 1;
    });
  }

  instrument() {
    // Listeners run in registration order: ours (added before register()) sees which window
    // instance fired before the engine's own listener starts the evaluation.
    for (const window of this.engine.windows) {
      window.subscribe('RStream', (container) => {
        this.trigger = null;
        for (const [instance, content] of window.active_windows) {
          if (content === container) {
            this.trigger = { window: window.name, open: instance.open, close: instance.close };
          }
        }
      });
    }
    const r2r = this.engine.r2r;
    const execute = r2r.execute.bind(r2r);
    r2r.execute = async (container) => {
      const evaluation = { trigger: this.trigger, rows: [], size: container.len() };
      this.trigger = null;
      const done = this.driver.track();
      let stream;
      try {
        stream = await execute(container);
      } catch (err) {
        done(() => this.failed(evaluation, err));
        throw err;
      }
      const on = stream.on.bind(stream);
      stream.on = (event, listener) => {
        if (event !== 'data') return on(event, listener);
        return on('data', (binding) => {
          evaluation.rows.push(binding);
          listener(binding);
        });
      };
      on('end', () => done(() => this.finished(evaluation)));
      on('error', (err) => done(() => this.failed(evaluation, err)));
      return stream;
    };
  }

  finished(evaluation) {
    const tSys = process.hrtime.bigint();
    this.driver.evaluations += 1;
    if (evaluation.rows.length === 0) return; // rsp-js emits nothing for an empty result
    const rows = evaluation.rows.map((b) =>
      this.variables.map((v) => {
        const term = b.get(v);
        return term ? ntriples(term) : null;
      }),
    );
    const tApp = evaluation.trigger ? evaluation.trigger.close : null;
    this.driver.results.push(
      '{"query":' + JSON.stringify(this.name) + ',"t_sys_ns":' + tSys.toString() +
        ',"t_app_ms":' + JSON.stringify(tApp) + ',"vars":' + JSON.stringify(this.variables) +
        ',"rows":' + JSON.stringify(rows) + '}',
    );
  }

  failed(evaluation, err) {
    const where = evaluation.trigger
      ? ` for window [${evaluation.trigger.open}, ${evaluation.trigger.close})`
      : '';
    this.driver.errors.push(`rsp-js failed evaluating query ${this.name}${where}: ${err && err.message ? err.message : err}`);
  }
}

// ---- the driver: protocol verbs -----------------------------------------------------------------

class Driver {
  constructor() {
    this.config = { settle: 'element', engine_console: false };
    this.streams = new Set();
    this.queries = [];
    this.windowStreams = new Map();
    this.results = [];
    this.errors = [];
    this.inflight = 0;
    this.waiters = [];
    this.evaluations = 0;
    this.lastTime = -Infinity;
    this.static = [];
    this.gc = { count: 0, ms: 0 };
  }

  track() {
    this.inflight += 1;
    let finished = false;
    return (fn) => {
      if (finished) return;
      finished = true;
      try {
        fn();
      } finally {
        this.inflight -= 1;
        if (this.inflight === 0) {
          const waiters = this.waiters;
          this.waiters = [];
          waiters.forEach((w) => w());
        }
      }
    };
  }

  settled() {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  open(configJson, workdir) {
    const config = configJson && configJson.trim() ? JSON.parse(configJson) : {};
    this.config = { ...this.config, ...config };
    if (!['element', 'batch', 'none'].includes(this.config.settle)) {
      throw new EngineFailure(`settle must be "element", "batch" or "none", not ${JSON.stringify(this.config.settle)}`);
    }
    silenceEngineConsole(Boolean(this.config.engine_console));
    fs.mkdirSync(workdir, { recursive: true });
    process.chdir(workdir);
    fs.mkdirSync('logs', { recursive: true }); // rsp-js's Logger appends to ./logs/*.log
    const obs = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        this.gc.count += 1;
        this.gc.ms += entry.duration;
      }
    });
    obs.observe({ entryTypes: ['gc'] });
    return null;
  }

  load_static(graphIri, file) {
    const text = fs.readFileSync(file, 'utf8');
    const ext = path.extname(file).toLowerCase();
    const format = { '.nt': 'N-Triples', '.ttl': 'Turtle', '.nq': 'N-Quads', '.trig': 'TriG', '.n3': 'N3' }[ext];
    if (!format) {
      throw new EngineFailure(`static data ${file}: unknown RDF format (use .nt, .ttl, .nq, .trig, .n3)`);
    }
    const graph = DataFactory.namedNode(graphIri);
    const quads = new N3.Parser({ format }).parse(text).map((q) =>
      DataFactory.quad(q.subject, q.predicate, q.object, graph),
    );
    this.static.push(...quads);
    for (const q of this.queries) quads.forEach((quad) => q.engine.addStaticData(quad));
    return quads.length;
  }

  register_stream(iri) {
    this.streams.add(iri);
    return null;
  }

  async register_query(name, text) {
    if (this.queries.some((q) => q.name === name)) {
      throw new EngineFailure(`a query named ${name} is already registered`);
    }
    const parsed = new rspjs.RSPQLParser().parse(text);
    if (parsed.s2r.length === 0) {
      throw new EngineFailure(
        'rsp-js found no window: it needs a line "FROM NAMED WINDOW <w> ON STREAM <s> [RANGE n STEP m]"',
      );
    }
    const seen = new Set();
    for (const w of parsed.s2r) {
      if (!w.window_name || !w.stream_name) {
        throw new EngineFailure(`rsp-js could not resolve the window or stream IRI of ${JSON.stringify(w)}`);
      }
      if (!(w.width > 0) || !(w.slide > 0)) {
        throw new EngineFailure(`rsp-js window <${w.window_name}>: RANGE and STEP must be positive numbers, got ${w.width} and ${w.slide}`);
      }
      if (seen.has(w.stream_name)) {
        throw new EngineFailure(`rsp-js keeps one window per stream: <${w.stream_name}> has several`);
      }
      seen.add(w.stream_name);
      if (!this.streams.has(w.stream_name)) {
        throw new EngineFailure(`query reads stream <${w.stream_name}>, which is not registered`);
      }
    }
    // rsp-js itself accepts any text and fails only when a window first closes; evaluate the
    // query once on an empty store so a broken query is refused now, with Comunica's message.
    let variables;
    try {
      const result = await new QueryEngine().query(parsed.sparql, { sources: [new N3.Store()] });
      if (result.resultType !== 'bindings') {
        throw new Error(`rsp-js evaluates SELECT queries only, this is a ${result.resultType} query`);
      }
      variables = (await result.metadata()).variables.map((v) => v.value);
      await result.execute().then((s) => s.toArray());
    } catch (err) {
      throw new EngineFailure(`rsp-js (Comunica) rejects the query: ${err.message}`);
    }
    const query = new Query(this, name, text, parsed.s2r, variables);
    this.static.forEach((quad) => query.engine.addStaticData(quad));
    this.queries.push(query);
    return variables;
  }

  async push(stream, packed) {
    if (!this.streams.has(stream)) {
      throw new EngineFailure(`stream <${stream}> is not registered`);
    }
    const { times, quads } = parseBatch(packed);
    const targets = this.queries.filter((q) => q.streams.has(stream)).map((q) => q.streams.get(stream));
    const settle = this.config.settle;
    for (let i = 0; i < quads.length; i++) {
      const t = times[i];
      for (let k = 0; k < targets.length; k++) {
        const q = quads[i];
        // add() mutates the quad's graph into the window name: one quad object per window
        targets[k].add(k === 0 ? q : DataFactory.quad(q.subject, q.predicate, q.object), t);
      }
      if (t > this.lastTime) this.lastTime = t;
      if (settle === 'element' && this.inflight > 0) await this.settled();
    }
    if (settle !== 'none') await this.settled();
    this.raiseErrors();
    return null;
  }

  async advance_time(tApp) {
    // Each tick element reports the latest window that closed before it, as a real element
    // would; it is removed from every window right after being added.
    const target = Number(tApp);
    for (let guard = 0; guard < 1000000; guard++) {
      let next = Infinity;
      for (const q of this.queries) {
        for (const w of q.engine.windows) {
          for (const inst of w.active_windows.keys()) {
            if (inst.close >= this.lastTime && inst.close + 1 <= target && inst.close < next) {
              next = inst.close;
            }
          }
        }
      }
      if (next === Infinity) break;
      const t = next + 1;
      for (const q of this.queries) {
        for (const [iri, stream] of q.streams) {
          stream.add(DataFactory.quad(TICK.subject, TICK.predicate, TICK.object), t);
          for (const w of q.engine.windows) {
            if (this.windowStreams.get(w) !== iri) continue;
            for (const content of w.active_windows.values()) {
              for (const e of content.elements) if (e.subject.value === 'urn:rsp-sdk:tick') content.elements.delete(e);
            }
          }
          if (this.config.settle !== 'none') await this.settled();
        }
      }
      this.lastTime = t;
    }
    if (this.config.settle !== 'none') await this.settled();
    this.raiseErrors();
    return null;
  }

  poll() {
    const out = this.results.join('\n');
    this.results = [];
    this.raiseErrors();
    return out ? out + '\n' : '';
  }

  raiseErrors() {
    if (this.errors.length) {
      const message = this.errors.join('; ');
      this.errors = [];
      throw new EngineFailure(message);
    }
  }

  stats() {
    const mem = process.memoryUsage();
    return {
      heap_used: mem.heapUsed,
      heap_committed: mem.heapTotal,
      gc_count: this.gc.count,
      gc_time_ms: Math.round(this.gc.ms),
      rss: mem.rss,
      evaluations: this.evaluations,
      inflight: this.inflight,
      bindings_emitted: this.queries.reduce((n, q) => n + q.bindingsEmitted, 0),
      window_t0: Object.fromEntries(
        this.queries.flatMap((q) => q.engine.windows.map((w) => [q.name + ' ' + w.name, w.t0])),
      ),
    };
  }

  close() {
    this.queries = [];
    return null;
  }
}

// ---- JSON lines -----------------------------------------------------------------------------------

function main() {
  const driver = new Driver();
  process.on('unhandledRejection', (reason) => {
    // rsp-js evaluates inside async listeners: a failing evaluation must not kill the engine
    driver.errors.push(`rsp-js: ${reason && reason.message ? reason.message : reason}`);
  });
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let chain = Promise.resolve();
  rl.on('line', (line) => {
    if (!line.trim()) return;
    chain = chain.then(() => handle(driver, line));
  });
  rl.on('close', () => {
    chain.then(() => process.exit(0));
  });
}

async function handle(driver, line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (err) {
    realConsole.error(`driver: not a JSON request: ${line.slice(0, 200)}`);
    return;
  }
  let reply;
  try {
    const fn = driver[req.verb];
    if (typeof fn !== 'function' || req.verb === 'constructor') {
      throw new EngineFailure(`unknown verb ${req.verb}`);
    }
    const result = await fn.apply(driver, req.args || []);
    reply = JSON.stringify({ id: req.id, ok: true, result: result === undefined ? null : result });
  } catch (err) {
    const known = err instanceof EngineFailure;
    reply = JSON.stringify({
      id: req.id,
      ok: false,
      error: known ? err.message : `${err.name}: ${err.message}`,
      trace: err.stack,
    });
  }
  protocolOut.write(reply + '\n');
}

main();
