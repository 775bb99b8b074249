//! An extraction streamed to the caller's callbacks
//! (`clangoffload_extraction_sink`): outputs' bytes as they are decoded,
//! each container's end, and, for a caller that reads back, its hash
//! checked from what it wrote.

use core::ffi::c_void;

// The stream is built with std only (core streams with libzstd); the sink's
// types are in every build.
#[cfg(feature = "std")]
use clangoffload::bundler::BundlerError;

#[cfg(feature = "std")]
use super::extraction::clangoffload_extraction;
#[cfg(feature = "std")]
use super::notify::{clangoffload_notify_fn, Notifier};
#[cfg(feature = "std")]
use super::options::fail;
#[cfg(feature = "std")]
use crate::ffi::handle_arg;
use crate::status::{clangoffload_error, clangoffload_status};

/// `clangoffload_extraction_sink.next`: the next container to extract;
/// store its index in `*container` and return true, or return false when
/// none is left. Called whenever the stream can take one more.
pub type clangoffload_extraction_next_fn =
    Option<unsafe extern "C" fn(context: *mut c_void, container: *mut usize) -> bool>;

/// `clangoffload_extraction_sink.write`: the next `len` bytes of output
/// `output` (numbered across the input, as
/// `clangoffload_extraction_output_name` numbers them), at `offset` in it:
/// every output's bytes come in order, from its start, with no gap (an
/// output with no bytes gets no call: create its file when its container
/// is done). Return 0 to go on; anything else stops that output's
/// container (nothing more is said of it: no `done`).
pub type clangoffload_extraction_write_fn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        output: usize,
        offset: u64,
        bytes: *const u8,
        len: usize,
    ) -> i32,
>;

/// `clangoffload_extraction_sink.done`: container `container` is extracted:
/// `status` is OK when every byte of its outputs was written and (unless
/// `CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK`) its hash checked; otherwise
/// `*error` says why (its whole message went to `notify` just before, as
/// `CLANGOFFLOAD_NOTE_ERROR`), and what was written of its outputs is
/// incomplete or unverified: delete it. `error` is valid during the call
/// only.
pub type clangoffload_extraction_done_fn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        container: usize,
        status: clangoffload_status,
        error: *const clangoffload_error,
    ),
>;

/// Where `clangoffload_extraction_stream` puts what it extracts: the
/// caller's callbacks, each called on the thread that called the stream,
/// with `context`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_extraction_sink {
    /// Hands out the next container.
    pub next: clangoffload_extraction_next_fn,
    /// Takes the next bytes of an output.
    pub write: clangoffload_extraction_write_fn,
    /// Hears that a container is done, or why not.
    pub done: clangoffload_extraction_done_fn,
    /// Passed to the callbacks.
    pub context: *mut c_void,
}

/// `clangoffload_extraction_stream_read_back`'s `read`: fill the `len`
/// bytes at `bytes` with output `output`'s bytes from `offset`, as
/// `write` was given them (all written before). Return 0 when filled;
/// anything else leaves the container's hash unchecked (its `done` says
/// so).
pub type clangoffload_extraction_read_fn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        output: usize,
        offset: u64,
        bytes: *mut u8,
        len: usize,
    ) -> i32,
>;

/// The sink's callbacks, called as core's stream asks.
#[cfg(feature = "std")]
struct CallbackSink {
    sink: clangoffload_extraction_sink,
    /// Reads back what was written, if the caller can.
    read: clangoffload_extraction_read_fn,
    /// Where each output has got to.
    written: alloc::collections::BTreeMap<usize, u64>,
    /// Gets each failure's whole message (`CLANGOFFLOAD_NOTE_ERROR`).
    notifier: Notifier,
}

#[cfg(feature = "std")]
impl clangoffload::extract::ExtractionSink for CallbackSink {
    fn next(&mut self) -> Option<usize> {
        let next = self.sink.next?;
        let mut container = 0usize;
        // SAFETY: the caller gave this callback and context for the call;
        // `container` is writable.
        unsafe { next(self.sink.context, &mut container) }.then_some(container)
    }

    fn write(&mut self, output: usize, bytes: &[u8]) -> core::ops::ControlFlow<()> {
        let Some(write) = self.sink.write else {
            return core::ops::ControlFlow::Break(());
        };
        let at = self.written.entry(output).or_insert(0);
        let offset = *at;
        *at = at.saturating_add(crate::ffi::len_u64(bytes.len()));
        // SAFETY: as above; the bytes are live during the call.
        match unsafe {
            write(
                self.sink.context,
                output,
                offset,
                bytes.as_ptr(),
                bytes.len(),
            )
        } {
            0 => core::ops::ControlFlow::Continue(()),
            _ => core::ops::ControlFlow::Break(()),
        }
    }

    fn done(&mut self, container: usize, result: Result<(), BundlerError>) {
        let Some(done) = self.sink.done else {
            return;
        };
        let mut record = clangoffload_error::new(clangoffload_status::Ok, 0, None, "");
        let status = match &result {
            Ok(()) => clangoffload_status::Ok,
            // SAFETY: `record` is writable.
            Err(e) => unsafe { fail(e, &self.notifier, &mut record) },
        };
        // SAFETY: as above; the record is live during the call.
        unsafe { done(self.sink.context, container, status, &record) }
    }

