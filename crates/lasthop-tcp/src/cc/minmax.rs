//! Kathleen Nichols' windowed min/max filter (Linux `lib/win_minmax.c`): the best, second and
//! third best values of a window of time (or round trips), so that the extreme of the window
//! is known in constant space. BBR's bandwidth filter (max over 10 rounds) and Linux's
//! `tcp_min_rtt` (min over 300 s) use it.

/// One sample: when it was taken (in the window's unit) and its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u32,
    v: u32,
}

/// Linux `struct minmax`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MinMax {
    s: [Sample; 3],
}

impl MinMax {
    /// `minmax_get`: the window's extreme.
    #[inline]
    pub(crate) fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_reset`: every choice becomes (t, v).
    pub(crate) fn reset(&mut self, t: u32, v: u32) -> u32 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// `minmax_subwin_update`: as time passes, the second and third choices move up.
    fn subwin_update(&mut self, win: u32, val: Sample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The whole window passed without a new extreme: the 2nd choice is the new 1st,
            // perhaps twice (the 2nd may be out of the window too).
            self.s = [self.s[1], self.s[2], val];
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new 2nd choice: take one from the 2nd quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window without a new 3rd choice.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_max`: adds a measurement at time `t`, returns the window's maximum.
    pub(crate) fn running_max(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let val = Sample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_running_min`: the same for the minimum.
    pub(crate) fn running_min(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let val = Sample { t, v };
        if v <= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_over_a_window_of_ten_rounds_by_hand() {
        let mut m = MinMax::default();
        m.reset(0, 0);
        // Round 0: 100. A lower value never replaces it inside the window; round 1's 80 is not
        // even kept (a quarter of the window, 2 rounds, has not passed), round 3's 90 becomes
        // the 2nd and 3rd choice, round 4's 70 nothing (half the window has not passed).
        assert_eq!(m.running_max(10, 0, 100), 100);
        assert_eq!(m.running_max(10, 1, 80), 100);
        assert_eq!(m.running_max(10, 3, 90), 100);
        assert_eq!(m.running_max(10, 4, 70), 100);
        // Round 11: 100 (round 0) is 11 > 10 rounds old: the 2nd choice (90, round 3) takes
        // over; the new 3rd is round 11's 60.
        assert_eq!(m.running_max(10, 11, 60), 90);
        // A new maximum resets everything.
        assert_eq!(m.running_max(10, 12, 120), 120);
        // Nothing in the window: reset to the new value.
        assert_eq!(m.running_max(10, 40, 5), 5);
    }

    #[test]
    fn min_keeps_the_smallest_of_the_window() {
        let mut m = MinMax::default();
        m.reset(0, u32::MAX);
        assert_eq!(m.running_min(300, 0, 50), 50);
        assert_eq!(m.running_min(300, 100, 60), 50);
        assert_eq!(m.running_min(300, 200, 40), 40);
        // 301 after 200 nothing of the window is left (every choice was 200's): reset to 45.
        assert_eq!(m.running_min(300, 501, 45), 45);
    }
}
