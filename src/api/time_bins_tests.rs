//! Time bins' edges on their own: the parser's refusals, calendar steps across daylight-saving
//! switches (the 23- and 25-hour days, the repeated hour), Date and Duration columns. The
//! Python tests hold them equal to Polars' `dt.truncate`, `group_by_dynamic` and
//! `pl.datetime_range` over random data.

use polars::prelude::{DataType, TimeUnit, TimeZone as PlTimeZone};

use super::*;

const HOUR_US: i64 = 3_600_000_000;
const DAY_US: i64 = 24 * HOUR_US;
// 2024-03-30 00:00 UTC; Europe/Amsterdam springs forward on 2024-03-31 at 02:00 local.
const MARCH_30_US: i64 = 1_711_756_800_000_000;

fn edges(every: &str, dtype: &DataType, lo: i64, hi: i64) -> HistResult<Vec<i128>> {
    let extremes = || Ok(Extremes::Integer(lo as i128, hi as i128));
    match time_edges(every, None, dtype, extremes)? {
        Binning::Integers(edges) => Ok(edges),
        other => panic!("integer edges expected, got {other:?}"),
    }
}

fn amsterdam() -> DataType {
    let zone = PlTimeZone::opt_try_new(Some("Europe/Amsterdam")).unwrap();
    DataType::Datetime(TimeUnit::Microseconds, zone)
}

#[test]
fn bad_durations_name_bins_and_the_fix() {
    for (every, why) in [
        ("1x", "is no duration"),
        ("0d", "is zero"),
        ("-1d", "is negative"),
        ("3i", "counts rows"),
        ("99999999999999999999h", "too large"),
    ] {
        let message = parse(every).unwrap_err().message(crate::Spelling::Python);
        assert!(message.contains(&format!("`bins={every:?}`")), "{message}");
        assert!(message.contains(why), "{message}");
        assert!(message.contains("\"1mo\""), "{message}");
    }
}

#[test]
fn days_across_the_spring_switch_are_local_midnights() {
    // Amsterdam is UTC+1 until 2024-03-31 02:00, UTC+2 after: the day of the switch has 23 hours.
    let got = edges(
        "1d",
        &amsterdam(),
        MARCH_30_US + 12 * HOUR_US,
        MARCH_30_US + 60 * HOUR_US,
    )
    .unwrap();
    let midnight = MARCH_30_US - HOUR_US; // 2024-03-30 00:00 CET
    let expected =
        [0, DAY_US, 2 * DAY_US - HOUR_US, 3 * DAY_US - HOUR_US].map(|d| (midnight + d) as i128);
    assert_eq!(got, expected);
}

#[test]
fn the_repeated_autumn_hour_keeps_its_fold() {
    // 2024-10-27: 02:00-03:00 happens twice in Amsterdam (00:00-01:00 and 01:00-02:00 UTC).
    let first = 1_729_990_800_000_000; // 2024-10-27 01:00 UTC = 02:00 CET (the second 02:00)
    let got = edges("1h", &amsterdam(), first - HOUR_US + 1, first + 1).unwrap();
    assert_eq!(
        got,
        [first - HOUR_US, first, first + HOUR_US].map(i128::from)
    );
}

#[test]
fn months_weeks_and_quarters_start_at_their_local_boundaries() {
    let dtype = amsterdam();
    // 2024-04-10 UTC: April starts at 2024-03-31 22:00 UTC (CEST), the ISO week on 2024-04-08.
    let april_10 = MARCH_30_US + 11 * DAY_US;
    let april_1 = MARCH_30_US + 2 * DAY_US - 2 * HOUR_US;
    assert_eq!(
        edges("1mo", &dtype, april_10, april_10).unwrap()[0],
        april_1 as i128
    );
    assert_eq!(
        edges("1w", &dtype, april_10, april_10).unwrap()[0],
        (april_1 + 7 * DAY_US) as i128
    );
    assert_eq!(
        edges("1q", &dtype, april_10, april_10).unwrap()[0],
        april_1 as i128
    );
}

#[test]
fn date_and_duration_columns() {
    // 2024-01-31 (day 19753) .. 2024-03-02: months from January's first day.
    let got = edges("1mo", &DataType::Date, 19_753, 19_784).unwrap();
    assert_eq!(got, [19_723, 19_754, 19_783, 19_814]);
    let duration = DataType::Duration(TimeUnit::Milliseconds);
    let got = edges("90m", &duration, -1, 5_400_000).unwrap();
    assert_eq!(got, [-5_400_000, 0, 5_400_000, 10_800_000]);
    assert!(edges("1mo", &duration, 0, 1).is_err());
    assert!(edges("1h", &DataType::Date, 0, 1).is_err());
    assert!(edges("1w", &DataType::Float64, 0, 1).is_err());
}

#[test]
fn too_many_bins_are_refused_before_they_are_made() {
    let dtype = DataType::Datetime(TimeUnit::Nanoseconds, None);
    let message = edges("1ns", &dtype, 0, i64::MAX / 2)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("bins (the most a histogram holds)"),
        "{message}"
    );
}

/// Edges past what the column's type holds are an error, never a panic or a wrapped edge.
#[test]
fn edges_past_the_calendar_are_refused() {
    let ns = DataType::Datetime(TimeUnit::Nanoseconds, None);
    let us = amsterdam();
    for (every, dtype, lo, hi) in [
        ("1y", &ns, i64::MIN + 1, i64::MAX),
        ("1y", &us, i64::MIN + 1, i64::MAX),
        ("999999999999y", &us, 0, 10),
        ("1mo", &DataType::Date, i32::MIN as i64 + 1, i32::MAX as i64),
    ] {
        let message = edges(every, dtype, lo, hi).unwrap_err().to_string();
        assert!(
            message.contains("past the dates") || message.contains("outside the calendar"),
            "{every} {dtype:?}: {message}"
        );
    }
}

#[test]
fn fixed_offsets_are_zones_without_switches() {
    assert_eq!(fixed_offset("+05:30"), Some(TimeDelta::minutes(330)));
    assert_eq!(fixed_offset("-0800"), Some(TimeDelta::minutes(-480)));
    assert_eq!(fixed_offset("Mars/Olympus"), None);
}