    fn reads_back(&self) -> bool {
        self.read.is_some()
    }

    fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool {
        let Some(read) = self.read else {
            return false;
        };
        // SAFETY: as above; the bytes are writable during the call.
        unsafe {
            read(
                self.sink.context,
                output,
                offset,
                bytes.as_mut_ptr(),
                bytes.len(),
            ) == 0
        }
    }
}

/// Extracts the containers `sink->next` asks for, handing their outputs'
/// bytes to `sink->write` as they are decoded and saying when each
/// container is done: up to `lanes` compressed bundles (1 to 4) are
/// decoded side by side on the calling thread, a step of each in turn,
/// their hashes computed together (MD5 in SIMD lanes: 4 cost about what
/// 1.5 cost one after the other), and each is written as it is decoded.
/// Each bundle in flight is held whole until it ends (a zstd frame may
/// refer back to any byte it made), in a buffer the next one reuses:
/// memory is `lanes` times the largest bundle per calling thread. The
/// bytes are those `clangoffload_extraction_plan` plans.
/// Several threads may stream one extraction at once, each with its own
/// sink (each `next` handing out different containers): that is how the
/// `clangoffload` tool uses every core. Warnings go to `notify`. A caller
/// that can read back what it wrote does better with
/// `clangoffload_extraction_stream_read_back`.
///
/// Returns OK once `next` has no more (a container's failure is its
/// `done`), or an error for a bad argument.
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` and `sink` must not be NULL, nor `sink->next`,
/// `sink->write`, `sink->done`; `notify` may be NULL.
///
/// # Safety
/// `extraction` must be a live extraction (its input still readable);
/// `sink` readable, its callbacks callable with its context during the
/// call; `notify`, if set, callable with `context`.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_stream(
    extraction: *const clangoffload_extraction,
    lanes: usize,
    sink: *const clangoffload_extraction_sink,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe { stream(extraction, lanes, sink, None, notify, context) }
}

/// `clangoffload_extraction_stream` for a caller that can read back what
/// `sink->write` was given (files it wrote): each compressed bundle is
/// decoded alone on the calling thread, so that only one is held at a
/// time, and its hash is checked once it is decoded, from its outputs
/// read back through `read` (and the few bytes between them, kept), with
/// those of up to `lanes` (1 to 8; 8 fill AVX-512's 256-bit vectors, 4
/// SSE2's) bundles side by side in MD5's SIMD lanes. A container's `done` comes once its hash is checked: what it
/// wrote is unverified until then. Without hash checking
/// (`CLANGOFFLOAD_SKIP_HASH_CHECK`), `read` is never called. The same
/// outputs, bytes and errors as `clangoffload_extraction_stream`, in half
/// the memory or less, and faster (benches/README.md); an output that
/// cannot be read back leaves its container's hash unchecked: that
/// container's `done` is an error naming it.
///
/// Returns OK once `next` has no more (a container's failure is its
/// `done`), or an error for a bad argument.
///
/// Ownership: nothing to free.
///
/// NULL: `extraction`, `sink` and `read` must not be NULL, nor
/// `sink->next`, `sink->write`, `sink->done`; `notify` may be NULL.
///
/// # Safety
/// As `clangoffload_extraction_stream`; `read` callable with
/// `sink->context` during the call.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_stream_read_back(
    extraction: *const clangoffload_extraction,
    lanes: usize,
    sink: *const clangoffload_extraction_sink,
    read: clangoffload_extraction_read_fn,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
) -> clangoffload_status {
    if read.is_none() {
        return clangoffload_status::NullArgument;
    }
    // SAFETY: forwarded to the caller.
    unsafe { stream(extraction, lanes, sink, read, notify, context) }
}

/// Both streams: `read` set when the caller reads back.
///
/// # Safety
/// As the public functions say.
#[cfg(feature = "std")]
unsafe fn stream(
    extraction: *const clangoffload_extraction,
    lanes: usize,
    sink: *const clangoffload_extraction_sink,
    read: clangoffload_extraction_read_fn,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let extraction = unsafe { handle_arg(extraction) }?;
        // SAFETY: readable, as the caller promises.
        let sink = *unsafe { handle_arg(sink) }?;
        if sink.next.is_none() || sink.write.is_none() || sink.done.is_none() {
            return Err(clangoffload_status::NullArgument);
        }
        // Bundles decoded side by side: 4 at most; hashed side by side
        // from what is read back: 8.
        let most = if read.is_some() { 8 } else { 4 };
        if !(1..=most).contains(&lanes) {
            return Err(clangoffload_status::InvalidArgument);
        }
        let name = extraction.input_name.clone();
        let mut notifier = Notifier::new(notify, context, name.clone(), extraction.flags);
        let mut callbacks = CallbackSink {
            sink,
            read,
            written: alloc::collections::BTreeMap::new(),
            notifier: Notifier::new(notify, context, name, extraction.flags),
        };
        extraction
            .extraction
            .stream(lanes, &mut callbacks, &mut notifier);
        Ok(())
    })
}
