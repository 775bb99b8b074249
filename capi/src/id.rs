//! Bundle entry IDs and target IDs.

use core::ffi::c_char;

#[cfg(feature = "alloc")]
use clangoffload::id;
use clangoffload::id::{BundleEntryId, FeatureSetting, TargetId};

use crate::bundle::{CLANGOFFLOAD_AS_BUNDLER, CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE};
#[cfg(feature = "alloc")]
use crate::ffi::{array_arg, write_text};
use crate::ffi::{clangoffload_bytes, out_arg, str_arg, write_display};
use crate::status::clangoffload_status;

/// A bundle entry ID split into its parts; every view borrows the string
/// given to `clangoffload_entry_id_parse`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_entry_id {
    /// Offload kind (`host`, `openmp`, `hip`, `hipv4`, ...).
    pub kind: clangoffload_bytes,
    /// Triple architecture.
    pub arch: clangoffload_bytes,
    /// Triple vendor.
    pub vendor: clangoffload_bytes,
    /// Triple OS.
    pub os: clangoffload_bytes,
    /// Triple environment (often empty).
    pub env: clangoffload_bytes,
    /// Target ID (empty if absent); may contain `-` and `:`.
    pub target_id: clangoffload_bytes,
    /// Whether the kind is one the bundler accepts on its command line.
    pub known_kind: bool,
    /// Whether LLVM's triple parser knows the architecture.
    pub known_arch: bool,
}

/// Splits the bundle entry ID `text` (`len` bytes of UTF-8) into
/// `<kind>-<arch>-<vendor>-<os>-<env>[-<target-id>]`.
///
/// Ownership: nothing is allocated and nothing to free; `*out` is a plain
/// record of views the caller owns.
///
/// Lifetime: every view in `*out` borrows `text`: valid while `text` stays
/// alive and unchanged.
///
/// NULL: `text` may be NULL only when `len` is 0 (an empty ID, which does not
/// parse); `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`. Pure.
///
/// # Safety
/// `text` is NULL or readable for `len` bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_entry_id_parse(
    text: *const c_char,
    len: usize,
    out: *mut clangoffload_entry_id,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for len bytes, as the caller promises.
        let id = BundleEntryId::parse(unsafe { str_arg(text, len) }?)?;
        let t = id.triple();
        let view = |s: &str| clangoffload_bytes::of(s.as_bytes());
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_entry_id {
            kind: view(id.kind()),
            arch: view(t.arch),
            vendor: view(t.vendor),
            os: view(t.os),
            env: view(t.env),
            target_id: view(id.target_id()),
            known_kind: id.has_known_kind(),
            known_arch: t.has_known_arch(),
        };
        Ok(())
    })
}

/// Writes the ID clang-offload-bundler 22 stores for the `-targets` entry
/// `text` (`len` bytes of UTF-8): triple normalised (amdhsa: empty
/// environment), target ID dropped unless clang knows its processor.
///
/// Ownership: the text is copied into the caller's `buf`; nothing to free. On
/// success `buf` holds the text and a NUL, and `*out_len` its length without
/// the NUL. When `cap` is too small (or `buf` is NULL), nothing is copied,
/// `*out_len` gets the length needed and the status is
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`: allocate `*out_len + 1` bytes and
/// call again.
///
/// NULL: `text` may be NULL only when `len` is 0; `buf` NULL asks for the
/// length; `out_len` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`. Pure.
///
/// # Safety
/// `text` is NULL or readable for `len` bytes; `buf` is NULL or writable for
/// `cap` bytes; `out_len` is NULL or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_entry_id_normalize(
    text: *const c_char,
    len: usize,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for len bytes, as the caller promises.
        let normalized = id::normalize_entry_id(unsafe { str_arg(text, len) }?)?;
        // SAFETY: buf writable for cap bytes, out_len writable, as promised.
        unsafe { write_text(normalized.as_bytes(), buf, cap, out_len) }
    })
}

