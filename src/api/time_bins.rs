//! Width and calendar bins of temporal columns (`bins="1h"`, `"1w"`, `"1mo"`, `"90m"`): edges
//! made from a Polars duration over the column's extremes (or its `range`), then counted as
//! exact integer edges like any others.
//!
//! The edges are those of `pl.datetime_range(start, end, every, time_zone=...)`: edge `i` is
//! `start + i * every`, its months, weeks and days added in the column's local time (a day is
//! then 23 or 25 hours across a daylight-saving switch) and its hours and finer added in
//! absolute time. With no `range`, `start` is the data's minimum truncated as
//! `dt.truncate(every)` truncates (start of the hour, day, ISO week, month, quarter or year, in
//! local time); a duration that mixes units (`"1d12h"`) starts at the boundary of its largest.
//! The last edge is the first one past the maximum. With `range=(lo, hi)`, the edges start at
//! `lo` and end at the first that reaches `hi`: whole bins, the last may reach past `hi`.
//!
//! Local times are found and made as polars-time does (its `timezones` half is not built here):
//! a local time that occurs twice takes the daylight-saving fold of the time it was computed
//! from, and one that does not occur (the skipped hour) is shifted by that offset (RFC 5545).

use chrono::{DateTime, LocalResult, Months, NaiveDateTime, TimeDelta, TimeZone};
use chrono_tz::{OffsetComponents, Tz};
use polars::prelude::{DataType, TimeUnit};
use polars_time::Duration;

use crate::bins::{Binning, Extremes, MAX_BINS};
use crate::dtype;
use crate::error::{HistError, HistResult};
use crate::options::Scalar;

const NS_DAY: i128 = 86_400_000_000_000;
const MS_DAY: i64 = 86_400_000;

/// The edges of `every` over a column of `dtype`: from `range` where given, else from the data's
/// `extremes` (read only then).
pub(crate) fn time_edges(
    every: &str,
    range: Option<(Scalar, Scalar)>,
    dtype: &DataType,
    extremes: impl FnOnce() -> HistResult<Extremes>,
) -> HistResult<Binning> {
    let duration = parse(every)?;
    let clock = Clock::of(every, &duration, dtype)?;
    let span = match range {
        Some((lo, hi)) => Span::Range(exact(lo, dtype)?, exact(hi, dtype)?),
        None => match extremes()? {
            Extremes::Integer(lo, hi) => Span::Data(lo as i64, hi as i64),
            // No values: the one bin that starts at the epoch's boundary.
            Extremes::Empty => Span::Data(0, 0),
            other => {
                return Err(HistError::Internal(format!(
                    "integer extremes expected, got {other:?}"
                )))
            }
        },
    };
    let edges = clock.edges(every, &duration, span)?;
    Ok(Binning::Integers(
        edges.into_iter().map(i128::from).collect(),
    ))
}

/// A Polars duration string as time bins: positive, and no `"i"` (index) units.
pub(crate) fn parse(every: &str) -> HistResult<Duration> {
    let refuse = |why: String| {
        HistError::argument(|s| {
            format!(
                "{} {why}: give a positive Polars duration such as \"1h\", \"90m\", \"1d\", \
                 \"1w\", \"1mo\", \"1q\" or \"1y\" (units ns, us, ms, s, m, h, d, w, mo, q, y), \
                 or a timedelta",
                s.every(every)
            )
        })
    };
    if every.starts_with('-') {
        return Err(refuse("is negative".into()));
    }
    // Polars' parser multiplies without checks: too large a number would wrap.
    let too_large = every
        .split(|c: char| !c.is_ascii_digit())
        .any(|digits| digits.len() > 12);
    if too_large {
        return Err(refuse("has a number too large for a duration".into()));
    }
    let duration =
        Duration::try_parse(every).map_err(|e| refuse(format!("is no duration ({e})")))?;
    if duration.parsed_int {
        return Err(refuse("counts rows (\"i\"), not time".into()));
    }
    if duration.is_zero() {
        return Err(refuse("is zero".into()));
    }
    Ok(duration)
}

