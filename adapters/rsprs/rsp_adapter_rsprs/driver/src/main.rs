//! rsp-sdk driver for rsp-rs 0.3.5: the JSON-lines protocol of rsp_sdk.runtime.subprocess on
//! stdin/stdout, over rsp-rs's own parts (RSPQLParser, RSPEngine's windows, R2ROperator).
//!
//! What the driver adds around the engine, and why (docs/engines/rsprs.md has the evidence):
//! * rsp-rs's `RSPEngine::start_processing` hands results out as one `format!("{:?}")` string
//!   per binding, stamped with the last element's time: no terms to read back, no relation
//!   boundaries. The driver subscribes its own callback to each window instead, doing exactly
//!   what `RSPEngine::register` does (merge the other windows' content at the container's
//!   timestamp, then run the query through the engine's R2ROperator), and keeps the solutions
//!   as terms, one relation per evaluation, stamped with the closing time of the window that
//!   fired;
//! * the engine's streams hand each element to a window thread through a channel; the driver
//!   calls `CSPARQLWindow::add` itself, in order, so a push returns once every evaluation it
//!   triggered is done (as a stream slower than the engine would see it);
//! * rsp-rs only learns time from elements, so `advance_time` feeds one tick element past each
//!   pending window close and removes it from the windows straight away (never queried);
//! * `--bench` runs the same path from a file of packed lines, without the protocol: the
//!   engine's own rate, which the adapter's throughput is measured against.

mod bench;
mod driver;
mod protocol;
mod terms;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        None => protocol::serve(),
        Some("--bench") => bench::run(&args[1..]),
        Some(other) => {
            eprintln!(
                "rsprs-driver: unknown argument {other:?}; usage: rsprs-driver (JSON lines on \
                 stdin) | rsprs-driver --bench QUERY_FILE STREAM_IRI PACKED_FILE"
            );
            2
        }
    };
    std::process::exit(code);
}