/// Whether a code object stored under entry ID `code_object` may be given to a
/// request for entry ID `requested`, by the bundler's rules (see the README);
/// `flags` may hold `CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE` and
/// `CLANGOFFLOAD_AS_BUNDLER`. Either ID failing to parse is an error.
///
/// Ownership: nothing to free; `*out` is a plain value. Pure.
///
/// NULL: `code_object` and `requested` may be NULL only when their length is 0;
/// `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `code_object` and `requested` are NULL or readable for their lengths; `out`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_entry_id_is_compatible(
    code_object: *const c_char,
    code_object_len: usize,
    requested: *const c_char,
    requested_len: usize,
    flags: u32,
    out: *mut bool,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: `code_object` is NULL or readable for `code_object_len` bytes, as the caller
        // promises.
        let co = unsafe { str_arg(code_object, code_object_len) }?;
        // SAFETY: `requested` is NULL or readable for `requested_len` bytes, as the caller
        // promises.
        let req = unsafe { str_arg(requested, requested_len) }?;
        let (co, req) = (BundleEntryId::parse(co)?, BundleEntryId::parse(req)?);
        let (co, req) = if flags & CLANGOFFLOAD_AS_BUNDLER != 0 {
            as_read_by_bundler(&co, &req)?
        } else {
            (co, req)
        };
        let hip_openmp = flags & CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE != 0;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = co.is_compatible_with(&req, hip_openmp);
        Ok(())
    })
}

#[cfg(feature = "alloc")]
fn as_read_by_bundler<'a>(
    co: &BundleEntryId<'a>,
    req: &BundleEntryId<'a>,
) -> Result<(BundleEntryId<'a>, BundleEntryId<'a>), clangoffload_status> {
    Ok((id::as_read_by_bundler(co), id::as_read_by_bundler(req)))
}

/// The bundler's tables of names live in the allocating build.
#[cfg(not(feature = "alloc"))]
fn as_read_by_bundler<'a>(
    _: &BundleEntryId<'a>,
    _: &BundleEntryId<'a>,
) -> Result<(BundleEntryId<'a>, BundleEntryId<'a>), clangoffload_status> {
    Err(clangoffload_status::InvalidArgument)
}

/// Among `count` bundle entry IDs (`ids`), finds the first pair that cannot be
/// bundled together (same kind, triple and processor; a feature set in one and
/// "any" in the other) and stores their indices into `ids`, lower-sorting ID
/// first. IDs that do not parse take no part. `CLANGOFFLOAD_STATUS_NOT_FOUND`
/// if there is none.
///
/// Ownership: nothing to free; the outputs are plain numbers. Pure.
///
/// NULL: `ids` may be NULL only when `count` is 0, and an ID view's `ptr` only
/// when its `len` is 0; `out_first` or `out_second` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (`NOT_FOUND` is reported first).
///
/// # Safety
/// `ids` is NULL or readable for `count` records whose views are readable;
/// `out_first` and `out_second` are NULL or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_entry_ids_find_conflict(
    ids: *const clangoffload_bytes,
    count: usize,
    out_first: *mut usize,
    out_second: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: count readable views, as the caller promises.
        let views = unsafe { array_arg(ids, count) }?;
        let mut parsed = alloc::vec::Vec::new();
        let mut index = alloc::vec::Vec::new();
        for (i, view) in views.iter().enumerate() {
            // SAFETY: each view readable, as the caller promises.
            let bytes = unsafe { view.as_slice() }?;
            let text = core::str::from_utf8(bytes).map_err(|_| clangoffload_status::InvalidUtf8)?;
            if let Ok(id) = BundleEntryId::parse(text) {
                parsed.push(id);
                index.push(i);
            }
        }
        let (a, b) = id::find_conflicting_targets(&parsed).ok_or(clangoffload_status::NotFound)?;
        let (a, b) = (index.get(a), index.get(b));
        let (Some(&a), Some(&b)) = (a, b) else {
            return Err(clangoffload_status::NotFound);
        };
        // SAFETY: `out_first` is NULL or writable, as the caller promises.
        let first = unsafe { out_arg(out_first) }?;
        // SAFETY: `out_second` is NULL or writable, as the caller promises.
        let second = unsafe { out_arg(out_second) }?;
        *first = a;
        *second = b;
        Ok(())
    })
}