/// A `range` bound as an exact count of the column's units.
fn exact(value: Scalar, dtype: &DataType) -> HistResult<i64> {
    let exact = value.exact(dtype, "`range`")?.ok_or_else(|| {
        HistError::InvalidArgument(format!(
            "`range` of time bins must be whole {} of the column, got {value:?}: give dates, \
             datetimes or durations",
            unit_name(dtype)
        ))
    })?;
    i64::try_from(exact).map_err(|_| {
        HistError::InvalidArgument(format!(
            "`range` bound {exact} is outside the column's dates"
        ))
    })
}

fn unit_name(dtype: &DataType) -> &'static str {
    match dtype {
        DataType::Datetime(TimeUnit::Nanoseconds, _)
        | DataType::Duration(TimeUnit::Nanoseconds) => "nanoseconds",
        DataType::Datetime(TimeUnit::Microseconds, _)
        | DataType::Duration(TimeUnit::Microseconds) => "microseconds",
        DataType::Datetime(TimeUnit::Milliseconds, _)
        | DataType::Duration(TimeUnit::Milliseconds) => "milliseconds",
        _ => "days",
    }
}

/// Where the edges come from: the data's extremes (aligned to a boundary), or a `range`.
#[derive(Clone, Copy, Debug)]
enum Span {
    Data(i64, i64),
    Range(i64, i64),
}

/// A temporal column's physical values as the calendar reads them.
enum Clock {
    /// A Date column: days, computed as naive milliseconds.
    Date,
    Datetime(TimeUnit, Zone),
    /// A Duration column: lengths, binned by fixed widths.
    Duration(TimeUnit),
}

impl Clock {
    /// The clock of `dtype`, after checking that `duration` can bin it.
    fn of(every: &str, duration: &Duration, dtype: &DataType) -> HistResult<Clock> {
        let whole = |unit: &TimeUnit| duration.nanoseconds() % per_unit(*unit) == 0;
        let clock = match dtype {
            DataType::Date if duration.nanoseconds() != 0 => {
                return Err(HistError::argument(|s| {
                    format!(
                        "{} has hours or finer, but a Date column holds whole days: give days, \
                         weeks, months, quarters or years (\"1d\", \"1w\", \"1mo\"), or cast the \
                         column to Datetime",
                        s.every(every)
                    )
                }))
            }
            DataType::Date => Clock::Date,
            DataType::Duration(_) if duration.months() != 0 => {
                return Err(HistError::argument(|s| {
                    format!(
                        "{} has months, quarters or years, which have no fixed length, and a \
                         Duration column has no calendar: give a fixed width such as \"1h\", \
                         \"1d\" or \"1w\"",
                        s.every(every)
                    )
                }))
            }
            DataType::Datetime(unit, _) | DataType::Duration(unit) if !whole(unit) => {
                return Err(HistError::argument(|s| {
                    format!(
                        "{} is finer than the column's unit ({}): give a whole number of {}, or \
                         cast the column to a finer unit",
                        s.every(every),
                        dtype::name(dtype),
                        unit_name(dtype)
                    )
                }))
            }
            DataType::Datetime(unit, tz) => {
                Clock::Datetime(*unit, Zone::of(tz.as_ref().map(|tz| tz.as_str()))?)
            }
            DataType::Duration(unit) => Clock::Duration(*unit),
            _ => {
                return Err(HistError::argument(|s| {
                    format!(
                        "{} names time bins, which need a Date, Datetime or Duration column, got \
                         {}: give a number of bins, edges or a rule",
                        s.every(every),
                        dtype::name(dtype)
                    )
                }))
            }
        };
        Ok(clock)
    }

