//! A share of a model API's per-minute input-token limit, valid by construction: over 0 and at
//! most 1.

use std::fmt;

/// The share of the per-minute input-token limit a provider reports that the tool results of
/// one request may take together (`rate_limit_share` in the manifest).
///
/// ```
/// use tool_output_cap::RateLimitShare;
///
/// let half = RateLimitShare::new(0.5)?;
/// assert_eq!(half.of(30_000), 15_000);
/// assert_eq!(
///     RateLimitShare::new(1.5).unwrap_err().to_string(),
///     "must be a fraction over 0 and at most 1, found 1.5"
/// );
/// # Ok::<(), tool_output_cap::ShareError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimitShare {
    /// The share in millionths, so that two shares compare as they print.
    millionths: u32,
}

impl RateLimitShare {
    /// `share`, if it is over 0 and at most 1; to the nearest millionth.
    pub fn new(share: f64) -> Result<Self, ShareError> {
        if !(share > 0.0 && share <= 1.0) {
            return Err(ShareError {
                found: share.to_string(),
            });
        }
        let millionths = (share * 1e6).round().max(1.0) as u32;
        Ok(RateLimitShare { millionths })
    }

    /// The share, as a fraction.
    pub fn get(self) -> f64 {
        f64::from(self.millionths) / 1e6
    }

    /// This share of `limit` tokens, rounded down.
    pub fn of(self, limit: usize) -> usize {
        (limit as u128 * u128::from(self.millionths) / 1_000_000) as usize
    }
}

impl fmt::Display for RateLimitShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

impl std::str::FromStr for RateLimitShare {
    type Err = ShareError;

    fn from_str(text: &str) -> Result<Self, ShareError> {
        let refused = || ShareError {
            found: format!("{text:?}"),
        };
        RateLimitShare::new(text.trim().parse().map_err(|_| refused())?).map_err(|_| refused())
    }
}

/// A share refused by [`RateLimitShare::new`]: not a fraction over 0 and at most 1. Its message
/// is for the caller to put after the name of the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareError {
    found: String,
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "must be a fraction over 0 and at most 1, found {}",
            self.found
        )
    }
}

impl std::error::Error for ShareError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_over_0_and_at_most_1() {
        for bad in [0.0, -0.5, 1.01, f64::NAN, f64::INFINITY] {
            assert!(RateLimitShare::new(bad).is_err(), "{bad}");
        }
        assert_eq!(RateLimitShare::new(1.0).unwrap().of(30_000), 30_000);
        assert_eq!(
            RateLimitShare::new(0.25).unwrap().of(usize::MAX),
            usize::MAX / 4
        );
        assert_eq!("0.5".parse::<RateLimitShare>().unwrap().get(), 0.5);
        let error = "half".parse::<RateLimitShare>().unwrap_err().to_string();
        assert_eq!(
            error,
            "must be a fraction over 0 and at most 1, found \"half\""
        );
    }
}
