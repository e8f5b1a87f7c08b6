//! Money (CONTRACT §5): prices are exact decimals, stored as integer minor units of their
//! currency (cents for EUR, yen for JPY, fils for KWD), never as floats.
//!
//! Why not `f64`: a float cannot hold 0.1 exactly, so sums drift (`0.1 + 0.2`), and sqlx
//! 0.9.0's `Any` driver binds a NULL `f64` as PostgreSQL `float4`, which poisons the
//! statement cached on that connection for every later real price (issue 23). An `i64`
//! column of minor units is exact on both backends and binds the same type null or not.
//!
//! On the wire a price stays a JSON number (`1299.5` in, `1299.5` out). It is read from the
//! number's own text (never through `f64`), so `12.345` is seen to have three decimals, and
//! written through `f64` only for the final JSON token, which is exact for every price this
//! module accepts (see [`MAX_PRICE`]).

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// The largest price, in major units. With at most 4 decimals (the most any currency has)
/// a price is at most 10^15 minor units: 15 significant digits, which an `f64` holds and
/// prints back exactly, and far inside `i64`.
pub const MAX_PRICE: u64 = 100_000_000_000;

/// The most decimal places any currency has (ISO 4217: CLF and UYW).
pub const MAX_DECIMALS: u32 = 4;

/// Currencies whose minor unit is not the usual hundredth (ISO 4217, list one). Every
/// other three-letter code has 2 decimals. Kept in this one place; the migration that
/// converted the old float prices (`migrations/*/0070_course_price_minor_units.sql`)
/// carries a copy of it, as migrations must not change once applied.
const NO_DECIMALS: [&str; 17] = [
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
    "VUV", "XAF", "XOF", "XPF",
];
const THREE_DECIMALS: [&str; 7] = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
const FOUR_DECIMALS: [&str; 2] = ["CLF", "UYW"];

/// How many decimal places a price in `currency` (an upper-case ISO 4217 code) may have.
pub fn decimals(currency: &str) -> u32 {
    if NO_DECIMALS.contains(&currency) {
        0
    } else if THREE_DECIMALS.contains(&currency) {
        3
    } else if FOUR_DECIMALS.contains(&currency) {
        4
    } else {
        2
    }
}

/// An exact, non-negative amount of money: `mantissa / 10^scale`, with no trailing zero in
/// `mantissa` when `scale > 0` (so equal amounts compare equal), at most [`MAX_PRICE`] and
/// at most [`MAX_DECIMALS`] decimal places.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Price {
    mantissa: u64,
    scale: u32,
}

/// Why a price was refused; [`PriceError::message`] says it to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriceError {
    /// Not a JSON number, or below 0.
    NotANumber,
    TooLarge,
    /// More decimal places than any currency has.
    TooManyDecimals,
}

impl PriceError {
    pub fn message(self) -> String {
        match self {
            PriceError::NotANumber => "price must be a number of at least 0".into(),
            PriceError::TooLarge => format!("price must be at most {MAX_PRICE}"),
            PriceError::TooManyDecimals => {
                format!("price must have at most {MAX_DECIMALS} decimal places")
            }
        }
    }
}

impl Price {
    /// Parses the text of a JSON number (`1299.5`, `10`, `1.2995e3`) exactly.
    pub fn parse(text: &str) -> Result<Price, PriceError> {
        let text = text.trim();
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (number, exponent) = match body.find(['e', 'E']) {
            Some(at) => (&body[..at], Some(&body[at + 1..])),
            None => (body, None),
        };
        let (whole, fraction) = match number.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (number, None),
        };
        // The JSON grammar: no empty parts, no leading zeros, digits only.
        let digits_only = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let whole_ok = digits_only(whole) && (whole == "0" || !whole.starts_with('0'));
        let fraction_ok = fraction.is_none_or(digits_only);
        let exponent = match exponent {
            None => Some(0),
            Some(e) => {
                let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
                digits_only(unsigned).then(|| {
                    // Saturate: an exponent past a million is too large or too precise anyway.
                    let size = unsigned
                        .bytes()
                        .try_fold(0i64, |n, b| {
                            n.checked_mul(10)?.checked_add(i64::from(b - b'0'))
                        })
                        .map_or(1_000_000, |n| n.min(1_000_000));
                    if e.starts_with('-') { -size } else { size }
                })
            }
        };
        let (true, true, Some(exponent)) = (whole_ok, fraction_ok, exponent) else {
            return Err(PriceError::NotANumber);
        };