    /// The edges over `span`, in the column's physical units.
    fn edges(&self, every: &str, duration: &Duration, span: Span) -> HistResult<Vec<i64>> {
        match self {
            Clock::Date => {
                let ms = |days: i64| days * MS_DAY;
                let span = match span {
                    Span::Data(lo, hi) => Span::Data(ms(lo), ms(hi)),
                    Span::Range(lo, hi) => Span::Range(ms(lo), ms(hi)),
                };
                let calendar = Calendar {
                    unit: TimeUnit::Milliseconds,
                    zone: &Zone::Naive,
                };
                let edges = calendar.edges(every, duration, span)?;
                Ok(edges.into_iter().map(|e| e.div_euclid(MS_DAY)).collect())
            }
            Clock::Datetime(unit, zone) => {
                Calendar { unit: *unit, zone }.edges(every, duration, span)
            }
            Clock::Duration(unit) => {
                let width = fixed_width(duration, *unit);
                let start = match span {
                    Span::Data(lo, _) => lo
                        .div_euclid(width)
                        .checked_mul(width)
                        .ok_or_else(|| outside(every))?,
                    Span::Range(lo, _) => lo,
                };
                collect(
                    every,
                    span,
                    |i| {
                        i.checked_mul(width)
                            .and_then(|step| start.checked_add(step))
                            .ok_or_else(|| outside(every))
                    },
                    approximate_count(span, width),
                )
            }
        }
    }
}

/// Nanoseconds per unit.
fn per_unit(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Nanoseconds => 1,
        TimeUnit::Microseconds => 1_000,
        TimeUnit::Milliseconds => 1_000_000,
    }
}

/// A duration without months in `unit`s (days and weeks as 24 hours and 7 days).
fn fixed_width(duration: &Duration, unit: TimeUnit) -> i64 {
    let ns = duration.weeks() as i128 * 7 * NS_DAY
        + duration.days() as i128 * NS_DAY
        + duration.nanoseconds() as i128;
    (ns / per_unit(unit) as i128).min(i64::MAX as i128) as i64
}

/// About how many bins `span` makes at `width` units a bin (never fewer than it does).
fn approximate_count(span: Span, width: i64) -> i128 {
    let (lo, hi) = match span {
        Span::Data(lo, hi) | Span::Range(lo, hi) => (lo as i128, hi as i128),
    };
    (hi - lo) / width.max(1) as i128 + 2
}

fn beyond_calendar() -> HistError {
    HistError::InvalidArgument(
        "time bins reach past the dates the column's type can hold: give a narrower `range` or \
         a shorter `bins`"
            .into(),
    )
}

fn outside(every: &str) -> HistError {
    HistError::argument(|s| {
        format!(
            "{} makes edges outside the dates a column can hold: give a narrower `range`",
            s.every(every)
        )
    })
}

/// Edges `edge(0), edge(1), ...` until one passes the data's maximum or reaches the range's
/// end; no more than a histogram holds.
fn collect(
    every: &str,
    span: Span,
    edge: impl Fn(i64) -> HistResult<i64>,
    approximate: i128,
) -> HistResult<Vec<i64>> {
    let too_many = || {
        HistError::argument(|s| {
            format!(
                "{} would make more than {MAX_BINS} bins (the most a histogram holds): give a \
                 wider `bins` or a narrower `range`",
                s.every(every)
            )
        })
    };
    if approximate > 2 * MAX_BINS as i128 {
        return Err(too_many());
    }
    let done = |e: i64| match span {
        Span::Data(_, hi) => e > hi,
        Span::Range(_, hi) => e >= hi,
    };
    let mut edges = crate::alloc::with_capacity(approximate.clamp(2, MAX_BINS as i128) as usize)?;
    let mut i = 0;
    loop {
        let e = edge(i)?;
        edges.push(e);
        if edges.len() > MAX_BINS + 1 {
            return Err(too_many());
        }
        if edges.len() >= 2 && done(e) {
            return Ok(edges);
        }
        i += 1;
    }
}

/// Datetime arithmetic in one unit and time zone.
struct Calendar<'a> {
    unit: TimeUnit,
    zone: &'a Zone,
}

