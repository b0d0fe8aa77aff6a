//! The two directions of the link, which every stage and file names.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Direction on the link: `Down` = fixed side to mobile side, `Up` = back.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    Down,
    Up,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::Down, Dir::Up];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Dir::Down => "down",
            Dir::Up => "up",
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
