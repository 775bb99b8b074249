//! What the embedded build (no `std`) takes from the program it is linked
//! into: `abort` for the panic that should never come, and with `alloc` the
//! program's allocator.
//!
//! The allocator is two functions the program defines:
//!
//! ```c
//! void *clangoffload_embedded_alloc(size_t size, size_t align); /* NULL on failure */
//! void clangoffload_embedded_free(void *ptr, size_t size, size_t align);
//! ```
//!
//! `size` is never 0 and `align` is a power of two. A failed allocation is
//! reported as `CLANGOFFLOAD_STATUS_OUT_OF_MEMORY` where the library reserves
//! memory (every size that comes from a file), and aborts elsewhere.

extern "C" {
    fn abort() -> !;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: C's abort takes nothing and does not return.
    unsafe { abort() }
}

// The precompiled `core`, `alloc` and `compiler_builtins` were built to
// unwind: their frame tables name Rust's personality routine and their
// cleanup paths call `_Unwind_Resume`, even in a `panic = "abort"` build
// where nothing unwinds. Neither is ever called; the prelinked archive keeps
// both local, so they cannot clash with the program's unwinder.

/// Never called: nothing unwinds.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

/// Never called: nothing unwinds.
#[no_mangle]
extern "C" fn _Unwind_Resume() -> ! {
    // SAFETY: C's abort takes nothing and does not return.
    unsafe { abort() }
}

#[cfg(feature = "alloc")]
mod allocator {
    use core::alloc::{GlobalAlloc, Layout};
    use core::ffi::c_void;

    extern "C" {
        fn clangoffload_embedded_alloc(size: usize, align: usize) -> *mut c_void;
        fn clangoffload_embedded_free(ptr: *mut c_void, size: usize, align: usize);
    }

    /// Forwards every allocation to the program's two functions.
    struct Program;

    // SAFETY: the program's functions keep `GlobalAlloc`'s contract, as the
    // embedded build's documentation requires of them.
    unsafe impl GlobalAlloc for Program {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: layout sizes are non-zero (GlobalAlloc's contract).
            unsafe { clangoffload_embedded_alloc(layout.size(), layout.align()) }.cast()
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` came from `alloc` with this layout.
            unsafe { clangoffload_embedded_free(ptr.cast(), layout.size(), layout.align()) }
        }
    }

    #[global_allocator]
    static PROGRAM: Program = Program;
}
