//! The driver's state and verbs: one `Query` (an rsp-rs engine) per registered query.

use crate::terms::{monotonic_ns, ntriples, parse_batch, read_static};
use oxigraph::model::{NamedNode, Quad};
use oxigraph::sparql::{QueryResults, SparqlEvaluator};
use oxigraph::store::Store;
use rsp_rs::{CSPARQLWindow, QuadContainer, R2ROperator, RSPEngine, RSPQLParser, StreamType};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

const TICK: &str = "urn:rsp-sdk:tick";

type Shared<T> = Arc<Mutex<T>>;

/// Results and evaluation counts the window callbacks write and `poll`/`stats` read.
#[derive(Default)]
pub struct Outbox {
    pub results: Vec<String>,
    pub evaluations: u64,
    pub bindings: u64,
    pub errors: Vec<String>,
}

struct Window {
    name: String,
    stream: String,
    window: Shared<CSPARQLWindow>,
    /// The window instance `[open, close)` the next `add` will report, if any.
    trigger: Shared<Option<(i64, i64)>>,
}

struct Query {
    /// Kept alive for its windows (its stream threads end when it is dropped).
    _engine: RSPEngine,
    windows: Vec<Window>,
    r2r: Shared<R2ROperator>,
}

#[derive(Default)]
pub struct Driver {
    streams: HashSet<String>,
    queries: Vec<(String, Query)>,
    static_quads: Vec<Quad>,
    outbox: Shared<Outbox>,
    last_time: Option<i64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Driver {
    pub fn open(&mut self, _config: &str, workdir: &str) -> Result<Value, String> {
        std::fs::create_dir_all(workdir).map_err(|e| format!("workdir {workdir}: {e}"))?;
        std::env::set_current_dir(workdir).map_err(|e| format!("workdir {workdir}: {e}"))?;
        Ok(Value::Null)
    }

    pub fn load_static(&mut self, graph: &str, file: &str) -> Result<Value, String> {
        let quads = read_static(graph, file)?;
        for (_, q) in &self.queries {
            let mut r2r = lock(&q.r2r);
            quads.iter().for_each(|quad| r2r.add_static_data(quad.clone()));
        }
        let n = quads.len();
        self.static_quads.extend(quads);
        Ok(json!(n))
    }

    pub fn register_stream(&mut self, iri: &str) -> Result<Value, String> {
        self.streams.insert(iri.to_string());
        Ok(Value::Null)
    }

    pub fn register_query(&mut self, name: &str, text: &str) -> Result<Value, String> {
        if self.queries.iter().any(|(n, _)| n == name) {
            return Err(format!("a query named {name} is already registered"));
        }
        let parsed = RSPQLParser::new(text.to_string()).parse();
        self.check_windows(&parsed.s2r)?;
        let variables = select_variables(&parsed.sparql_query)?;
        let mut engine = RSPEngine::new(text.to_string());
        engine.initialize()?;
        let mut r2r = R2ROperator::new(parsed.sparql_query.clone());
        self.static_quads.iter().for_each(|q| r2r.add_static_data(q.clone()));
        let r2r = Arc::new(Mutex::new(r2r));
        let mut windows = Vec::new();
        for def in &parsed.s2r {
            let window = engine
                .get_window(&def.window_name)
                .ok_or_else(|| format!("rsp-rs made no window <{}>", def.window_name))?;
            windows.push(Window {
                name: def.window_name.clone(),
                stream: def.stream_name.clone(),
                window,
                trigger: Arc::new(Mutex::new(None)),
            });
        }
        for w in &windows {
            self.subscribe(name, w, &windows, &r2r, &variables);
        }
        let query = Query { _engine: engine, windows, r2r };
        self.queries.push((name.to_string(), query));
        Ok(json!(variables))
    }

    fn check_windows(&self, s2r: &[rsp_rs::WindowDefinition]) -> Result<(), String> {
        if s2r.is_empty() {
            return Err("rsp-rs found no window: it needs a line \"FROM NAMED WINDOW <w> ON \
                        STREAM <s> [RANGE n STEP m]\""
                .into());
        }
        let mut seen = HashSet::new();
        for w in s2r {
            if w.width <= 0 || w.slide <= 0 {
                return Err(format!(
                    "rsp-rs window <{}>: RANGE and STEP must be positive integers, got {} and {}",
                    w.window_name, w.width, w.slide
                ));
            }
            if NamedNode::new(&w.window_name).is_err() {
                return Err(format!("rsp-rs window name {:?} is not an IRI", w.window_name));
            }
            if !seen.insert(w.stream_name.clone()) {
                return Err(format!(
                    "rsp-rs keeps one window per stream: <{}> has several",
                    w.stream_name
                ));
            }
            if !self.streams.contains(&w.stream_name) {
                return Err(format!("query reads stream <{}>, which is not registered", w.stream_name));
            }
        }
        Ok(())
    }

    /// What `RSPEngine::register` subscribes, keeping the solutions as terms.
    fn subscribe(
        &self,
        query: &str,
        me: &Window,
        all: &[Window],
        r2r: &Shared<R2ROperator>,
        variables: &[String],
    ) {
        let others: Vec<Shared<CSPARQLWindow>> =
            all.iter().filter(|w| w.name != me.name).map(|w| w.window.clone()).collect();
        let (r2r, outbox, trigger) = (r2r.clone(), self.outbox.clone(), me.trigger.clone());
        let (query, variables) = (query.to_string(), variables.to_vec());
        let callback = move |mut container: QuadContainer| {
            let timestamp = container.last_timestamp_changed;
            for other in &others {
                let other = lock(other);
                if let Some(content) = other.get_content_from_window(timestamp) {
                    for quad in &content.elements {
                        container.add(quad.clone(), timestamp);
                    }
                }
            }
            container.elements.retain(|q| !is_tick(q));
            let fired = lock(&trigger).take();
            let evaluation = evaluate(&lock(&r2r), &container, &variables);
            let mut out = lock(&outbox);
            out.evaluations += 1;
            match evaluation {
                Ok(rows) if rows.is_empty() => {}
                Ok(rows) => {
                    out.bindings += rows.len() as u64;
                    out.results.push(result_event(&query, fired, &variables, rows));
                }
                Err(e) => out.errors.push(format!("rsp-rs failed evaluating query {query}: {e}")),
            }
        };
        lock(&me.window).subscribe(StreamType::RStream, callback);
    }

    pub fn push(&mut self, stream: &str, packed: &str) -> Result<Value, String> {
        if !self.streams.contains(stream) {
            return Err(format!("stream <{stream}> is not registered"));
        }
        for (t, quad) in parse_batch(packed)? {
            self.add(stream, &quad, t);
        }
        self.raise_errors()?;
        Ok(Value::Null)
    }

    /// Hand one element to every window on `stream`, as the engine's stream thread would.
    pub fn add(&mut self, stream: &str, quad: &Quad, t: i64) {
        for (_, q) in &self.queries {
            for w in q.windows.iter().filter(|w| w.stream == stream) {
                add_to_window(w, quad, t);
            }
        }
        self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
    }

    pub fn advance_time(&mut self, target: i64) -> Result<Value, String> {
        let tick = Quad::new(
            NamedNode::new_unchecked(TICK),
            NamedNode::new_unchecked(TICK),
            NamedNode::new_unchecked(TICK),
            oxigraph::model::GraphName::DefaultGraph,
        );
        while let Some(close) = self.next_close(target) {
            let t = close + 1;
            for (_, q) in &self.queries {
                for w in &q.windows {
                    tick_window(w, &tick, t);
                }
            }
            self.last_time = Some(t);
        }
        self.raise_errors()?;
        Ok(Value::Null)
    }

    /// The earliest window close at or after the last element whose report `target` allows.
    fn next_close(&self, target: i64) -> Option<i64> {
        let last = self.last_time?;
        self.queries
            .iter()
            .flat_map(|(_, q)| q.windows.iter())
            .flat_map(|w| lock(&w.window).get_active_window_ranges())
            .map(|(_, close)| close)
            .filter(|&c| c >= last && c < target)
            .min()
    }

    pub fn poll(&mut self) -> Result<Value, String> {
        let results = std::mem::take(&mut lock(&self.outbox).results);
        self.raise_errors()?;
        let mut text = results.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        Ok(Value::String(text))
    }

    fn raise_errors(&self) -> Result<(), String> {
        let errors = std::mem::take(&mut lock(&self.outbox).errors);
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
    }

    pub fn stats(&self) -> Result<Value, String> {
        let out = lock(&self.outbox);
        let mut t0 = serde_json::Map::new();
        for (name, q) in &self.queries {
            for w in &q.windows {
                t0.insert(format!("{name} {}", w.name), json!(lock(&w.window).t0));
            }
        }
        Ok(json!({
            "rss": rss_bytes(),
            "evaluations": out.evaluations,
            "bindings_emitted": out.bindings,
            "window_t0": t0,
        }))
    }

    pub fn close(&mut self) -> Result<Value, String> {
        self.queries.clear();
        Ok(Value::Null)
    }
}

/// `CSPARQLWindow::add`, after noting which instance it will report: the one with the latest
/// close among those closed before `t`, when `t` moves the window's time on (its own rule).
fn add_to_window(w: &Window, quad: &Quad, t: i64) {
    let mut window = lock(&w.window);
    let fired = if t > window.time {
        window.get_active_window_ranges().into_iter().filter(|&(_, c)| c < t).max_by_key(|&(_, c)| c)
    } else {
        None
    };
    *lock(&w.trigger) = fired;
    window.add(quad.clone(), t);
}

/// Add the tick so the window reports what closed before `t`, then undo what else it did: the
/// instances it opened (a real element would open only those holding its own time, and will
/// again) and its place in the remaining contents.
fn tick_window(w: &Window, tick: &Quad, t: i64) {
    let before: HashSet<(i64, i64)> =
        lock(&w.window).get_active_window_ranges().into_iter().collect();
    add_to_window(w, tick, t);
    let mut window = lock(&w.window);
    window.active_windows.retain(|inst, _| before.contains(&(inst.open, inst.close)));
    for content in window.active_windows.values_mut() {
        content.elements.retain(|e| !is_tick(e));
    }
}

fn is_tick(q: &Quad) -> bool {
    matches!(&q.subject, oxigraph::model::NamedOrBlankNode::NamedNode(n) if n.as_str() == TICK)
}

/// The query's projected variables, after checking it parses and is a SELECT (rsp-rs accepts
/// any text and would fail only when a window first closes).
fn select_variables(sparql: &str) -> Result<Vec<String>, String> {
    let store = Store::new().map_err(|e| e.to_string())?;
    let prepared = SparqlEvaluator::new()
        .parse_query(sparql)
        .map_err(|e| format!("rsp-rs (Oxigraph) rejects the query: {e}"))?;
    match prepared.on_store(&store).execute() {
        Ok(QueryResults::Solutions(s)) => Ok(s.variables().iter().map(|v| v.as_str().to_string()).collect()),
        Ok(_) => Err("rsp-rs's results are SELECT solutions: this query is not a SELECT".into()),
        Err(e) => Err(format!("rsp-rs (Oxigraph) cannot evaluate the query: {e}")),
    }
}

type Rows = Vec<Vec<Option<String>>>;

fn evaluate(r2r: &R2ROperator, container: &QuadContainer, vars: &[String]) -> Result<Rows, String> {
    let QueryResults::Solutions(solutions) = r2r.execute(container).map_err(|e| e.to_string())?
    else {
        return Ok(Vec::new());
    };
    let mut rows = Vec::new();
    for solution in solutions {
        let solution = solution.map_err(|e| e.to_string())?;
        rows.push(vars.iter().map(|v| solution.get(v.as_str()).map(ntriples)).collect());
    }
    Ok(rows)
}

fn result_event(query: &str, fired: Option<(i64, i64)>, vars: &[String], rows: Rows) -> String {
    json!({
        "query": query,
        "t_sys_ns": monotonic_ns() as i64,
        "t_app_ms": fired.map(|(_, close)| close),
        "vars": vars,
        "rows": rows,
    })
    .to_string()
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}
