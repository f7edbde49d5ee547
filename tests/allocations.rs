//! The small-output path allocates nothing: counted with a global allocator of this test binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::FutureExt;
use serde_json::json;
use tool_output_cap::{ToolCall, ToolOutput, ToolOutputCapLayer, ToolOutputLimits};
use tower::{service_fn, Layer, Service};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn an_output_within_its_limit_costs_no_allocation() {
    let layer = ToolOutputCapLayer::new(ToolOutputLimits::default());
    // The tool hands over an output made before the call, so that any allocation is the layer's.
    let mut outputs: Vec<ToolOutput> = (0..3).map(|_| ToolOutput::new("src/main.rs\n")).collect();
    let tool = service_fn(move |_: ToolCall| {
        std::future::ready(Ok::<_, Infallible>(outputs.pop().unwrap_or_default()))
    });
    let mut capped = layer.layer(tool);
    let calls: Vec<ToolCall> = (0..3).map(|_| ToolCall::new("Glob", json!({}))).collect();
    let mut results = Vec::with_capacity(3);

    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for call in calls {
        results.push(capped.call(call).now_or_never());
    }
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;

    assert_eq!(allocations, 0);
    for result in results {
        assert_eq!(result.unwrap().unwrap(), ToolOutput::new("src/main.rs\n"));
    }
}
