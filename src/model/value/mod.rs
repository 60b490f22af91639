//! Parsers for the values users type: durations with units, hold/idle work
//! with a mode, comma lists, percentages and counts. Each returns a message
//! that names what was expected, which clap prints with the flag's name.

pub mod affinity;
pub mod choice;
pub mod count;
pub mod cpus;
pub mod duration;
pub mod list;
pub mod sampling;
pub mod size;
pub mod spinners;
pub mod suggest;
pub mod work;

pub use affinity::{parse_affinity, WorkerAffinity};
pub use count::{parse_count, parse_percent};
pub use cpus::{format_cpu_list, parse_cpu_list};
pub use duration::{format_nanos, parse_duration, parse_nanos, LONGEST_NS};
pub use list::{parse_axis, parse_list, List};
pub use sampling::{parse_latency_every, LatencyEvery};
pub use size::{parse_sizes, SizeStream, Sizes};
pub use spinners::{parse_spinners, SpinPolicy};
pub use work::{parse_work, Work, WorkMode};
