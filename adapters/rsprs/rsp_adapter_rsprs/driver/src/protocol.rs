//! JSON lines on stdin/stdout: `{"id", "verb", "args"}` in, `{"id", "ok", "result"|"error"}`
//! out. A panic inside the engine becomes that verb's error, never a dead driver.
//! `push_raw` (args: stream, byte count) is `push` with the packed batch as the raw bytes that
//! follow the request line: no JSON escaping of megabytes per batch on either side.

use crate::driver::Driver;
use serde_json::{json, Value};
use std::io::{BufRead, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn arg<'a>(args: &'a [Value], i: usize, verb: &str) -> Result<&'a str, String> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s),
        Some(Value::Null) | None if verb == "open" => Ok(""),
        other => Err(format!("{verb}: argument {i} must be a string, got {other:?}")),
    }
}

fn int_arg(args: &[Value], i: usize, verb: &str) -> Result<i64, String> {
    args.get(i)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("{verb}: argument {i} must be an integer"))
}

fn dispatch(d: &mut Driver, verb: &str, args: &[Value]) -> Result<Value, String> {
    match verb {
        "open" => d.open(arg(args, 0, verb)?, arg(args, 1, verb)?),
        "load_static" => d.load_static(arg(args, 0, verb)?, arg(args, 1, verb)?),
        "register_stream" => d.register_stream(arg(args, 0, verb)?),
        "register_query" => d.register_query(arg(args, 0, verb)?, arg(args, 1, verb)?),
        "push" => d.push(arg(args, 0, verb)?, arg(args, 1, verb)?),
        "advance_time" => d.advance_time(int_arg(args, 0, verb)?),
        "poll" => d.poll(),
        "stats" => d.stats(),
        "close" => d.close(),
        _ => Err(format!("unknown verb {verb}")),
    }
}

fn reply(id: &Value, outcome: std::thread::Result<Result<Value, String>>) -> Value {
    match outcome {
        Ok(Ok(result)) => json!({"id": id, "ok": true, "result": result}),
        Ok(Err(error)) => json!({"id": id, "ok": false, "error": error}),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            json!({"id": id, "ok": false, "error": format!("rsp-rs panicked: {msg}")})
        }
    }
}

/// The raw payload of a `push_raw` request (its byte count is argument 1); `None` when stdin
/// ended or failed before all of it came.
fn read_payload(input: &mut impl Read, args: &[Value]) -> Option<Result<String, String>> {
    let n = match int_arg(args, 1, "push_raw") {
        Ok(n) if n >= 0 => n as usize,
        Ok(n) => return Some(Err(format!("push_raw: negative byte count {n}"))),
        Err(e) => return Some(Err(e)),
    };
    let mut buf = vec![0u8; n];
    input.read_exact(&mut buf).ok()?;
    Some(String::from_utf8(buf).map_err(|e| format!("push_raw: the batch is not UTF-8: {e}")))
}

/// Serve requests until stdin ends; the exit code.
pub fn serve() -> i32 {
    let mut driver = Driver::default();
    let mut input = std::io::BufReader::with_capacity(1 << 20, std::io::stdin().lock());
    let mut stdout = std::io::stdout().lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => return 0,
            Ok(_) => {}
            Err(_) => return 1,
        }
        if line.trim().is_empty() {
            continue;
        }
        let Ok(req) = serde_json::from_str::<Value>(&line) else {
            let shown: String = line.chars().take(200).collect();
            eprintln!("driver: not a JSON request: {shown}");
            continue;
        };
        let verb = req["verb"].as_str().unwrap_or("").to_string();
        let args = req["args"].as_array().cloned().unwrap_or_default();
        let outcome = if verb == "push_raw" {
            let Some(payload) = read_payload(&mut input, &args) else { return 1 };
            catch_unwind(AssertUnwindSafe(|| {
                let stream = arg(&args, 0, &verb)?;
                driver.push(stream, &payload?)
            }))
        } else {
            catch_unwind(AssertUnwindSafe(|| dispatch(&mut driver, &verb, &args)))
        };
        let text = reply(&req["id"], outcome).to_string();
        if writeln!(stdout, "{text}").and_then(|_| stdout.flush()).is_err() {
            return 1;
        }
    }
}
