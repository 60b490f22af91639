//! Starting worker threads inside a scope, with an error that names the
//! system limit when the kernel refuses another thread, and joining them
//! so that a panic becomes an error, not a re-raised one.

use crate::session::limits::Limits;
use anyhow::{anyhow, Result};
use locks::gate::Gate;
use std::thread::{Builder, Scope, ScopedJoinHandle};

/// Worker stacks: the measured loop is shallow, and 1000 threads with the
/// default 2 MiB stacks would reserve 2 GiB of address space for nothing.
const WORKER_STACK: usize = 256 * 1024;

/// Spawns `n` workers running `body(index)` in `scope`. If one cannot be
/// started, the gate is aborted so the started ones return, and the error
/// says which limit was likely hit.
pub fn spawn_workers<'scope, 'env, T, F>(
    scope: &'scope Scope<'scope, 'env>,
    n: usize,
    gate: &'env Gate,
    body: F,
) -> Result<Vec<ScopedJoinHandle<'scope, T>>>
where
    T: Send + 'scope,
    F: Fn(usize) -> T + Send + Sync + Copy + 'scope,
{
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        let spawned = Builder::new()
            .name(format!("contend-w{i}"))
            .stack_size(WORKER_STACK)
            .spawn_scoped(scope, move || body(i));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                gate.abort();
                return Err(anyhow!(
                    "could not start worker thread {} of {n}: {e} ({})",
                    i + 1,
                    Limits::read().describe()
                ));
            }
        }
    }
    Ok(handles)
}

/// Joins every handle, even after one has failed, so that no panicked
/// thread is left for the scope to re-raise (which would end contend with
/// "a scoped thread panicked" and no `error:` line). Returns the values,
/// or an error naming the first panicked worker, its message, and how many
/// panicked in all.
pub fn join_all<T>(handles: Vec<ScopedJoinHandle<'_, T>>) -> Result<Vec<T>> {
    let mut values = Vec::with_capacity(handles.len());
    let mut panics = Vec::new();
    for (i, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(v) => values.push(v),
            Err(payload) => panics.push((i, panic_message(payload.as_ref()))),
        }
    }
    match panics.first() {
        None => Ok(values),
        Some((i, message)) => Err(anyhow!(
            "worker thread {i} panicked: {message}{}",
            match panics.len() {
                1 => String::new(),
                n => format!(" ({n} worker threads panicked)"),
            }
        )),
    }
}

/// A panic's message, when it has one.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
