//! The examples of `tool-output-cap` are this package's targets (`cargo run --example glob`);
//! the library holds nothing of its own.
