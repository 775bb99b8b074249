//! Registration code through the C ABI (`clangoffload_wrap_*`): a safe layer
//! that hands out the translation unit's parts as slices and streams the
//! image through one buffer. Every rule is the library's.

use std::io::{self, Write};

use super::{blank_error, c, check, status_message, view, Buffer, Status};

/// The runtimes `--kind` names, as the offload kinds the library takes.
pub const KINDS: [(&str, u16); 3] = [
    ("openmp", c::CLANGOFFLOAD_ENTRY_KIND_OPENMP),
    ("hip", c::CLANGOFFLOAD_ENTRY_KIND_HIP),
    ("cuda", c::CLANGOFFLOAD_ENTRY_KIND_CUDA),
];

/// The translation unit around the image bytes.
pub struct Source {
    head: Buffer,
    tail: Buffer,
}

/// Checks that `triple` names an ELF host; the error is the library's
/// message.
pub fn check_triple(triple: &str) -> Result<(), String> {
    let mut err = blank_error();
    // SAFETY: the triple and the record are live for the call.
    let status = unsafe {
        c::clangoffload_wrap_check_triple(triple.as_ptr().cast(), triple.len(), &mut err)
    };
    check(status, &err)
}

/// What an OpenMP wrapper embeds for `data`: `None` for `data` itself (an
/// OffloadBinary), else the OffloadBinary the library packaged it in.
pub fn device_binary(kind: u16, data: &[u8]) -> Result<Option<Buffer>, String> {
    let (mut out, mut err) = (Buffer::empty(), blank_error());
    // SAFETY: data and the out-records are live for the call.
    let status = unsafe {
        c::clangoffload_wrap_device_binary(kind, data.as_ptr(), data.len(), &mut out.0, &mut err)
    };
    check(status, &err)?;
    Ok((!out.bytes().is_empty()).then_some(out))
}

impl Source {
    /// The unit that embeds `data` and registers it with the runtime of
    /// `kind` (one of [`KINDS`]) for a `triple` host, naming `input_name`.
    pub fn new(kind: u16, triple: &str, input_name: &str, data: &[u8]) -> Result<Source, String> {
        let options = c::clangoffload_wrap_options {
            kind,
            triple: view(triple.as_bytes()),
            input_name: view(input_name.as_bytes()),
        };
        let (mut head, mut tail, mut err) = (Buffer::empty(), Buffer::empty(), blank_error());
        // SAFETY: the options, their views, data and the out-records are live
        // for the call.
        let status = unsafe {
            c::clangoffload_wrap_c_source(
                &options,
                data.as_ptr(),
                data.len(),
                &mut head.0,
                &mut tail.0,
                &mut err,
            )
        };
        check(status, &err)?;
        Ok(Source { head, tail })
    }

    /// Writes the unit: the head, `data` (the image it was made for) as the
    /// array's body, the tail.
    pub fn write(&self, out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
        out.write_all(self.head.bytes())?;
        write_hex(out, data)?;
        out.write_all(self.tail.bytes())
    }
}

/// Writes `data` as the library formats an image, 64 KiB of it (about 400 KiB
/// of text) at a time through one buffer.
fn write_hex(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    const PIECE: usize = 4096 * c::CLANGOFFLOAD_WRAP_HEX_BYTES_PER_LINE;
    let mut text = Vec::new();
    for piece in data.chunks(PIECE) {
        let mut len = 0;
        // SAFETY: `piece` is `piece.len()` live bytes; NULL with capacity
        // 0 asks for the length, written to `len`.
        let asked = unsafe {
            c::clangoffload_wrap_hex(
                piece.as_ptr(),
                piece.len(),
                std::ptr::null_mut(),
                0,
                &mut len,
            )
        };
        if asked != Status::BufferTooSmall {
            return Err(io::Error::other(status_message(asked)));
        }
        text.resize(len, 0);
        // SAFETY: `piece` is live; `text` is writable for `text.len()`
        // bytes, the length asked for.
        let status = unsafe {
            c::clangoffload_wrap_hex(
                piece.as_ptr(),
                piece.len(),
                text.as_mut_ptr(),
                text.len(),
                &mut len,
            )
        };
        if status != Status::Ok {
            return Err(io::Error::other(status_message(status)));
        }
        out.write_all(&text)?;
    }
    Ok(())
}
