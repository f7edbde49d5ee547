//! Giving a large result's memory back to the system once it is relayed.

/// The size from which glibc's malloc serves each block from a mapping of its own, given back
/// to the system when the block is freed: 256 KiB, so that the gateway's 1 MB bodies, read by
/// many connections at once, leave no heap behind (`cargo bench --bench gateway -- load`: the
/// peak over the bodies in flight went from 1.93 to 1.57 times with it, from 1 MiB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 256 << 10;

/// Fixes the size from which blocks get mappings of their own at [`MMAP_THRESHOLD`].
///
/// By default glibc raises that size to the size of each such block freed, up to 32 MiB, so that
/// after one large result the next ones are served from the heap, which a process keeps: a proxy
/// capping a 9.5 MB result six times grew from 55 MB to 100 MB. With the size fixed, each
/// result's memory goes back when it is relayed, and every call peaks as the first does. Other
/// allocators (musl's, macOS's) give large blocks back by themselves.
pub(crate) fn give_large_blocks_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets one of the allocator's parameters, under the allocator's own lock; it
    // touches no memory of ours and is sound to call at any time, from any thread.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