/// The setting of a target feature.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_feature {
    /// Not given ("any").
    Any = 0,
    /// `+`
    On = 1,
    /// `-`
    Off = 2,
}

impl From<FeatureSetting> for clangoffload_feature {
    fn from(s: FeatureSetting) -> Self {
        match s {
            FeatureSetting::Any => clangoffload_feature::Any,
            FeatureSetting::On => clangoffload_feature::On,
            FeatureSetting::Off => clangoffload_feature::Off,
        }
    }
}

/// A parsed AMDGPU target ID.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_target_id {
    /// Canonical processor name (static storage; aliases resolved).
    pub processor: clangoffload_bytes,
    /// The `xnack` setting.
    pub xnack: clangoffload_feature,
    /// The `sramecc` setting.
    pub sramecc: clangoffload_feature,
}

/// Parses an AMDGPU target ID (`gfx90a:sramecc+:xnack-`): a known processor or
/// alias, each feature at most once with a sign, only features the processor
/// supports.
///
/// Ownership: nothing to free; `*out` is a plain record the caller owns.
///
/// Lifetime: `out->processor` is static storage (the canonical name, not a view
/// of `text`): valid for as long as the library is loaded.
///
/// NULL: `text` may be NULL only when `len` is 0 (an empty ID, which does not
/// parse); `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`. Pure.
///
/// # Safety
/// `text` is NULL or readable for `len` bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_target_id_parse(
    text: *const c_char,
    len: usize,
    out: *mut clangoffload_target_id,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for len bytes, as the caller promises.
        let id = TargetId::parse(unsafe { str_arg(text, len) }?)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_target_id {
            processor: clangoffload_bytes::of(id.processor().as_bytes()),
            xnack: id.xnack().into(),
            sramecc: id.sramecc().into(),
        };
        Ok(())
    })
}

/// Writes the canonical form of the AMDGPU target ID `text` (`len` bytes;
/// canonical processor, features sorted: `gfx90a:sramecc+:xnack-`).
///
/// Ownership: the text is copied into the caller's `buf`; nothing to free. On
/// success `buf` holds the text and a NUL, and `*out_len` its length without
/// the NUL. When `cap` is too small (or `buf` is NULL), nothing is copied,
/// `*out_len` gets the length needed and the status is
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`: allocate `*out_len + 1` bytes and
/// call again.
///
/// NULL: `text` may be NULL only when `len` is 0; `buf` NULL asks for the
/// length; `out_len` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`. Pure.
///
/// # Safety
/// `text` is NULL or readable for `len` bytes; `buf` is NULL or writable for
/// `cap` bytes; `out_len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_target_id_canonicalize(
    text: *const c_char,
    len: usize,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for len bytes, as the caller promises.
        let id = TargetId::parse(unsafe { str_arg(text, len) }?)?;
        // SAFETY: buf writable for cap bytes, out_len writable, as promised.
        unsafe { write_display(&id.canonical(), buf, cap, out_len) }
    })
}

/// Whether code built for AMDGPU target ID `code_object` may run where
/// `requested` is asked for: same processor, and every feature the code object
/// sets is set the same way in the request ("any" accepts on and off). Either
/// ID failing to parse is an error.
///
/// Ownership: nothing to free; `*out` is a plain value. Pure.
///
/// NULL: `code_object` and `requested` may be NULL only when their length is 0;
/// `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `code_object` and `requested` are NULL or readable for their lengths; `out`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_target_id_is_compatible(
    code_object: *const c_char,
    code_object_len: usize,
    requested: *const c_char,
    requested_len: usize,
    out: *mut bool,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: `code_object` is NULL or readable for `code_object_len` bytes, as the caller
        // promises.
        let co = TargetId::parse(unsafe { str_arg(code_object, code_object_len) }?)?;
        // SAFETY: `requested` is NULL or readable for `requested_len` bytes, as the caller
        // promises.
        let req = TargetId::parse(unsafe { str_arg(requested, requested_len) }?)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = co.is_compatible_with(&req);
        Ok(())
    })
}
