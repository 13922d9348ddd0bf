//! Reading how long a server asks us to wait, from every place servers put it. Pure and total:
//! any header or body value (huge, negative, `inf`, `NaN`, `1e309`, garbage, a date long past or
//! far ahead) gives either `None` or a duration of at most [`MAX_RETRY_HINT`]; nothing panics.
//!
//! Where hints come from, first found wins: `retry-after-ms`, `Retry-After` (delta seconds, or an
//! HTTP date), a JSON body's retry field (`retry_after`, `retry_after_ms`, `retryAfter`,
//! `retryDelay`, Google's `details[].retryDelay`), then the largest of the `x-ratelimit-reset*`
//! headers (OpenAI's `6m0s` durations, or seconds / a Unix time).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest wait a hint can ask for. The loop caps its own waits lower
/// (`EngineConfig::retry_max_delay`); this bound only keeps the arithmetic finite and the
/// message sane.
pub const MAX_RETRY_HINT: Duration = Duration::from_secs(24 * 3600);

/// `seconds` as a capped duration; `None` for NaN, infinities and negatives.
pub fn from_seconds(seconds: f64) -> Option<Duration> {
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(seconds.min(MAX_RETRY_HINT.as_secs_f64())))
}

fn number(value: &str) -> Option<f64> {
    let v = value.trim();
    // Rust's float syntax also takes "inf", "NaN" and exponents: all are checked by the caller.
    if v.is_empty() || v.len() > 64 {
        return None;
    }
    v.parse::<f64>().ok()
}

/// A Go-style duration as OpenAI sends it (`1s`, `6m0s`, `1h2m3.5s`, `20ms`), or a plain number
/// of seconds.
pub fn duration_text(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Some(n) = number(v) {
        return from_seconds(n);
    }
    if v.is_empty() || v.len() > 64 {
        return None;
    }
    let mut total = 0.0f64;
    let mut rest = v;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += n * scale;
    }
    from_seconds(total)
}

/// Seconds since the Unix epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form
/// RFC 9110 requires senders to use.
pub fn http_date(value: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = value.split_ascii_whitespace().collect();
    let [wkday, day, month, year, time, zone] = parts[..] else { return None };
    if !wkday.ends_with(',') || !zone.eq_ignore_ascii_case("GMT") {
        return None;
    }
    let day: u32 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month = months.iter().position(|m| m.eq_ignore_ascii_case(month))? as u32 + 1;
    let year: i64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let mut hms = time.split(':').map(|p| p.parse::<u32>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(h * 3600 + m * 60 + s);
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `Retry-After`: delta seconds, or an HTTP date (a date in the past means "now").
pub fn retry_after_header(value: &str, now: SystemTime) -> Option<Duration> {
    if let Some(n) = number(value) {
        return from_seconds(n);
    }
    let at = http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO).min(MAX_RETRY_HINT))
}

/// An `x-ratelimit-reset*` value: a Go duration, seconds, or a Unix time (seconds or ms).
fn reset_header(value: &str, now: SystemTime) -> Option<Duration> {
    let Some(n) = number(value) else { return duration_text(value) };
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    let epoch_secs = if n > 1e12 {
        n / 1000.0
    } else if n > 1e9 {
        n
    } else {
        return from_seconds(n);
    };
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    from_seconds((epoch_secs - now).max(0.0))
}

/// A retry field of a JSON error body, if it has one.
pub fn body_hint(body: &str) -> Option<Duration> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let err = v.get("error").filter(|e| e.is_object()).unwrap_or(&v);
    let value_secs = |x: &serde_json::Value, scale: f64| match x {
        serde_json::Value::Number(n) => n.as_f64().and_then(|n| from_seconds(n * scale)),
        serde_json::Value::String(s) if scale == 1.0 => duration_text(s),
        serde_json::Value::String(s) => number(s).and_then(|n| from_seconds(n * scale)),
        _ => None,
    };
    for obj in [err, &v] {
        for (key, scale) in [
            ("retry_after_ms", 1e-3),
            ("retryAfterMs", 1e-3),
            ("retry_after", 1.0),
            ("retryAfter", 1.0),
            ("retry_after_seconds", 1.0),
            ("retryDelay", 1.0),
        ] {
            if let Some(d) = obj.get(key).and_then(|x| value_secs(x, scale)) {
                return Some(d);
            }
        }
    }
    // Google: {"error": {"details": [{"@type": "...RetryInfo", "retryDelay": "30s"}]}}
    err.get("details")?.as_array()?.iter().find_map(|d| d.get("retryDelay").and_then(|x| value_secs(x, 1.0)))
}