        // value = digits * 10^power, digits without leading or trailing zeros.
        let fraction = fraction.unwrap_or("");
        let all = format!("{whole}{fraction}");
        let significant = all.trim_start_matches('0');
        let trimmed = significant.trim_end_matches('0');
        if trimmed.is_empty() {
            // Zero, however written ("0.00", "-0", "0e5").
            return Ok(Price::default());
        }
        if negative {
            return Err(PriceError::NotANumber);
        }
        let power = exponent - fraction.len() as i64 + (significant.len() - trimmed.len()) as i64;
        // Digits before the decimal point: more than 12 is at least 10^12.
        if trimmed.len() as i64 + power > 12 {
            return Err(PriceError::TooLarge);
        }
        if power < -i64::from(MAX_DECIMALS) {
            return Err(PriceError::TooManyDecimals);
        }
        // Now at most 12 + 4 digits with the zeros a positive power adds: fits a u64.
        let mut mantissa: u64 = trimmed.parse().map_err(|_| PriceError::TooLarge)?;
        let scale = if power >= 0 {
            mantissa *= 10u64.pow(power as u32);
            0
        } else {
            (-power) as u32
        };
        let price = Price { mantissa, scale };
        if price.mantissa > MAX_PRICE * 10u64.pow(scale) {
            return Err(PriceError::TooLarge);
        }
        Ok(price)
    }

    /// A stored amount of `minor` units of a currency with `decimals` decimal places.
    pub fn from_minor(minor: i64, decimals: u32) -> Option<Price> {
        let mut mantissa = u64::try_from(minor).ok()?;
        let mut scale = decimals;
        while scale > 0 && mantissa % 10 == 0 {
            mantissa /= 10;
            scale -= 1;
        }
        Some(Price { mantissa, scale })
    }

    /// The amount in minor units of a currency with `decimals` decimal places, or `None`
    /// when it has more decimal places than that.
    pub fn to_minor(self, decimals: u32) -> Option<i64> {
        let shift = decimals.checked_sub(self.scale)?;
        i64::try_from(self.mantissa.checked_mul(10u64.checked_pow(shift)?)?).ok()
    }

    /// How many decimal places the amount needs (`1299.5`: 1, `10`: 0).
    pub fn scale(self) -> u32 {
        self.scale
    }

    /// The amount as the nearest `f64`: for the JSON token only, never for arithmetic.
    /// Exact in the sense that it prints back as the same decimal (at most 15 significant
    /// digits, and the division of two exactly held numbers is correctly rounded).
    pub fn to_f64(self) -> f64 {
        self.mantissa as f64 / 10u64.pow(self.scale) as f64
    }

    /// The amount with exactly `decimals` places, as shown next to its currency
    /// (`1299.50` EUR, `12000` JPY); with fewer places than it needs, all of them.
    pub fn format_places(self, decimals: u32) -> String {
        let places = decimals.max(self.scale);
        let units = self.mantissa * 10u64.pow(places - self.scale);
        let factor = 10u64.pow(places);
        match places {
            0 => units.to_string(),
            p => format!(
                "{}.{:0width$}",
                units / factor,
                units % factor,
                width = p as usize
            ),
        }
    }
}

/// The shortest exact decimal: `1299.5`, `10`, `0.3`.
impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format_places(0))
    }
}

/// A JSON number, written as it always was (`490.5`, `10.0`).
impl Serialize for Price {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.to_f64())
    }
}

impl<'de> Deserialize<'de> for Price {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = PriceText::deserialize(d)?;
        Price::parse(raw.as_str()).map_err(|e| D::Error::custom(e.message()))
    }
}

/// A price as the client wrote it: the raw JSON token, parsed later by [`Price::parse`] so
/// that a bad price is one message among the others of its body rather than a failed parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriceText(String);

