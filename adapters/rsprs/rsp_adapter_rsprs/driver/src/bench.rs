//! `--bench QUERY_FILE STREAM_IRI PACKED_FILE [BATCH]`: the engine fed straight from a file of
//! packed lines (`<t_app_ms> <s> <p> <o>`), through the same parse and window path as `push`
//! but with no protocol in between. Prints one JSON object: triples, seconds, rate.

use crate::driver::Driver;
use std::time::Instant;

pub fn run(args: &[String]) -> i32 {
    match bench(args) {
        Ok(report) => {
            println!("{report}");
            0
        }
        Err(e) => {
            eprintln!("rsprs-driver --bench: {e}");
            2
        }
    }
}

fn bench(args: &[String]) -> Result<serde_json::Value, String> {
    let [query_file, stream, packed_file, rest @ ..] = args else {
        return Err("usage: --bench QUERY_FILE STREAM_IRI PACKED_FILE [BATCH]".into());
    };
    let batch: usize = match rest.first() {
        Some(b) => b.parse().map_err(|_| format!("BATCH must be a positive integer, got {b:?}"))?,
        None => 10_000,
    };
    let query = std::fs::read_to_string(query_file).map_err(|e| format!("{query_file}: {e}"))?;
    let packed = std::fs::read_to_string(packed_file).map_err(|e| format!("{packed_file}: {e}"))?;
    let lines: Vec<&str> = packed.lines().filter(|l| !l.is_empty()).collect();
    let mut driver = Driver::default();
    driver.register_stream(stream)?;
    driver.register_query("bench", &query)?;
    let started = Instant::now();
    for chunk in lines.chunks(batch.max(1)) {
        driver.push(stream, &chunk.join("\n"))?;
        driver.poll()?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let stats = driver.stats()?;
    Ok(serde_json::json!({
        "triples": lines.len(),
        "seconds": seconds,
        "rate": lines.len() as f64 / seconds.max(1e-9),
        "evaluations": stats["evaluations"],
        "bindings": stats["bindings_emitted"],
    }))
}