/// The wait a failed response asks for. `header` looks up a response header by lowercase name.
pub fn retry_hint(header: impl Fn(&str) -> Option<String>, body: &str, now: SystemTime) -> Option<Duration> {
    if let Some(d) = header("retry-after-ms").and_then(|v| number(&v)).and_then(|ms| from_seconds(ms / 1000.0)) {
        return Some(d);
    }
    if let Some(d) = header("retry-after").and_then(|v| retry_after_header(&v, now)) {
        return Some(d);
    }
    if let Some(d) = body_hint(body) {
        return Some(d);
    }
    ["x-ratelimit-reset", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .iter()
        .filter_map(|name| header(name).and_then(|v| reset_header(&v, now)))
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> SystemTime {
        // Wed, 21 Oct 2015 07:28:00 GMT
        UNIX_EPOCH + Duration::from_secs(1_445_412_480)
    }

    fn with(headers: &[(&str, &str)], body: &str) -> Option<Duration> {
        retry_hint(|name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()), body, now())
    }

    #[test]
    fn hostile_hints_never_panic_and_are_capped_or_ignored() {
        let hostile = [
            "inf",
            "-inf",
            "+inf",
            "infinity",
            "NaN",
            "nan",
            "1e309",
            "-1e309",
            "1e19",
            "1e300",
            "18446744073709551616",
            "-1",
            "-0.5",
            "1e-400",
            "0x10",
            "",
            " ",
            "1,5",
            "5 s",
            "1e",
            "e5",
            "Wed, 21 Oct 99999 07:28:00 GMT",
            "Wed, 31 Feb 2015 07:28:00 GMT",
            "Wed, 21 Oct 2015 25:28:00 GMT",
            "\u{0}",
            "💥",
            "6m0x",
            "1h1h1h9999999999999999999h",
            "-6m",
            "ms",
            "1.2.3s",
        ];
        let long = "9".repeat(400);
        let hostile = hostile.iter().copied().chain([long.as_str()]);
        let names = [
            "retry-after",
            "retry-after-ms",
            "x-ratelimit-reset",
            "x-ratelimit-reset-requests",
            "x-ratelimit-reset-tokens",
        ];
        for value in hostile {
            for name in names {
                let d = with(&[(name, value)], "");
                assert!(d.is_none_or(|d| d <= MAX_RETRY_HINT), "{name}: {value:?} -> {d:?}");
            }
            for body in [
                format!(r#"{{"error":{{"retry_after":"{value}"}}}}"#),
                format!(r#"{{"error":{{"retryDelay":"{value}"}}}}"#),
                format!(r#"{{"retry_after_ms":"{value}"}}"#),
            ] {
                let d = with(&[], &body);
                assert!(d.is_none_or(|d| d <= MAX_RETRY_HINT), "{body} -> {d:?}");
            }
        }
        for number in ["1e309", "-1", "1e300", "18446744073709551616", "1.7976931348623157e308"] {
            let body = format!(r#"{{"error":{{"retry_after":{number},"retry_after_ms":{number}}}}}"#);
            let d = with(&[], &body);
            assert!(d.is_none_or(|d| d <= MAX_RETRY_HINT), "{body} -> {d:?}");
        }
    }

    #[test]
    fn huge_hints_are_capped_not_dropped() {
        assert_eq!(with(&[("retry-after", "1e19")], ""), Some(MAX_RETRY_HINT));
        assert_eq!(with(&[("retry-after-ms", "1e300")], ""), Some(MAX_RETRY_HINT));
        assert_eq!(with(&[], r#"{"error":{"retry_after":1e300}}"#), Some(MAX_RETRY_HINT));
    }

    #[test]
    fn absurd_values_fall_through_to_the_next_source() {
        assert_eq!(with(&[("retry-after-ms", "NaN"), ("retry-after", "3")], ""), Some(Duration::from_secs(3)));
        assert_eq!(
            with(&[("retry-after", "-5"), ("x-ratelimit-reset-requests", "2s")], ""),
            Some(Duration::from_secs(2))
        );
    }

    #[test]
    fn each_source_is_read() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, Option<Duration>);
        let cases: &[Case] = &[
            (&[("retry-after", "3")], "", Some(s(3))),
            (&[("retry-after", " 1.5 ")], "", Some(ms(1500))),
            (&[("retry-after", "3"), ("retry-after-ms", "250")], "", Some(ms(250))),
            (&[("retry-after", "Wed, 21 Oct 2015 07:28:30 GMT")], "", Some(s(30))),
            (&[("retry-after", "Wed, 21 Oct 2015 07:00:00 GMT")], "", Some(Duration::ZERO)),
            (&[("retry-after", "Thu, 01 Jan 2099 00:00:00 GMT")], "", Some(MAX_RETRY_HINT)),
            (&[("retry-after", "Wednesday, 21-Oct-15 07:28:30 GMT")], "", None),
            (&[("x-ratelimit-reset-requests", "1s"), ("x-ratelimit-reset-tokens", "6m0s")], "", Some(s(360))),
            (&[("x-ratelimit-reset-tokens", "1h2m3.5s")], "", Some(ms(3_723_500))),
            (&[("x-ratelimit-reset-tokens", "20ms")], "", Some(ms(20))),
            (&[("x-ratelimit-reset", "1445412490")], "", Some(s(10))),
            (&[("x-ratelimit-reset", "1445412490000")], "", Some(s(10))),
            (&[("x-ratelimit-reset", "7")], "", Some(s(7))),
            (&[], r#"{"error":{"message":"slow","retry_after":4}}"#, Some(s(4))),
            (&[], r#"{"error":{"message":"slow","retry_after_ms":400}}"#, Some(ms(400))),
            (&[], r#"{"error":{"details":[{"@type":"x.RetryInfo","retryDelay":"30s"}]}}"#, Some(s(30))),
            (&[], r#"{"retryAfter":"2"}"#, Some(s(2))),
            (&[], "<html>", None),
            (&[], "", None),
        ];
        for (headers, body, want) in cases {
            assert_eq!(with(headers, body), *want, "{headers:?} {body}");
        }
    }

    #[test]
    fn http_dates_are_read_exactly() {
        assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(UNIX_EPOCH + Duration::from_secs(784_111_777)));
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(UNIX_EPOCH));
        assert_eq!(http_date("Tue, 29 Feb 2000 12:00:00 GMT"), Some(UNIX_EPOCH + Duration::from_secs(951_825_600)));
        assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
        assert_eq!(http_date("Sun 06 Nov 1994 08:49:37 GMT"), None);
    }
}