impl Calendar<'_> {
    fn edges(&self, every: &str, duration: &Duration, span: Span) -> HistResult<Vec<i64>> {
        let start = match span {
            Span::Data(lo, _) => self.truncate(&boundary(duration), lo)?,
            Span::Range(lo, _) => lo,
        };
        // The shortest a duration can be: 28-day months, 23-hour days.
        let shortest = (duration.months() as i128 * 28 + duration.weeks() as i128 * 7)
            * (NS_DAY - 3_600_000_000_000)
            + duration.days() as i128 * (NS_DAY - 3_600_000_000_000)
            + duration.nanoseconds() as i128;
        let width = (shortest / per_unit(self.unit) as i128).clamp(1, i64::MAX as i128) as i64;
        collect(
            every,
            span,
            |i| self.add(duration, i, start),
            approximate_count(span, width),
        )
    }

    /// `t` truncated to a multiple of `duration` in local time (`dt.truncate`).
    fn truncate(&self, duration: &Duration, t: i64) -> HistResult<i64> {
        let original = self.naive(t)?;
        let local = self.timestamp(self.zone.local(original))?;
        // polars-time subtracts up to one period without checks: room for it first.
        let period = (duration.months() as i128 * 31
            + duration.weeks() as i128 * 7
            + duration.days() as i128
            + 1)
            * NS_DAY
            + duration.nanoseconds() as i128;
        if (local as i128) - period / per_unit(self.unit) as i128 <= i64::MIN as i128 {
            return Err(beyond_calendar());
        }
        let truncated = match self.unit {
            TimeUnit::Nanoseconds => duration.truncate_ns(local, None),
            TimeUnit::Microseconds => duration.truncate_us(local, None),
            TimeUnit::Milliseconds => duration.truncate_ms(local, None),
        }?;
        self.timestamp(self.zone.utc(original, self.naive(truncated)?)?)
    }

    /// `start + i * duration`: `pl.datetime_range`'s edge `i`. Months, weeks and days in local
    /// time, each from the last (a month's day past its end clamped to its last, as Polars
    /// does), hours and finer in absolute time.
    fn add(&self, duration: &Duration, i: i64, start: i64) -> HistResult<i64> {
        let mut t = start;
        for (count, months) in [
            (duration.months(), true),
            (duration.weeks() * 7, false),
            (duration.days(), false),
        ] {
            if count == 0 {
                continue;
            }
            let original = self.naive(t)?;
            let local = self.zone.local(original);
            let n = count.checked_mul(i).ok_or_else(beyond_calendar)?;
            let moved = match months {
                true => u32::try_from(n)
                    .ok()
                    .and_then(|n| local.checked_add_months(Months::new(n))),
                false => TimeDelta::try_days(n).and_then(|d| local.checked_add_signed(d)),
            };
            t = self.timestamp(
                self.zone
                    .utc(original, moved.ok_or_else(beyond_calendar)?)?,
            )?;
        }
        let fine = (duration.nanoseconds() / per_unit(self.unit)) as i128 * i as i128;
        i64::try_from(t as i128 + fine).map_err(|_| beyond_calendar())
    }

    fn naive(&self, t: i64) -> HistResult<NaiveDateTime> {
        let utc = match self.unit {
            TimeUnit::Nanoseconds => Some(DateTime::from_timestamp_nanos(t)),
            TimeUnit::Microseconds => DateTime::from_timestamp_micros(t),
            TimeUnit::Milliseconds => DateTime::from_timestamp_millis(t),
        };
        utc.map(|d| d.naive_utc()).ok_or_else(|| {
            HistError::InvalidArgument(format!(
                "time bins cannot reach {t} ({:?}): it is outside the calendar",
                self.unit
            ))
        })
    }

    fn timestamp(&self, t: NaiveDateTime) -> HistResult<i64> {
        let utc = t.and_utc();
        match self.unit {
            TimeUnit::Nanoseconds => utc.timestamp_nanos_opt().ok_or_else(|| {
                HistError::InvalidArgument(format!(
                    "time bins reach {t}, past what a nanosecond Datetime holds (1677-2262): \
                     give a narrower `range` or cast the column to microseconds"
                ))
            }),
            TimeUnit::Microseconds => Ok(utc.timestamp_micros()),
            TimeUnit::Milliseconds => Ok(utc.timestamp_millis()),
        }
    }
}