impl PriceText {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<Price> for PriceText {
    fn from(price: Price) -> PriceText {
        PriceText(price.to_string())
    }
}

impl<'de> Deserialize<'de> for PriceText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // RawValue keeps the token's text: `12.345` stays three decimals, `0.1` stays 0.1.
        let raw = Box::<RawValue>::deserialize(d)?;
        Ok(PriceText(raw.get().to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Price, PriceError> {
        Price::parse(text)
    }

    #[test]
    fn json_numbers_parse_exactly() {
        for (text, mantissa, scale) in [("1299.5", 12995, 1), ("10", 10, 0), ("0.0001", 1, 4)] {
            assert_eq!(p(text), Ok(Price { mantissa, scale }), "{text}");
        }
        assert_eq!(p("1299.50"), p("1299.5"));
        assert_eq!(p("1.2995e3"), p("1299.5"));
        assert_eq!(p("12995E-1"), p("1299.5"));
        assert_eq!(p("1e1"), p("10"));
        assert_eq!(p("10.0"), p("10"));
        for zero in ["0", "-0", "0.00", "0e5", "-0.0e-9999999999999999999"] {
            assert_eq!(p(zero), Ok(Price::default()), "{zero}");
        }
        assert_eq!(
            p("100000000000"),
            Ok(Price {
                mantissa: MAX_PRICE,
                scale: 0
            })
        );
        assert_eq!(p("99999999999.9999").map(Price::scale), Ok(4));
    }

    #[test]
    fn bad_prices_are_refused_with_their_reason() {
        let refused: [(&[&str], PriceError); 3] = [
            (
                &[
                    "-1",
                    "-0.01",
                    "\"12.50\"",
                    "true",
                    "null",
                    "{}",
                    "[1]",
                    "01",
                    "1.",
                    ".5",
                    "1e",
                    "1e+",
                    "--1",
                    "1,5",
                    "",
                ],
                PriceError::NotANumber,
            ),
            (
                &[
                    "100000000000.01",
                    "1e12",
                    "1000000000000",
                    "1e999999999999999",
                    "123456789012345678901234567890",
                ],
                PriceError::TooLarge,
            ),
            (
                &[
                    "0.00001",
                    "1.00000000000000000001",
                    "1e-999999999999",
                    "0.30000000000000004",
                ],
                PriceError::TooManyDecimals,
            ),
        ];
        for (texts, error) in refused {
            for text in texts {
                assert_eq!(p(text), Err(error), "{text}");
            }
        }
    }

    #[test]
    fn minor_units_follow_the_currency() {
        assert_eq!(decimals("EUR"), 2);
        assert_eq!(decimals("USD"), 2);
        assert_eq!(decimals("JPY"), 0);
        assert_eq!(decimals("KWD"), 3);
        assert_eq!(decimals("CLF"), 4);
        let price = p("1299.5").expect("price");
        assert_eq!(price.to_minor(2), Some(129_950));
        assert_eq!(price.to_minor(3), Some(1_299_500));
        assert_eq!(price.to_minor(0), None, "JPY has no decimals");
        assert_eq!(Price::from_minor(129_950, 2), Some(price));
        assert_eq!(Price::from_minor(1_299_500, 3), Some(price));
        assert_eq!(Price::from_minor(-1, 2), None);
        let top = Price {
            mantissa: MAX_PRICE * 10_000,
            scale: 4,
        };
        assert_eq!(top.to_minor(4), Some(1_000_000_000_000_000));
    }

    #[test]
    fn prices_print_back_exactly() {
        for text in [
            "1299.5",
            "10",
            "0.1",
            "0.2",
            "0.3",
            "0.07",
            "99999999999.9999",
            "100000000000",
            "12345678901.23",
        ] {
            let price = p(text).expect(text);
            assert_eq!(price.to_string(), text);
            assert_eq!(
                serde_json::to_string(&price)
                    .expect("json")
                    .trim_end_matches(".0"),
                text
            );
            let back: Price =
                serde_json::from_str(&serde_json::to_string(&price).expect("json")).expect("back");
            assert_eq!(back, price);
        }
        // Whole amounts keep the `10.0` the API always printed.
        assert_eq!(
            serde_json::to_string(&p("10").expect("10")).expect("json"),
            "10.0"
        );
        // Sums are exact in minor units, where floats drift (0.1 + 0.2 != 0.3).
        let cents = |text: &str| p(text).ok().and_then(|price| price.to_minor(2));
        let sum = cents("0.1").zip(cents("0.2")).map(|(a, b)| a + b);
        assert_eq!(sum.and_then(|m| Price::from_minor(m, 2)), p("0.3").ok());
        assert_eq!(p("1299.5").expect("p").format_places(2), "1299.50");
        assert_eq!(p("12000").expect("p").format_places(0), "12000");
        assert_eq!(p("12.5").expect("p").format_places(3), "12.500");
        assert_eq!(p("0.05").expect("p").format_places(0), "0.05");
    }

    #[test]
    fn price_text_keeps_the_token_from_bytes_and_from_values() {
        let from_bytes: PriceText = serde_json::from_str("12.345").expect("text");
        assert_eq!(from_bytes.as_str(), "12.345");
        let from_value: PriceText =
            serde_json::from_value(serde_json::json!(12.345)).expect("text");
        assert_eq!(from_value.as_str(), "12.345");
        let string: PriceText = serde_json::from_str("\"12.50\"").expect("text");
        assert_eq!(Price::parse(string.as_str()), Err(PriceError::NotANumber));
    }
}
