//! The `category` labels of Polars' `hist`: `[e0, e1]`, `(e1, e2]`, ... with each edge printed
//! as Polars prints a Float64 value (`AnyValue`'s display) under the `pl.Config` float settings.
//! The plugin carries its own copy of Polars' formatting state, never set by Python, so the
//! Python wrapper reads the settings and hands them over in the kwargs.

use std::fmt::Write;

/// `pl.Config`'s float display: `set_float_precision`, `set_fmt_float`,
/// `set_thousands_separator` and `set_decimal_separator`.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default)]
pub(super) struct FloatFormat {
    pub precision: Option<usize>,
    /// `fmt_float="full"`: every digit, never scientific notation.
    pub full: bool,
    /// Digit grouping separator; empty when none.
    pub thousands: String,
    pub decimal: char,
}

impl Default for FloatFormat {
    fn default() -> Self {
        FloatFormat {
            precision: None,
            full: false,
            thousands: String::new(),
            decimal: '.',
        }
    }
}

/// Above this magnitude (and below 1e-6) a long number is printed in scientific notation.
const SCIENTIFIC_BOUND: f64 = 999999.0;

impl FloatFormat {
    /// `num` (a plain or scientific rendering) with its integer digits grouped in threes and
    /// its decimal point replaced, as Polars does after rendering.
    fn separate(&self, num: &str, out: &mut String) {
        if num.len() <= 1 {
            out.push_str(num);
            return;
        }
        let (integer, fraction) = match num.find('.') {
            Some(i) => (&num[..i], Some(&num[i + 1..])),
            None => (num, None),
        };
        let (sign, digits) = match integer.as_bytes().first() {
            Some(b'-' | b'+') if integer.len() > 1 => integer.split_at(1),
            _ => ("", integer),
        };
        out.push_str(sign);
        if digits.len() <= 1 {
            out.push_str(digits);
        } else {
            // Groups of three from the right; the first group may be shorter.
            let head = match digits.len() % 3 {
                0 => 3,
                r => r,
            };
            out.push_str(&digits[..head]);
            let mut at = head;
            while at < digits.len() {
                out.push_str(&self.thousands);
                out.push_str(&digits[at..at + 3]);
                at += 3;
            }
        }
        if let Some(fraction) = fraction {
            out.push(self.decimal);
            out.push_str(fraction);
        }
    }

    /// Appends `v` as Polars displays a Float64 value.
    pub fn write(&self, v: f64, out: &mut String, scratch: &mut String) {
        scratch.clear();
        if let Some(p) = self.precision {
            write!(scratch, "{v:.p$}").unwrap();
            if scratch.len() > 19 {
                // Too long for fixed notation: scientific, without separators.
                write!(out, "{v:.p$e}").unwrap();
                return;
            }
        } else if self.full {
            write!(scratch, "{v}").unwrap();
        } else if v.fract() == 0.0 && v.abs() < SCIENTIFIC_BOUND {
            // Whole numbers as `1.0`, `-42.0`.
            write!(scratch, "{v:.1}").unwrap();
        } else {
            write!(scratch, "{v}").unwrap();
            if scratch.len() > 9 {
                let a = v.abs();
                scratch.clear();
                if (!(0.000001..=SCIENTIFIC_BOUND).contains(&a) || a > SCIENTIFIC_BOUND)
                    && self.thousands.is_empty()
                {
                    write!(scratch, "{v:.4e}").unwrap();
                } else {
                    // Six decimals, trailing zeros dropped (`12.0`, not `12.000000`).
                    write!(scratch, "{v:.6}").unwrap();
                    if scratch.ends_with('0') {
                        let kept = scratch.trim_end_matches('0').len();
                        scratch.truncate(kept);
                        if scratch.ends_with('.') {
                            scratch.push('0');
                        }
                    }
                }
            } else if v.fract() == 0.0 {
                // Short whole numbers beyond the bound: `1e6` style.
                scratch.clear();
                write!(scratch, "{v:e}").unwrap();
            }
        }
        self.separate(scratch, out);
    }
}

/// The labels of the bins between `breaks`, appended to `labels` one by one (`push` gets each).
pub(super) fn labels(breaks: &[f64], format: &FloatFormat, mut push: impl FnMut(&str)) {
    let mut label = String::new();
    let mut scratch = String::new();
    let mut lower = String::new();
    let mut upper = String::new();
    if let Some(&first) = breaks.first() {
        format.write(first, &mut lower, &mut scratch);
    }
    for (i, &edge) in breaks.iter().enumerate().skip(1) {
        upper.clear();
        format.write(edge, &mut upper, &mut scratch);
        label.clear();
        label.push(if i == 1 { '[' } else { '(' });
        label.push_str(&lower);
        label.push_str(", ");
        label.push_str(&upper);
        label.push(']');
        push(&label);
        std::mem::swap(&mut lower, &mut upper);
    }
}