/// The boundary bins start at with no `range`: `dt.truncate(every)`'s, or for a duration
/// that mixes units (which `dt.truncate` refuses), its largest unit's.
fn boundary(duration: &Duration) -> Duration {
    let single = [
        duration.months(),
        duration.weeks(),
        duration.days(),
        duration.nanoseconds(),
    ]
    .iter()
    .filter(|&&n| n != 0)
    .count()
        == 1;
    if single {
        return *duration;
    }
    let largest = if duration.months() != 0 {
        "1mo"
    } else if duration.weeks() != 0 {
        "1w"
    } else {
        "1d"
    };
    Duration::parse(largest)
}

/// A column's time zone: none (naive, or UTC), an IANA zone, or a fixed offset.
pub(crate) enum Zone {
    Naive,
    Named(Tz),
    Fixed(TimeDelta),
}

impl Zone {
    fn of(tz: Option<&str>) -> HistResult<Zone> {
        let Some(name) = tz else {
            return Ok(Zone::Naive);
        };
        if name == "UTC" {
            return Ok(Zone::Naive);
        }
        if let Ok(tz) = name.parse::<Tz>() {
            return Ok(Zone::Named(tz));
        }
        fixed_offset(name).map(Zone::Fixed).ok_or_else(|| {
            HistError::InvalidArgument(format!(
                "time bins cannot read the column's time zone {name:?}: convert the column to \
                 an IANA time zone (`dt.convert_time_zone`)"
            ))
        })
    }

    /// The local time of the instant `utc`.
    fn local(&self, utc: NaiveDateTime) -> NaiveDateTime {
        match self {
            Zone::Naive => utc,
            Zone::Named(tz) => tz.from_utc_datetime(&utc).naive_local(),
            Zone::Fixed(offset) => utc + *offset,
        }
    }

    /// The instant of the local time `local`, computed from the instant `original`: a local
    /// time that occurs twice keeps `original`'s daylight-saving offset, one that does not
    /// occur is shifted by it (RFC 5545, as polars-time localizes).
    fn utc(&self, original: NaiveDateTime, local: NaiveDateTime) -> HistResult<NaiveDateTime> {
        let tz = match self {
            Zone::Naive => return Ok(local),
            Zone::Fixed(offset) => return Ok(local - *offset),
            Zone::Named(tz) => tz,
        };
        let fold = tz.from_utc_datetime(&original).offset().dst_offset();
        let unknown = || {
            HistError::InvalidArgument(format!(
                "time bins cannot place the local time {local} in time zone {tz}"
            ))
        };
        match tz.from_local_datetime(&local) {
            LocalResult::Single(t) => Ok(t.naive_utc()),
            LocalResult::Ambiguous(earliest, latest) => [earliest, latest]
                .into_iter()
                .find(|t| t.offset().dst_offset() == fold)
                .map(|t| t.naive_utc())
                .ok_or_else(unknown),
            LocalResult::None => {
                let shifted = if fold.num_minutes() != 0 {
                    local + fold
                } else {
                    let next_hour = tz
                        .from_local_datetime(&(local + TimeDelta::hours(1)))
                        .earliest()
                        .ok_or_else(unknown)?;
                    local - next_hour.offset().dst_offset()
                };
                match tz.from_local_datetime(&shifted) {
                    LocalResult::Single(t) => Ok(t.naive_utc()),
                    _ => Err(unknown()),
                }
            }
        }
    }
}

/// `"+01:00"`, `"-0530"`: a fixed offset east of UTC.
fn fixed_offset(name: &str) -> Option<TimeDelta> {
    let (sign, rest) = match name.as_bytes().first()? {
        b'+' => (1, &name[1..]),
        b'-' => (-1, &name[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let hours: i64 = digits[..2].parse().ok()?;
    let minutes: i64 = digits[2..].parse().ok()?;
    Some(TimeDelta::minutes(sign * (hours * 60 + minutes)))
}

#[cfg(test)]
#[path = "time_bins_tests.rs"]
mod tests;
