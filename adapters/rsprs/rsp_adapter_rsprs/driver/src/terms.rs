//! Packed batches in, N-Triples terms out, and the clock result events are stamped with.

use oxigraph::io::{RdfFormat, RdfParser};
use oxigraph::model::{GraphName, NamedNode, Quad, Term};

/// One packed batch: `<t_app_ms> <s> <p> <o>` per line (the subprocess runtime's push format).
pub fn parse_batch(packed: &str) -> Result<Vec<(i64, Quad)>, String> {
    let mut times = Vec::new();
    let mut body = String::with_capacity(packed.len() + packed.len() / 16);
    for (number, line) in packed.split('\n').filter(|l| !l.is_empty()).enumerate() {
        let (t, triple) = line.split_once(' ').unwrap_or(("", line));
        let t: i64 = t.parse().map_err(|_| {
            let shown: String = line.chars().take(200).collect();
            format!("packed batch line {}: expected '<t_app_ms> <s> <p> <o>', got {shown:?}", number + 1)
        })?;
        times.push(t);
        body.push_str(triple);
        body.push_str(" .\n");
    }
    let mut quads = Vec::with_capacity(times.len());
    for quad in RdfParser::from_format(RdfFormat::NTriples).for_slice(body.as_bytes()) {
        quads.push(quad.map_err(|e| format!("packed batch: not N-Triples: {e}"))?);
    }
    if quads.len() != times.len() {
        return Err(format!(
            "packed batch: {} lines but {} triples parsed",
            times.len(),
            quads.len()
        ));
    }
    Ok(times.into_iter().zip(quads).collect())
}

/// Every triple of an RDF file, put in the named graph `graph` (the static data of a query).
pub fn read_static(graph: &str, file: &str) -> Result<Vec<Quad>, String> {
    let ext = std::path::Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    let format = RdfFormat::from_extension(&ext.to_lowercase())
        .ok_or_else(|| format!("static data {file}: unknown RDF format (use .nt, .ttl, .nq, .trig)"))?;
    let bytes = std::fs::read(file).map_err(|e| format!("static data {file}: {e}"))?;
    let graph = NamedNode::new(graph).map_err(|e| format!("static graph <{graph}>: {e}"))?;
    let mut out = Vec::new();
    for quad in RdfParser::from_format(format).for_slice(&bytes) {
        let q = quad.map_err(|e| format!("static data {file}: {e}"))?;
        out.push(Quad::new(q.subject, q.predicate, q.object, GraphName::NamedNode(graph.clone())));
    }
    Ok(out)
}

/// A term as N-Triples (oxrdf's Display is N-Triples: `<iri>`, `_:b`, `"lex"`, `"lex"@l`,
/// `"lex"^^<dt>`, with xsd:string literals written plain and the lexical form escaped).
pub fn ntriples(term: &Term) -> String {
    term.to_string()
}

/// CLOCK_MONOTONIC in nanoseconds: the clock the SDK compares `t_sys_ns` with.
pub fn monotonic_ns() -> i128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}
